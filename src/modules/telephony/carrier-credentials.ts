import type { FieldError } from '../../common/errors.js';
import type { CarrierKind } from './telephony.enums.js';

/** A connection field's format at one carrier, and what a value that breaks it is told. */
export interface FieldFormat {
  pattern: RegExp;
  message: string;
}

export type CredentialField = 'accountSid' | 'authToken' | 'publicKey' | 'applicationId';
/** A connection's credential fields, in the order their errors are told. */
const CREDENTIAL_FIELDS: CredentialField[] = ['accountSid', 'authToken', 'publicKey', 'applicationId'];

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
