import type { CredentialFormats } from '../../carrier-credentials.js';

/** A Twilio connection's fields: the account SID (AC + 32 hex digits) and its 32-hex-digit auth token. */
export const twilioCredentials: CredentialFormats = {
  accountSid: {
    pattern: /^AC[0-9a-f]{32}$/,
    message: 'accountSid must be a Twilio account SID: AC followed by 32 hexadecimal digits (lowercase)',
  },
  authToken: { pattern: /^[0-9a-f]{32}$/, message: 'authToken must be a Twilio auth token: 32 hexadecimal digits (lowercase)' },
};
