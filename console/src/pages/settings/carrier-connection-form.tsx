import { useState, type FormEvent } from 'react';
import {
  CreateCarrierConnectionDocument,
  UpdateCarrierConnectionDocument,
  type CarrierConnectionRowFragment,
  type CarrierFormFragment,
  type CarrierKind,
} from '../../api/generated';
import { useMutation } from '../../api/hooks';
import { FormError, SelectField, TextField } from '../../components/forms';

/** The fields whose errors are shown beside them (the others in the form's list). */
const SHOWN = ['carrier', 'name', 'callsPerSecond', 'accountSid', 'authToken', 'publicKey', 'applicationId', 'webhookKey'];
type Field = CarrierFormFragment['connectionFields'][number];
type Values = Record<string, string>;

function callsPerSecondOf(text: string): number | undefined {
  return text.trim() === '' ? undefined : Number(text);
}

/** What the connection row shows of a field: its value, or a secret's last four characters (null: none set). */
function shownOf(connection: CarrierConnectionRowFragment, name: string): string | null {
  const row: Record<string, unknown> = connection;
  const value = row[name];
  return typeof value === 'string' ? value : null;
}

/**
 * A new carrier connection, in the form the carrier's module declares (the `carriers` query: each
 * field's label, hint, whether it is secret and whether it is required), so a carrier added to the
 * gateway has its form here with nothing written for it. The carrier checks the credentials before
 * the API keeps them; secrets are write-only: emptied once sent, and the API shows only their last 4.
 */
export function NewConnection({ carriers, onCreated }: { carriers: CarrierFormFragment[]; onCreated: () => void }) {
  const [kind, setKind] = useState<CarrierKind>(carriers.find((carrier) => carrier.kind === 'twilio')?.kind ?? carriers[0]?.kind ?? 'twilio');
  const [name, setName] = useState('');
  const [values, setValues] = useState<Values>({});
  const [callsPerSecond, setCallsPerSecond] = useState('');
  const create = useMutation(CreateCarrierConnectionDocument);
  const carrier = carriers.find((candidate) => candidate.kind === kind);
  const fields = carrier?.connectionFields ?? [];
  const set = (field: string) => (value: string) => setValues((current) => ({ ...current, [field]: value }));
  const submit = async (event: FormEvent) => {
    event.preventDefault();
    // A required field goes as typed (the API names one left empty); an optional one only when filled.
    const credentials = Object.fromEntries(fields.flatMap((field) => (field.required || values[field.name] ? [[field.name, values[field.name] ?? '']] : [])));
    const input = { carrier: kind, name, callsPerSecond: callsPerSecondOf(callsPerSecond), ...credentials } as Parameters<typeof create.run>[0]['input'];
    const done = await create.run({ input });
    // The secrets leave the page whatever the answer: typed again if refused, never kept.
    const secrets = new Set(fields.filter((field) => field.secret).map((field) => field.name));
    setValues((current) => Object.fromEntries(Object.entries(current).filter(([field]) => !done && !secrets.has(field))));
    if (done) {
      setName('');
      setCallsPerSecond('');
      onCreated();
    }
  };
  return (
    <form className="inline-form" onSubmit={(event) => void submit(event)} noValidate aria-label="New carrier connection">
      <SelectField
        label="Carrier"
        field="carrier"
        value={kind}
        onChange={(value) => setKind(value as CarrierKind)}
        options={carriers.map((candidate) => ({ value: candidate.kind, label: candidate.label }))}
        error={create.error}
      />
      <TextField label="Name" field="name" value={name} onChange={setName} error={create.error} required />
      {fields.map((field) => (
        <TextField
          key={`${kind}-${field.name}`}
          label={field.required ? field.label : `${field.label} (optional)`}
          field={field.name}
          type={field.secret ? 'password' : undefined}
          value={values[field.name] ?? ''}
          onChange={set(field.name)}
          error={create.error}
          hint={field.hint}
          required={field.required}
        />
      ))}
      <TextField
        label="Calls a second"
        field="callsPerSecond"
        value={callsPerSecond}
        onChange={setCallsPerSecond}
        error={create.error}
        inputMode="numeric"
        hint="1 to 100; empty: 1"
      />
      <FormError error={create.error} shown={SHOWN} />
      <button type="submit" className="primary" disabled={create.pending}>
        Add connection
      </button>
    </form>
  );
}

/** "Auth token" → "auth token", "API key" stays. */
const lowerFirst = (label: string) => (/^[A-Z][a-z]/.test(label) ? label.charAt(0).toLowerCase() + label.slice(1) : label);

/** A field of the edit form: a secret is typed anew (empty keeps it); another field is changed in place. The account itself is not changed. */
function editable(field: Field): boolean {
  return field.name !== 'accountSid';
}

/**
 * A connection's changes: its name, a new secret for the same account (a new token is checked with
 * the carrier first), its other fields as its carrier's form lists them, and its rate.
 */
export function EditConnection({
  connection,
  carrier,
  onDone,
}: {
  connection: CarrierConnectionRowFragment;
  carrier: CarrierFormFragment | undefined;
  onDone: (savedName: string | null) => void;
}) {
  const fields = (carrier?.connectionFields ?? []).filter(editable);
  const [name, setName] = useState(connection.name);
  const [values, setValues] = useState<Values>(() =>
    Object.fromEntries(fields.filter((field) => !field.secret).map((field) => [field.name, shownOf(connection, field.name) ?? ''])),
  );
  const [callsPerSecond, setCallsPerSecond] = useState(String(connection.callsPerSecond));
  const update = useMutation(UpdateCarrierConnectionDocument);
  const set = (field: string) => (value: string) => setValues((current) => ({ ...current, [field]: value }));
  const submit = async (event: FormEvent) => {
    event.preventDefault();
    // A secret only when typed; another field as it stands.
    const changes = Object.fromEntries(fields.flatMap((field) => (field.secret && !values[field.name] ? [] : [[field.name, values[field.name] ?? '']])));
    const input = { name, callsPerSecond: callsPerSecondOf(callsPerSecond), ...changes } as Parameters<typeof update.run>[0]['input'];
    const done = await update.run({ id: connection.id, input });
    setValues((current) => Object.fromEntries(Object.entries(current).filter(([field]) => !fields.some((known) => known.name === field && known.secret))));
    if (done) onDone(done.updateCarrierConnection.name);
  };
  return (
    <form className="inline-form" onSubmit={(event) => void submit(event)} noValidate aria-label={`Change the connection ${connection.name}`}>
      <TextField label="Name" field="name" value={name} onChange={setName} error={update.error} required />
      {fields.map((field) => {
        if (!field.secret)
          return (
            <TextField
              key={field.name}
              label={field.label}
              field={field.name}
              value={values[field.name] ?? ''}
              onChange={set(field.name)}
              error={update.error}
            />
          );
        const last4 = shownOf(connection, `${field.name}Last4`);
        return (
          <TextField
            key={field.name}
            label={`New ${lowerFirst(field.label)}`}
            field={field.name}
            type="password"
            value={values[field.name] ?? ''}
            onChange={set(field.name)}
            error={update.error}
            hint={last4 ? `Now …${last4}; empty keeps it` : `None yet: ${field.hint}`}
          />
        );
      })}
      <TextField label="Calls a second" field="callsPerSecond" value={callsPerSecond} onChange={setCallsPerSecond} error={update.error} inputMode="numeric" />
      <FormError error={update.error} shown={SHOWN} />
      <div className="actions">
        <button type="submit" className="primary" disabled={update.pending}>
          Save the connection
        </button>
        <button type="button" onClick={() => onDone(null)}>
          Cancel
        </button>
      </div>
    </form>
  );
}
