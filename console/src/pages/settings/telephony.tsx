import { useState, type FormEvent } from 'react';
import { CreatePhoneNumberDocument, DeleteCarrierConnectionDocument, DeletePhoneNumberDocument, TelephonyDocument } from '../../api/generated';
import { useMutation, useQuery } from '../../api/hooks';
import { useSession } from '../../api/session';
import { Loading, QueryError, Table } from '../../components/common';
import { FormError, SelectField, TextField } from '../../components/forms';
import { Page, Section } from '../../components/page';
import { EditConnection, NewConnection } from './carrier-connection-form';
import { SettingsNav } from './settings-nav';

export function TelephonyPage() {
  const { can } = useSession();
  const telephony = useQuery(TelephonyDocument, {});
  const removeConnection = useMutation(DeleteCarrierConnectionDocument);
  const removeNumber = useMutation(DeletePhoneNumberDocument);
  const mayManage = can('telephony.manage');
  const [editing, setEditing] = useState<string | null>(null);
  const [saved, setSaved] = useState<string | null>(null);
  const connections = telephony.data?.carrierConnections.data ?? [];
  return (
    <Page title="Settings">
      <SettingsNav />
      {telephony.error ? <QueryError error={telephony.error} what="Carrier connections" /> : null}
      <FormError error={removeConnection.error ?? removeNumber.error} />
      <Section title="Carrier connections">
        {mayManage && telephony.data ? <NewConnection carriers={telephony.data.carriers} onCreated={telephony.refetch} /> : null}
        {telephony.data ? (
          <Table label="Carrier connections">
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Carrier</th>
                <th scope="col">Account</th>
                <th scope="col">Token</th>
                <th scope="col">Webhooks signed with</th>
                <th scope="col">Calls a second</th>
                {mayManage ? <th scope="col">Actions</th> : null}
              </tr>
            </thead>
            <tbody>
              {connections.map((connection) => (
                <tr key={connection.id}>
                  <td>{connection.name}</td>
                  <td>{connection.carrier}</td>
                  <td>
                    <code>{connection.accountSid}</code>
                  </td>
                  <td>…{connection.authTokenLast4}</td>
                  <td>
                    {connection.publicKey ? (
                      <>
                        the public key <code>{connection.publicKey}</code>; application <code>{connection.applicationId}</code>
                      </>
                    ) : connection.webhookKeyLast4 ? (
                      `a Webhooks Rule’s key …${connection.webhookKeyLast4}`
                    ) : (
                      'the auth token'
                    )}
                  </td>
                  <td>{connection.callsPerSecond}</td>
                  {mayManage ? (
                    <td className="row-actions">
                      <button type="button" className="small" onClick={() => (setSaved(null), setEditing(connection.id))}>
                        Edit <span className="visually-hidden">{connection.name}</span>
                      </button>
                      <button
                        type="button"
                        className="small danger"
                        onClick={() => void removeConnection.run({ id: connection.id }).then((done) => done && telephony.refetch())}
                      >
                        Delete <span className="visually-hidden">{connection.name}</span>
                      </button>
                    </td>
                  ) : null}
                </tr>
              ))}
            </tbody>
          </Table>
        ) : telephony.loading ? (
          <Loading what="carrier connections" />
        ) : null}
        {saved ? (
          <p className="saved" role="status">
            {saved}
          </p>
        ) : null}
        {editing && connections.some((connection) => connection.id === editing) ? (
          <EditConnection
            key={editing}
            connection={connections.find((connection) => connection.id === editing)!}
            carrier={telephony.data?.carriers.find((carrier) => carrier.kind === connections.find((connection) => connection.id === editing)!.carrier)}
            onDone={(savedName) => {
              if (savedName !== null) {
                setSaved(`Saved: ${savedName}.`);
                telephony.refetch();
              }
              setEditing(null);
            }}
          />
        ) : null}
      </Section>
      <Section title="Phone numbers">
        {mayManage ? <NewNumber connections={connections} onCreated={telephony.refetch} /> : null}
        {telephony.data ? (
          <Table label="Phone numbers">
            <thead>
              <tr>
                <th scope="col">Number</th>
                <th scope="col">Label</th>
                <th scope="col">Connection</th>
                {mayManage ? <th scope="col">Actions</th> : null}
              </tr>
            </thead>
            <tbody>
              {telephony.data.phoneNumbers.data.map((number) => (
                <tr key={number.id}>
                  <td>{number.number}</td>
                  <td>{number.label ?? '—'}</td>
                  <td>{number.carrierConnection?.name ?? '—'}</td>
                  {mayManage ? (
                    <td>
                      <button
                        type="button"
                        className="small danger"
                        onClick={() => void removeNumber.run({ id: number.id }).then((done) => done && telephony.refetch())}
                      >
                        Delete <span className="visually-hidden">{number.number}</span>
                      </button>
                    </td>
                  ) : null}
                </tr>
              ))}
            </tbody>
          </Table>
        ) : null}
      </Section>
    </Page>
  );
}

function NewNumber({ connections, onCreated }: { connections: { id: string; name: string }[]; onCreated: () => void }) {
  const [number, setNumber] = useState('');
  const [label, setLabel] = useState('');
  const [connection, setConnection] = useState('');
  const create = useMutation(CreatePhoneNumberDocument);
  const submit = async (event: FormEvent) => {
    event.preventDefault();
    if (await create.run({ input: { number, label: label || undefined, carrierConnectionId: connection || undefined } })) {
      setNumber('');
      setLabel('');
      onCreated();
    }
  };
  return (
    <form className="inline-form" onSubmit={(event) => void submit(event)} noValidate aria-label="New phone number">
      <TextField label="Number" field="number" type="tel" inputMode="tel" value={number} onChange={setNumber} error={create.error} required />
      <TextField label="Label" field="label" value={label} onChange={setLabel} error={create.error} />
      <SelectField
        label="Connection"
        field="carrierConnectionId"
        value={connection}
        onChange={setConnection}
        error={create.error}
        options={[{ value: '', label: 'None' }, ...connections.map((each) => ({ value: each.id, label: each.name }))]}
      />
      <FormError error={create.error} shown={['number', 'label', 'carrierConnectionId']} />
      <button type="submit" className="primary" disabled={create.pending}>
        Add number
      </button>
    </form>
  );
}
