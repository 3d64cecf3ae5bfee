import type { FieldError } from '../../common/errors.js';
import type { CarrierKind } from './telephony.enums.js';

/**
 * A connection field at one carrier: its format and what a value that breaks it is told, and how a
 * form shows it (the `carriers` query and `GET /api/carriers` answer these, so the console's form of
 * a carrier is its module's, not a copy).
 */
export interface FieldFormat {
  pattern: RegExp;
  message: string;
  /** What a form calls it at this carrier ("Account SID", "API key"). */
  label: string;
  /** One line on where it is found or what it looks like. */
  hint: string;
  /** Write-only: sealed under CREDENTIALS_KEY, never shown again (only its last 4 characters). */
  secret?: boolean;
  /** A connection may go without it (absent, or null on an update, removes it). */
  optional?: boolean;
}

export type CredentialField = 'accountSid' | 'authToken' | 'publicKey' | 'applicationId' | 'webhookKey';
/** A connection's credential fields, in the order their errors are told and a form shows them. */
export const CREDENTIAL_FIELDS: CredentialField[] = ['accountSid', 'authToken', 'publicKey', 'applicationId', 'webhookKey'];

/**
 * The fields a carrier's connection takes, each in its format (its module's `credentials`): every
 * carrier takes an account id and a secret (sealed, write-only); a field it does not list is refused.
 */
export type CredentialFormats = { accountSid: FieldFormat; authToken: FieldFormat } & Partial<Record<CredentialField, FieldFormat>>;

/** What the checks read of a carrier: its kind (for the messages) and its formats. */
interface CarrierForms {
  kind: CarrierKind;
  credentials: CredentialFormats;
}

/** Why a value of a field is not the carrier's (null: it is, or it is absent where the carrier takes none). */
export function fieldProblem(carrier: CarrierForms, field: CredentialField, value: unknown): string | null {
  const format = carrier.credentials[field];
  if (!format) return value === undefined || value === null ? null : `${field} is not a field of a ${carrier.kind} connection`;
  if (format.optional && (value === undefined || value === null)) return null;
  return typeof value === 'string' && format.pattern.test(value) ? null : format.message;
}

/** A new connection's field errors: each field the carrier lists is required in its format, each other one refused. */
export function connectionFieldErrors(carrier: CarrierForms, fields: Partial<Record<CredentialField, unknown>>): FieldError[] {
  return CREDENTIAL_FIELDS.flatMap((field) => {
    const message = fieldProblem(carrier, field, fields[field]);
    return message === null ? [] : [{ field, message }];
  });
}

/** The field errors of an update's fields against the connection's carrier (those sent only). */
export function carrierFieldErrors(carrier: CarrierForms, fields: Partial<Record<CredentialField, unknown>>): FieldError[] {
  return CREDENTIAL_FIELDS.flatMap((field) => {
    const message = fields[field] === undefined ? null : fieldProblem(carrier, field, fields[field]);
    return message === null ? [] : [{ field, message }];
  });
}

/** A carrier's connection fields as a form shows them: each one its module lists, in CREDENTIAL_FIELDS' order. */
export function connectionFieldsOf(
  credentials: CredentialFormats,
): { name: CredentialField; label: string; hint: string; secret: boolean; required: boolean }[] {
  return CREDENTIAL_FIELDS.flatMap((name) => {
    const format = credentials[name];
    return format ? [{ name, label: format.label, hint: format.hint, secret: format.secret ?? false, required: !format.optional }] : [];
  });
}
