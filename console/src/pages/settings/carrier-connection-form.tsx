import { useState, type FormEvent } from 'react';
import { CreateCarrierConnectionDocument, UpdateCarrierConnectionDocument, type CarrierConnectionRowFragment, type CarrierKind } from '../../api/generated';
import { useMutation } from '../../api/hooks';
import { FormError, SelectField, TextField } from '../../components/forms';

const CARRIERS = [
  { value: 'twilio', label: 'Twilio' },
  { value: 'telnyx', label: 'Telnyx (TeXML)' },
];
const FIELDS = ['carrier', 'name', 'accountSid', 'authToken', 'callsPerSecond', 'webhookKey', 'publicKey', 'applicationId'];

function callsPerSecondOf(text: string): number | undefined {
  return text.trim() === '' ? undefined : Number(text);
}

/**
 * A new carrier connection: Twilio (account SID, auth token, a Webhooks Rule's key if its webhooks are
 * signed with one) or Telnyx (account id, API key, the public key that signs its webhooks, the TeXML
 * application). The carrier checks the credentials before the API keeps them; the token, API key and
 * webhook key are write-only: the fields are emptied once sent, and the API shows only their last 4.
 */
export function NewConnection({ onCreated }: { onCreated: () => void }) {
  const [carrier, setCarrier] = useState<CarrierKind>('twilio');
  const [name, setName] = useState('');
  const [accountSid, setAccountSid] = useState('');
  const [authToken, setAuthToken] = useState('');
  const [webhookKey, setWebhookKey] = useState('');
  const [publicKey, setPublicKey] = useState('');
  const [applicationId, setApplicationId] = useState('');
  const [callsPerSecond, setCallsPerSecond] = useState('');
  const create = useMutation(CreateCarrierConnectionDocument);
  const telnyx = carrier === 'telnyx';
  const submit = async (event: FormEvent) => {
    event.preventDefault();
    const input = {
      carrier,
      name,
      accountSid,
      authToken,
      callsPerSecond: callsPerSecondOf(callsPerSecond),
      ...(telnyx ? { publicKey, applicationId } : { webhookKey: webhookKey || undefined }),
    };
    const done = await create.run({ input });
    // The secrets leave the page whatever the answer: typed again if refused, never kept.
    setAuthToken('');
    setWebhookKey('');
    if (done) {
      setName('');
      setAccountSid('');
      setPublicKey('');
      setApplicationId('');
      setCallsPerSecond('');
      onCreated();
    }
  };
  return (
    <form className="inline-form" onSubmit={(event) => void submit(event)} noValidate aria-label="New carrier connection">
      <SelectField
        label="Carrier"
        field="carrier"
        value={carrier}
        onChange={(value) => setCarrier(value as CarrierKind)}
        options={CARRIERS}
        error={create.error}
      />
      <TextField label="Name" field="name" value={name} onChange={setName} error={create.error} required />
      <TextField
        label={telnyx ? 'Account id' : 'Account SID'}
        field="accountSid"
        value={accountSid}
        onChange={setAccountSid}
        error={create.error}
        hint={telnyx ? 'The account id (TeXML’s AccountSid), a UUID' : 'AC followed by 32 hexadecimal digits'}
        required
      />
      <TextField
        label={telnyx ? 'API key' : 'Auth token'}
        field="authToken"
        type="password"
        value={authToken}
        onChange={setAuthToken}
        error={create.error}
        hint="Checked with the carrier, then kept sealed; only its last four characters are shown"
        required
      />
      {telnyx ? (
        <>
          <TextField
            label="Public key"
            field="publicKey"
            value={publicKey}
            onChange={setPublicKey}
            error={create.error}
            hint="Mission Control → Keys & Credentials → Public Key: it signs the webhooks"
            required
          />
          <TextField
            label="TeXML application id"
            field="applicationId"
            value={applicationId}
            onChange={setApplicationId}
            error={create.error}
            hint="The application the calls are placed with"
            required
          />
        </>
      ) : (
        <TextField
          label="Webhook key (optional)"
          field="webhookKey"
          type="password"
          value={webhookKey}
          onChange={setWebhookKey}
          error={create.error}
          hint="Only if a Twilio Webhooks Rule signs the account’s webhooks: its SharedKey secret"
        />
      )}
      <TextField
        label="Calls a second"
        field="callsPerSecond"
        value={callsPerSecond}
        onChange={setCallsPerSecond}
        error={create.error}
        inputMode="numeric"
        hint="1 to 100; empty: 1"
      />
      <FormError error={create.error} shown={FIELDS} />
      <button type="submit" className="primary" disabled={create.pending}>
        Add connection
      </button>
    </form>
  );
}

/** A connection's changes: its name, a new token or API key for the same account (checked with the carrier first), its rate, and its webhook keys. */
export function EditConnection({ connection, onDone }: { connection: CarrierConnectionRowFragment; onDone: (savedName: string | null) => void }) {
  const [name, setName] = useState(connection.name);
  const [authToken, setAuthToken] = useState('');
  const [webhookKey, setWebhookKey] = useState('');
  const [publicKey, setPublicKey] = useState(connection.publicKey ?? '');
  const [applicationId, setApplicationId] = useState(connection.applicationId ?? '');
  const [callsPerSecond, setCallsPerSecond] = useState(String(connection.callsPerSecond));
  const update = useMutation(UpdateCarrierConnectionDocument);
  const telnyx = connection.carrier === 'telnyx';
  const submit = async (event: FormEvent) => {
    event.preventDefault();
    const input = {
      name,
      authToken: authToken || undefined,
      callsPerSecond: callsPerSecondOf(callsPerSecond),
      ...(telnyx ? { publicKey, applicationId } : { webhookKey: webhookKey || undefined }),
    };
    const done = await update.run({ id: connection.id, input });
    setAuthToken('');
    setWebhookKey('');
    if (done) onDone(done.updateCarrierConnection.name);
  };
  return (
    <form className="inline-form" onSubmit={(event) => void submit(event)} noValidate aria-label={`Change the connection ${connection.name}`}>
      <TextField label="Name" field="name" value={name} onChange={setName} error={update.error} required />
      <TextField
        label={telnyx ? 'New API key' : 'New auth token'}
        field="authToken"
        type="password"
        value={authToken}
        onChange={setAuthToken}
        error={update.error}
        hint={`Now …${connection.authTokenLast4}; empty keeps it. A new one is checked with the carrier first`}
      />
      {telnyx ? (
        <>
          <TextField label="Public key" field="publicKey" value={publicKey} onChange={setPublicKey} error={update.error} />
          <TextField label="TeXML application id" field="applicationId" value={applicationId} onChange={setApplicationId} error={update.error} />
        </>
      ) : (
        <TextField
          label="New webhook key"
          field="webhookKey"
          type="password"
          value={webhookKey}
          onChange={setWebhookKey}
          error={update.error}
          hint={connection.webhookKeyLast4 ? `Now …${connection.webhookKeyLast4}; empty keeps it` : 'None: webhooks are signed with the auth token'}
        />
      )}
      <TextField label="Calls a second" field="callsPerSecond" value={callsPerSecond} onChange={setCallsPerSecond} error={update.error} inputMode="numeric" />
      <FormError error={update.error} shown={FIELDS} />
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
