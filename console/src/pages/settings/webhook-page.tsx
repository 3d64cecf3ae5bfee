import { useLocation } from 'wouter';
import { DeleteWebhookEndpointDocument, ResendWebhookEventDocument, TestWebhookEndpointDocument, WebhookEndpointDocument } from '../../api/generated';
import { useMutation, useQuery } from '../../api/hooks';
import { useSession } from '../../api/session';
import { Badge, formatDate, Loading, QueryError, Table } from '../../components/common';
import { FormError } from '../../components/forms';
import { Page, Section } from '../../components/page';
import { SettingsNav } from './settings-nav';

/** One endpoint and its recent deliveries; a delivery of an event can be sent again (a new delivery of the same event). */
export function WebhookPage({ id }: { id: string }) {
  const { can } = useSession();
  const [, navigate] = useLocation();
  const endpoint = useQuery(WebhookEndpointDocument, { id });
  const resend = useMutation(ResendWebhookEventDocument);
  const test = useMutation(TestWebhookEndpointDocument);
  const remove = useMutation(DeleteWebhookEndpointDocument);
  const mayManage = can('webhooks.manage');
  if (endpoint.error && !endpoint.data) {
    return (
      <Page title="Webhook endpoint">
        <SettingsNav />
        <QueryError error={endpoint.error} what="Webhook endpoint" />
      </Page>
    );
  }
  if (!endpoint.data) return <Loading what="the endpoint" />;
  const shown = endpoint.data.webhookEndpoint;
  return (
    <Page title="Webhook endpoint">
      <SettingsNav />
      <p className="meta">
        <code>{shown.url}</code> <Badge value={shown.enabled ? 'enabled' : 'disabled'} /> {shown.disabledReason ?? ''}
      </p>
      {mayManage ? (
        <div className="actions">
          <button type="button" onClick={() => void test.run({ id }).then((done) => done && endpoint.refetch())} disabled={test.pending}>
            Send a test event
          </button>
          <button
            type="button"
            className="danger"
            onClick={() => void remove.run({ id }).then((done) => done && navigate('/settings/webhooks'))}
            disabled={remove.pending}
          >
            Delete endpoint
          </button>
        </div>
      ) : null}
      <FormError error={test.error ?? remove.error ?? resend.error} />
      <Section title="Recent deliveries">
        <Table label="Deliveries">
          <thead>
            <tr>
              <th scope="col">Event</th>
              <th scope="col">Status</th>
              <th scope="col">Attempts</th>
              <th scope="col">Last answer</th>
              <th scope="col">Last attempt</th>
              {mayManage ? <th scope="col">Actions</th> : null}
            </tr>
          </thead>
          <tbody>
            {shown.deliveries.data.map((delivery) => (
              <tr key={delivery.id}>
                <td>
                  <code>{delivery.eventType}</code>
                  {delivery.manual ? <div className="muted">sent by hand (a test or a re-send)</div> : null}
                </td>
                <td>
                  <Badge value={delivery.status} />
                </td>
                <td>{delivery.attemptCount}</td>
                <td>
                  {delivery.lastStatusCode ?? '—'}
                  {delivery.lastError ? <div className="muted">{delivery.lastError}</div> : null}
                </td>
                <td>{formatDate(delivery.lastAttemptAt)}</td>
                {mayManage ? (
                  <td>
                    {delivery.eventId ? (
                      <button
                        type="button"
                        className="small"
                        onClick={() => void resend.run({ endpointId: id, eventId: delivery.eventId! }).then((done) => done && endpoint.refetch())}
                      >
                        Send again <span className="visually-hidden">{delivery.eventType}</span>
                      </button>
                    ) : null}
                  </td>
                ) : null}
              </tr>
            ))}
          </tbody>
        </Table>
        {shown.deliveries.data.length === 0 ? <p>Nothing was delivered yet.</p> : null}
      </Section>
    </Page>
  );
}
