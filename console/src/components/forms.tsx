import { useId, type ReactNode } from 'react';
import type { ApiError } from '../api/client';

interface FieldProps {
  label: string;
  /** The API's name for the field (`name`, `modelConfig.model`, …): its error, when it names it, is shown here. */
  field: string;
  error: ApiError | null;
  hint?: string;
}

function useFieldIds(field: string) {
  const base = useId();
  return { id: `${base}-${field.replace(/[^\w-]/g, '-')}`, hint: `${base}-hint`, error: `${base}-error` };
}

function FieldFrame({
  label,
  field,
  error,
  hint,
  children,
}: FieldProps & { children: (props: { id: string; 'aria-describedby'?: string; 'aria-invalid'?: boolean }) => ReactNode }) {
  const ids = useFieldIds(field);
  const message = error?.forField(field);
  const described = [hint ? ids.hint : null, message ? ids.error : null].filter(Boolean).join(' ') || undefined;
  return (
    <div className={`field${message ? ' field-invalid' : ''}`}>
      <label htmlFor={ids.id}>{label}</label>
      {children({ id: ids.id, 'aria-describedby': described, 'aria-invalid': message ? true : undefined })}
      {hint ? (
        <p className="hint" id={ids.hint}>
          {hint}
        </p>
      ) : null}
      {message ? (
        <p className="field-error" id={ids.error} data-field={field}>
          {message}
        </p>
      ) : null}
    </div>
  );
}

export function TextField(
  props: FieldProps & {
    value: string;
    onChange: (value: string) => void;
    type?: string;
    required?: boolean;
    autoComplete?: string;
    placeholder?: string;
    inputMode?: 'numeric' | 'decimal' | 'tel' | 'text';
  },
) {
  const { value, onChange, type = 'text', required, autoComplete, placeholder, inputMode, ...frame } = props;
  return (
    <FieldFrame {...frame}>
      {(aria) => (
        <input
          {...aria}
          name={frame.field}
          type={type}
          value={value}
          required={required}
          autoComplete={autoComplete ?? 'off'}
          placeholder={placeholder}
          inputMode={inputMode}
          onChange={(event) => onChange(event.target.value)}
        />
      )}
    </FieldFrame>
  );
}

export function TextArea(props: FieldProps & { value: string; onChange: (value: string) => void; rows?: number; required?: boolean }) {
  const { value, onChange, rows = 4, required, ...frame } = props;
  return (
    <FieldFrame {...frame}>
      {(aria) => <textarea {...aria} name={frame.field} rows={rows} value={value} required={required} onChange={(event) => onChange(event.target.value)} />}
    </FieldFrame>
  );
}

/** A header's name and its secret value, as a form holds them (both empty: none typed). */
export interface SecretHeader {
  name: string;
  value: string;
}

export const NO_SECRET_HEADER: SecretHeader = { name: '', value: '' };

/** The header to send, or undefined when neither field was filled in (the saved one is then kept). */
export function secretHeaderToSend(header: SecretHeader): SecretHeader | undefined {
  return header.name.trim() === '' && header.value === '' ? undefined : header;
}

/** The API's names of a secret header's two fields (`headers.0` → `headers.0.name`, `headers.0.value`), for FormError's `shown`. */
export function secretHeaderFields(field: string): string[] {
  return [`${field}.name`, `${field}.value`];
}

/**
 * A write-only header: its name, and its value typed as a password. The value is never had back from
 * the API (it is sealed when saved), so the field starts empty; what is sent now is named in the hint
 * (`sent`), and a header typed here replaces it or them (`replaces`). `field` is the API's name of the
 * header (`headers.0`, `auth`): its errors are shown beside the name and the value.
 */
export function SecretHeaderField(props: {
  field: string;
  nameLabel: string;
  valueLabel: string;
  header: SecretHeader;
  onChange: (header: SecretHeader) => void;
  error: ApiError | null;
  /** The header names sent now (none: `emptyHint` is shown instead). */
  sent: readonly string[];
  replaces: 'it' | 'them';
  emptyHint: string;
}) {
  const { field, nameLabel, valueLabel, header, onChange, error, sent, replaces, emptyHint } = props;
  return (
    <>
      <TextField
        label={nameLabel}
        field={`${field}.name`}
        value={header.name}
        onChange={(name) => onChange({ ...header, name })}
        error={error}
        hint={sent.length > 0 ? `It sends ${sent.join(', ')}; a header here replaces ${replaces}` : emptyHint}
      />
      <TextField
        label={valueLabel}
        field={`${field}.value`}
        type="password"
        value={header.value}
        onChange={(value) => onChange({ ...header, value })}
        error={error}
        hint="Sealed when saved and never shown again"
      />
    </>
  );
}

export function SelectField(props: FieldProps & { value: string; onChange: (value: string) => void; options: { value: string; label: string }[] }) {
  const { value, onChange, options, ...frame } = props;
  return (
    <FieldFrame {...frame}>
      {(aria) => (
        <select {...aria} name={frame.field} value={value} onChange={(event) => onChange(event.target.value)}>
          {options.map((option) => (
            <option key={option.value} value={option.value}>
              {option.label}
            </option>
          ))}
        </select>
      )}
    </FieldFrame>
  );
}

export function CheckboxField(props: FieldProps & { checked: boolean; onChange: (checked: boolean) => void }) {
  const { checked, onChange, ...frame } = props;
  const ids = useFieldIds(frame.field);
  const message = frame.error?.forField(frame.field);
  return (
    <div className={`field field-checkbox${message ? ' field-invalid' : ''}`}>
      <input
        id={ids.id}
        type="checkbox"
        name={frame.field}
        checked={checked}
        aria-describedby={message ? ids.error : undefined}
        aria-invalid={message ? true : undefined}
        onChange={(event) => onChange(event.target.checked)}
      />
      <label htmlFor={ids.id}>{frame.label}</label>
      {message ? (
        <p className="field-error" id={ids.error} data-field={frame.field}>
          {message}
        </p>
      ) : null}
    </div>
  );
}

/**
 * The API's refusal as it came: its message, its code, and every field error no field of the form
 * shows (`shown` lists the ones it does), so nothing the API said is lost.
 */
export function FormError({ error, shown = [] }: { error: ApiError | null; shown?: string[] }) {
  if (!error) return null;
  const others = error.fieldErrors.filter((fieldError) => !shown.includes(fieldError.field));
  return (
    <div className="form-error" role="alert" data-code={error.code}>
      <p>
        <strong>{error.message}</strong> <span className="code">({error.code})</span>
      </p>
      {others.length > 0 ? (
        <ul>
          {others.map((fieldError) => (
            <li key={`${fieldError.field}:${fieldError.message}`}>
              <code>{fieldError.field}</code>: {fieldError.message}
            </li>
          ))}
        </ul>
      ) : null}
    </div>
  );
}
