import type { CredentialFormats } from '../../carrier-credentials.js';

/**
 * A Telnyx (TeXML) connection's fields: the account (user) id, a UUID, as TeXML's
 * `/texml/Accounts/{account_sid}` takes it; an API key (`KEY…`); the account's Ed25519 public key as
 * Mission Control shows it (32 bytes, base64); the TeXML Application's id, which InitiateTexmlCall
 * requires as `ApplicationSid`.
 */
export const telnyxCredentials: CredentialFormats = {
  accountSid: {
    pattern: /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/,
    message: 'accountSid must be a Telnyx account id (TeXML’s AccountSid): a UUID in lowercase',
    label: 'Account id',
    hint: 'The account id (TeXML’s AccountSid), a UUID',
  },
  authToken: {
    pattern: /^KEY[A-Za-z0-9_-]{16,250}$/,
    message: 'authToken must be a Telnyx API key: KEY followed by 16 to 250 letters, digits, _ or -',
    label: 'API key',
    hint: 'KEY…; checked with Telnyx, then kept sealed; only its last four characters are shown',
    secret: true,
  },
  publicKey: {
    // 32 bytes in canonical base64: 43 characters, the last of them leaving no stray bits, then `=`.
    pattern: /^[A-Za-z0-9+/]{42}[AEIMQUYcgkosw048]=$/,
    message: 'publicKey must be the Telnyx account’s public key as Mission Control shows it: 32 bytes, base64 (44 characters)',
    label: 'Public key',
    hint: 'Mission Control → Keys & Credentials → Public Key: it signs the webhooks',
  },
  applicationId: {
    pattern: /^[A-Za-z0-9_-]{1,64}$/,
    message: 'applicationId must be the id of a Telnyx TeXML Application: 1 to 64 letters, digits, _ or -',
    label: 'TeXML application id',
    hint: 'The application the calls are placed with',
  },
};
