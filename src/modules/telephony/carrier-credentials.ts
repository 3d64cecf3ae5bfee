import { registerDecorator, type ValidationArguments } from 'class-validator';
import { CarrierKind } from './telephony.enums.js';

/** A connection field's format at one carrier, and what a value that breaks it is told. */
interface FieldFormat {
  pattern: RegExp;
  message: string;
}

export type CredentialField = 'accountSid' | 'authToken' | 'publicKey' | 'applicationId';

/**
 * Each carrier's formats for the fields of a connection; a field a carrier does not list is not
 * taken for it. Twilio: AC + 32 hex digits, a 32-hex-digit auth token. Telnyx (TeXML): the account
 * (user) id, a UUID, as TeXML's `/texml/Accounts/{account_sid}` takes it; an API key (`KEY…`); the
 * account's Ed25519 public key as Mission Control shows it (32 bytes, base64); the TeXML
 * Application's id, which InitiateTexmlCall requires as `ApplicationSid`.
 */
export const CARRIER_FIELD_FORMATS: Record<CarrierKind, Partial<Record<CredentialField, FieldFormat>>> = {
  [CarrierKind.twilio]: {
    accountSid: {
      pattern: /^AC[0-9a-f]{32}$/,
      message: 'accountSid must be a Twilio account SID: AC followed by 32 hexadecimal digits (lowercase)',
    },
    authToken: { pattern: /^[0-9a-f]{32}$/, message: 'authToken must be a Twilio auth token: 32 hexadecimal digits (lowercase)' },
  },
  [CarrierKind.telnyx]: {
    accountSid: {
      pattern: /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/,
      message: 'accountSid must be a Telnyx account id (TeXML’s AccountSid): a UUID in lowercase',
    },
    authToken: {
      pattern: /^KEY[A-Za-z0-9_-]{16,250}$/,
      message: 'authToken must be a Telnyx API key: KEY followed by 16 to 250 letters, digits, _ or -',
    },
    publicKey: {
      // 32 bytes in canonical base64: 43 characters, the last of them leaving no stray bits, then `=`.
      pattern: /^[A-Za-z0-9+/]{42}[AEIMQUYcgkosw048]=$/,
      message: 'publicKey must be the Telnyx account’s public key as Mission Control shows it: 32 bytes, base64 (44 characters)',
    },
    applicationId: {
      pattern: /^[A-Za-z0-9_-]{1,64}$/,
      message: 'applicationId must be the id of a Telnyx TeXML Application: 1 to 64 letters, digits, _ or -',
    },
  },
};

/** The carrier a create input names (default twilio). */
const carrierOf = (object: object): CarrierKind => {
  const carrier = (object as { carrier?: unknown }).carrier;
  return typeof carrier === 'string' && carrier in CARRIER_FIELD_FORMATS ? (carrier as CarrierKind) : CarrierKind.twilio;
};

/**
 * A create input's field in the format of the carrier it names: required when the carrier lists it,
 * refused when it does not (`publicKey` on a Twilio connection). Updates check against the
 * connection's own carrier in the service (`carrierFieldErrors`).
 */
export function MatchesCarrierFormat(field: CredentialField): PropertyDecorator {
  return (target, property) =>
    registerDecorator({
      name: 'matchesCarrierFormat',
      target: target.constructor,
      propertyName: String(property),
      validator: {
        validate: (value: unknown, args: ValidationArguments) => fieldProblem(carrierOf(args.object), field, value) === null,
        defaultMessage: (args: ValidationArguments) => fieldProblem(carrierOf(args.object), field, args.value) ?? '',
      },
    });
}

/** Why a value of a field is not the carrier's (null: it is, or it is absent where the carrier takes none). */
export function fieldProblem(carrier: CarrierKind, field: CredentialField, value: unknown): string | null {
  const format = CARRIER_FIELD_FORMATS[carrier][field];
  if (!format) return value === undefined || value === null ? null : `${field} is not a field of a ${carrier} connection`;
  return typeof value === 'string' && format.pattern.test(value) ? null : format.message;
}

/** The field errors of an update's fields against the connection's carrier (those sent only). */
export function carrierFieldErrors(carrier: CarrierKind, fields: Partial<Record<CredentialField, unknown>>): { field: string; message: string }[] {
  return (Object.entries(fields) as [CredentialField, unknown][])
    .filter(([, value]) => value !== undefined)
    .map(([field, value]) => ({ field, message: fieldProblem(carrier, field, value) }))
    .filter((error): error is { field: CredentialField; message: string } => error.message !== null);
}
