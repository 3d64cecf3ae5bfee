import { useState, type FormEvent } from 'react';
import { Link } from 'wouter';
import { CreateWebhookEndpointDocument, WebhookEndpointsDocument } from '../../api/generated';
import { useMutation, useQuery } from '../../api/hooks';
import { useSession } from '../../api/session';
import { Badge, Loading, QueryError, SecretOnce, Table } from '../../components/common';
import { FormError, TextField } from '../../components/forms';
import { Page, Section } from '../../components/page';
import { SettingsNav } from './settings-nav';

export function WebhooksPage() {
  const { can } = useSession();
  const endpoints = useQuery(WebhookEndpointsDocument, {});
  return (
    <Page title="Settings">
      <SettingsNav />
      {can('webhooks.manage') ? <NewEndpoint onCreated={endpoints.refetch} /> : null}
      <Section title="Webhook endpoints">
        {endpoints.error ? <QueryError error={endpoints.error} what="Webhook endpoints" /> : null}
        {endpoints.data ? (
          <Table label="Webhook endpoints">
            <thead>
              <tr>
                <th scope="col">URL</th>
                <th scope="col">Events</th>
                <th scope="col">State</th>
                <th scope="col">Secret</th>
              </tr>
            </thead>
            <tbody>
              {endpoints.data.webhookEndpoints.data.map((endpoint) => (
                <tr key={endpoint.id}>
                  <td>
                    <Link href={`/settings/webhooks/${endpoint.id}`}>{endpoint.url}</Link>
                    {endpoint.description ? <div className="muted">{endpoint.description}</div> : null}
                  </td>
                  <td>{endpoint.eventTypes.length > 0 ? endpoint.eventTypes.join(', ') : 'every type'}</td>
                  <td>
                    <Badge value={endpoint.enabled ? 'enabled' : 'disabled'} />
                    {endpoint.disabledReason ? <div className="muted">{endpoint.disabledReason}</div> : null}
                  </td>
                  <td>
                    <code>{endpoint.secretHint}</code>
                  </td>
                </tr>
              ))}
            </tbody>
          </Table>
        ) : endpoints.loading ? (
          <Loading what="webhook endpoints" />
        ) : null}
      </Section>
    </Page>
  );
}

function NewEndpoint({ onCreated }: { onCreated: () => void }) {
  const [url, setUrl] = useState('');
  const [description, setDescription] = useState('');
  const [types, setTypes] = useState('');
  const [secret, setSecret] = useState<string | null>(null);
  const create = useMutation(CreateWebhookEndpointDocument);
  const submit = async (event: FormEvent) => {
    event.preventDefault();
    const eventTypes = types
      .split(',')
      .map((type) => type.trim())
      .filter(Boolean);
    const done = await create.run({ input: { url, description: description || undefined, eventTypes: eventTypes.length > 0 ? eventTypes : undefined } });
    if (done) {
      setSecret(done.createWebhookEndpoint.secret);
      setUrl('');
      setDescription('');
      setTypes('');
      onCreated();
    }
  };
  return (
    <Section title="New webhook endpoint">
      {secret ? <SecretOnce label="The endpoint’s signing secret:" secret={secret} onDone={() => setSecret(null)} /> : null}
      <form className="inline-form" onSubmit={(event) => void submit(event)} noValidate aria-label="New webhook endpoint">
        <TextField label="URL" field="url" type="url" value={url} onChange={setUrl} error={create.error} required />
        <TextField label="Description" field="description" value={description} onChange={setDescription} error={create.error} />
        <TextField
          label="Event types"
          field="eventTypes"
          value={types}
          onChange={setTypes}
          error={create.error}
          hint="Comma-separated, e.g. call.ended, execution.completed; empty: every type"
        />
        <FormError error={create.error} shown={['url', 'description', 'eventTypes']} />
        <button type="submit" className="primary" disabled={create.pending}>
          Add endpoint
        </button>
      </form>
    </Section>
  );
}
