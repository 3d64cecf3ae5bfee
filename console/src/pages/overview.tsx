import { Link } from 'wouter';
import { CreditsDocument, UnfinishedExecutionsDocument, type ExecutionAttentionFragment } from '../api/generated';
import { useQuery } from '../api/hooks';
import { useSession } from '../api/session';
import { Badge, formatDate, Loading, QueryError, Table } from '../components/common';
import { WAITING_LABEL } from './campaigns/waiting-reason';
import { Page, Section } from '../components/page';

export function Overview() {
  const { me } = useSession();
  const credits = useQuery(CreditsDocument, {});
  return (
    <Page title={me.organization.name}>
      <p>
        Signed in as {me.name} ({me.email}), <strong>{me.role}</strong>.
      </p>
      <Section title="Credits">
        {credits.error ? <QueryError error={credits.error} what="Organization" /> : null}
        {credits.data ? (
          <dl className="facts">
            <dt>Balance</dt>
            <dd data-testid="credit-balance">{credits.data.organization.creditBalance}</dd>
            <dt>Reserved by running executions</dt>
            <dd>{credits.data.organization.creditsReserved}</dd>
          </dl>
        ) : credits.loading ? (
          <Loading what="credits" />
        ) : null}
      </Section>
      <UnfinishedExecutions />
      <Section title="Where to start">
        <ul className="links">
          <li>
            <Link href="/agents">Agents</Link>: build an agent and talk to it.
          </li>
          <li>
            <Link href="/campaigns">Campaigns</Link>: start an execution and watch it call.
          </li>
          <li>
            <Link href="/calls">Calls</Link>: read a call's transcript, hear its recording, see where its seconds went.
          </li>
        </ul>
      </Section>
    </Page>
  );
}

/** Executions not over yet, each with what holds it back (its waitingReason), so a stuck campaign is seen from the start page. */
function UnfinishedExecutions() {
  const answer = useQuery(UnfinishedExecutionsDocument, {});
  const rows: { program: { id: string; name: string }; execution: ExecutionAttentionFragment }[] = (answer.data?.programs.data ?? []).flatMap((program) =>
    [...program.running, ...program.paused, ...program.pausedNoCredits, ...program.pausedThreshold].map((execution) => ({ program, execution })),
  );
  return (
    <Section title="Executions not over yet">
      {answer.error ? <QueryError error={answer.error} what="Executions" /> : null}
      {!answer.data ? (
        answer.loading ? (
          <Loading what="the executions" />
        ) : null
      ) : rows.length === 0 ? (
        <p>No execution is running or paused.</p>
      ) : (
        <Table label="Executions not over yet">
          <thead>
            <tr>
              <th scope="col">Program</th>
              <th scope="col">Execution</th>
              <th scope="col">Status</th>
              <th scope="col">Waiting contacts</th>
              <th scope="col">Waiting on</th>
              <th scope="col">Next call</th>
            </tr>
          </thead>
          <tbody>
            {rows.map(({ program, execution }) => (
              <tr key={execution.id}>
                <td>
                  <Link href={`/campaigns/${program.id}`}>{program.name}</Link>
                </td>
                <td>
                  <Link href={`/executions/${execution.id}`}>{formatDate(execution.createdAt)}</Link>
                </td>
                <td>
                  <Badge value={execution.status} />
                </td>
                <td>{execution.contactsPending}</td>
                <td>{execution.waitingReason ? WAITING_LABEL[execution.waitingReason] : '—'}</td>
                <td>{execution.nextCallAt ? <time dateTime={execution.nextCallAt}>{formatDate(execution.nextCallAt)}</time> : '—'}</td>
              </tr>
            ))}
          </tbody>
        </Table>
      )}
    </Section>
  );
}
