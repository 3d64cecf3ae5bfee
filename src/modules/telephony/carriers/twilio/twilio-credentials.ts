import type { CredentialFormats } from '../../carrier-credentials.js';

/**
 * A Twilio connection's fields: the account SID (AC + 32 hex digits), its 32-hex-digit auth token,
 * and, for an account whose webhooks a Webhooks Rule signs, that rule's SharedKey secret.
 */
export const twilioCredentials: CredentialFormats = {
  accountSid: {
    pattern: /^AC[0-9a-f]{32}$/,
    message: 'accountSid must be a Twilio account SID: AC followed by 32 hexadecimal digits (lowercase)',
    label: 'Account SID',
    hint: 'AC followed by 32 hexadecimal digits (Console → Account info)',
  },
  authToken: {
    pattern: /^[0-9a-f]{32}$/,
    message: 'authToken must be a Twilio auth token: 32 hexadecimal digits (lowercase)',
    label: 'Auth token',
    hint: '32 hexadecimal digits; checked with Twilio, then kept sealed; only its last four characters are shown',
    secret: true,
  },
  webhookKey: {
    // The input's own bounds (16 to 256 characters) say the length; Twilio publishes no alphabet for the key.
    pattern: /^[\s\S]{16,256}$/,
    message: 'webhookKey must be the SharedKey secret of a Twilio Webhooks Rule: 16 to 256 characters',
    label: 'Webhook key',
    hint: 'Only if a Twilio Webhooks Rule signs the account’s webhooks: its SharedKey secret',
    secret: true,
    optional: true,
  },
};
