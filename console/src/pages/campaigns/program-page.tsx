import { useState } from 'react';
import { Link, useLocation } from 'wouter';
import {
  ActivateProgramDocument,
  CreateExecutionDocument,
  ExecutionsUpdatedDocument,
  ProgramDocument,
  StartExecutionDocument,
  type ExecutionSummaryFragment,
} from '../../api/generated';
import { useMutation, useQuery, useSubscription } from '../../api/hooks';
import { useSession } from '../../api/session';
import { Badge, formatDate, Loading, QueryError, Table } from '../../components/common';
import { FormError } from '../../components/forms';
import { Page, Section } from '../../components/page';
import { WAITING_LABEL } from './waiting-reason';

/** ISO weekdays (1 = Monday), as the API numbers them. */
const DAY_NAMES = ['Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat', 'Sun'];

export function ProgramPage({ id }: { id: string }) {
  const { can } = useSession();
  const [, navigate] = useLocation();
  const program = useQuery(ProgramDocument, { id });
  const [live, setLive] = useState<Map<string, ExecutionSummaryFragment>>(new Map());
  // The executions move while the page is open: each one's state as it commits, no polling.
  useSubscription(
    ExecutionsUpdatedDocument,
    { programId: id },
    (data) => setLive((previous) => new Map(previous).set(data.executionsUpdated.id, data.executionsUpdated)),
    {
      skip: !program.data,
    },
  );
  const activate = useMutation(ActivateProgramDocument);
  const createExecution = useMutation(CreateExecutionDocument);
  const start = useMutation(StartExecutionDocument);
  if (program.error && !program.data) {
    return (
      <Page title="Program">
        <QueryError error={program.error} what="Program" />
      </Page>
    );
  }
  if (!program.data) return <Loading what="the program" />;
  const { program: shown } = program.data;
  const executions = [...new Map([...shown.executions.map((execution) => [execution.id, execution] as const), ...live]).values()].sort((a, b) =>
    b.createdAt.localeCompare(a.createdAt),
  );
  const runNew = async () => {
    const created = await createExecution.run({ programId: id });
    if (!created) return;
    program.refetch();
    // A start the API refuses (no credits, …) leaves the execution scheduled, listed below, and its words shown here.
    if (await start.run({ id: created.createExecution.id })) navigate(`/executions/${created.createExecution.id}`);
  };
  return (
    <Page title={shown.name}>
      <p className="meta">
        <Badge value={shown.status} /> {shown.kind} on {shown.carrier}
      </p>
      {shown.description ? <p>{shown.description}</p> : null}
      <div className="actions">
        {can('programs.manage') && shown.status === 'draft' ? (
          <button type="button" onClick={() => void activate.run({ id }).then((done) => done && program.refetch())} disabled={activate.pending}>
            Activate
          </button>
        ) : null}
        {can('executions.control') && shown.status === 'active' && shown.kind === 'campaign' ? (
          <button type="button" className="primary" onClick={() => void runNew()} disabled={createExecution.pending || start.pending}>
            Start a new execution
          </button>
        ) : null}
      </div>
      <FormError error={activate.error ?? createExecution.error ?? start.error} />
      <dl className="facts">
        <dt>Audience</dt>
        <dd>{shown.audience ? <Link href={`/audiences/${shown.audience.id}`}>{`${shown.audience.name} (${shown.audience.contactCount})`}</Link> : '—'}</dd>
        <dt>Agent</dt>
        <dd>{shown.agent ? <Link href={`/agents/${shown.agent.id}`}>{shown.agent.name}</Link> : '—'}</dd>
        <dt>Flow</dt>
        <dd>{shown.flow?.name ?? '—'}</dd>
        <dt>Calls at once</dt>
        <dd>{shown.maxConcurrentCalls}</dd>
        <dt>Calling window</dt>
        <dd>
          {shown.callingWindow
            ? `${shown.callingWindow.startTime}–${shown.callingWindow.endTime}, ${shown.callingWindow.daysOfWeek.map((day) => DAY_NAMES[day - 1]).join(', ')}, on each contact’s clock`
            : 'Any time'}
        </dd>
        <dt>Recording</dt>
        <dd>{shown.recording?.enabled ? `On (${shown.recording.channels})` : 'Off'}</dd>
      </dl>
      <Section title="Executions">
        <Table label="Executions">
          <thead>
            <tr>
              <th scope="col">Created</th>
              <th scope="col">Status</th>
              <th scope="col">Waiting on</th>
              <th scope="col">Contacts</th>
              <th scope="col">Done</th>
              <th scope="col">Credits</th>
            </tr>
          </thead>
          <tbody>
            {executions.map((execution) => (
              <tr key={execution.id}>
                <td>
                  <Link href={`/executions/${execution.id}`}>{formatDate(execution.createdAt)}</Link>
                </td>
                <td>
                  <Badge value={execution.status} />
                </td>
                <td>{execution.waitingReason ? WAITING_LABEL[execution.waitingReason] : '—'}</td>
                <td>{execution.totalContacts}</td>
                <td>{execution.contactsCompleted + execution.contactsFailed}</td>
                <td>{execution.creditsSpent}</td>
              </tr>
            ))}
          </tbody>
        </Table>
        {executions.length === 0 ? <p>No execution yet.</p> : null}
      </Section>
    </Page>
  );
}
