import { useState, type FormEvent } from 'react';
import { ApiKeysDocument, CreateApiKeyDocument, DeactivateApiKeyDocument, DeleteApiKeyDocument } from '../../api/generated';
import { useMutation, useQuery } from '../../api/hooks';
import { formatDate, Loading, QueryError, SecretOnce, Table } from '../../components/common';
import { FormError, TextField } from '../../components/forms';
import { Page, Section } from '../../components/page';
import { SettingsNav } from './settings-nav';

/** The caller's own API keys (every role manages its own): create (the secret shown once), deactivate, delete. */
export function ApiKeysPage() {
  const keys = useQuery(ApiKeysDocument, {});
  const create = useMutation(CreateApiKeyDocument);
  const deactivate = useMutation(DeactivateApiKeyDocument);
  const remove = useMutation(DeleteApiKeyDocument);
  const [name, setName] = useState('');
  const [prefix, setPrefix] = useState('key_');
  const [expiresOn, setExpiresOn] = useState('');
  const [secret, setSecret] = useState<string | null>(null);
  const submit = async (event: FormEvent) => {
    event.preventDefault();
    const expiresAt = /^\d{4}-\d{2}-\d{2}$/.test(expiresOn) ? new Date(`${expiresOn}T23:59:59`).toISOString() : undefined;
    const done = await create.run({ input: { name, prefix, expiresAt } });
    if (done) {
      setSecret(done.createApiKey.secret);
      setName('');
      keys.refetch();
    }
  };
  return (
    <Page title="Settings">
      <SettingsNav />
      <Section title="Your API keys">
        {secret ? <SecretOnce label="The new key:" secret={secret} onDone={() => setSecret(null)} /> : null}
        <form className="inline-form" onSubmit={(event) => void submit(event)} noValidate aria-label="Create an API key">
          <TextField label="Name" field="name" value={name} onChange={setName} error={create.error} required />
          <TextField label="Prefix" field="prefix" value={prefix} onChange={setPrefix} error={create.error} hint="The start of the key, to tell keys apart" />
          <TextField label="Expires on (optional)" field="expiresAt" type="date" value={expiresOn} onChange={setExpiresOn} error={create.error} />
          <FormError error={create.error} shown={['name', 'prefix', 'expiresAt']} />
          <button type="submit" className="primary" disabled={create.pending}>
            Create key
          </button>
        </form>
        <FormError error={deactivate.error ?? remove.error} />
        {keys.error ? <QueryError error={keys.error} what="API keys" /> : null}
        {keys.data ? (
          <Table label="API keys">
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Starts with</th>
                <th scope="col">Active</th>
                <th scope="col">Expires</th>
                <th scope="col">Created</th>
                <th scope="col">Actions</th>
              </tr>
            </thead>
            <tbody>
              {keys.data.apiKeys.map((key) => (
                <tr key={key.id}>
                  <td>{key.name}</td>
                  <td>
                    <code>{key.keyPrefix}…</code>
                  </td>
                  <td>{key.isActive ? 'Yes' : 'No'}</td>
                  <td>{key.expiresAt ? formatDate(key.expiresAt) : 'Never'}</td>
                  <td>{formatDate(key.createdAt)}</td>
                  <td className="row-actions">
                    {key.isActive ? (
                      <button type="button" className="small" onClick={() => void deactivate.run({ id: key.id }).then((done) => done && keys.refetch())}>
                        Deactivate <span className="visually-hidden">{key.name}</span>
                      </button>
                    ) : null}
                    <button type="button" className="small danger" onClick={() => void remove.run({ id: key.id }).then((done) => done && keys.refetch())}>
                      Delete <span className="visually-hidden">{key.name}</span>
                    </button>
                  </td>
                </tr>
              ))}
            </tbody>
          </Table>
        ) : keys.loading ? (
          <Loading what="your keys" />
        ) : null}
      </Section>
    </Page>
  );
}
