import { useEffect, useState } from 'react';
import { Link } from 'wouter';
import {
  CallUpdatedDocument,
  ControlExecutionDocument,
  CreditsDocument,
  ExecutionCallsDocument,
  ExecutionUpdatedDocument,
  type ExecutionAction,
  type ExecutionLiveFragment,
  type ExecutionStatus,
  type LiveCallFragment,
} from '../../api/generated';
import { useMutation, useQuery, useSubscription } from '../../api/hooks';
import { useSession } from '../../api/session';
import { Badge, formatDate, Loading, QueryError, Table } from '../../components/common';
import { FormError } from '../../components/forms';
import { Page, Section } from '../../components/page';
import { CallsChart } from './calls-chart';
import { WaitingNotice } from './waiting-reason';

/** Pages of the execution's calls read when the page opens (100 each); the live ones come by subscription after. */
const CALL_PAGES = 10;
const PAUSED: ExecutionStatus[] = ['paused', 'paused_no_credits', 'paused_threshold'];

/** The moves a state allows (the API's state machine); the API's own 409 is shown if it refuses one anyway. */
function actionsOf(status: ExecutionStatus): { action: ExecutionAction; label: string }[] {
  if (status === 'scheduled')
    return [
      { action: 'start', label: 'Start' },
      { action: 'cancel', label: 'Cancel' },
    ];
  if (status === 'running')
    return [
      { action: 'pause', label: 'Pause' },
      { action: 'stop', label: 'Stop' },
    ];
  if (PAUSED.includes(status))
    return [
      { action: 'resume', label: 'Resume' },
      { action: 'stop', label: 'Stop' },
    ];
  return [];
}

/** The calls of the execution: what was there when the page opened, then each call as it starts and ends. */
function useExecutionCalls(id: string, ready: boolean) {
  const { gateway } = useSession();
  const [calls, setCalls] = useState<Map<string, LiveCallFragment>>(new Map());
  const [loaded, setLoaded] = useState(false);
  useSubscription(CallUpdatedDocument, { executionId: id }, (data) => setCalls((previous) => new Map(previous).set(data.callUpdated.id, data.callUpdated)), {
    skip: !ready,
  });
  useEffect(() => {
    if (!ready) return;
    let current = true;
    void (async () => {
      for (let page = 1; page <= CALL_PAGES && current; page++) {
        const answer = await gateway.request(ExecutionCallsDocument, { id, page }).catch(() => null);
        if (!answer || !current) break;
        // A call the subscription already brought is newer than the page: it stays.
        setCalls((previous) => {
          const next = new Map(answer.execution.calls.data.map((call) => [call.id, call] as const));
          for (const [callId, call] of previous) next.set(callId, call);
          return next;
        });
        if (!answer.execution.calls.meta.hasNextPage) break;
      }
      if (current) setLoaded(true);
    })();
    return () => {
      current = false;
    };
  }, [gateway, id, ready]);
  return { calls: [...calls.values()], loaded };
}

export function ExecutionPage({ id }: { id: string }) {
  const { can } = useSession();
  const [execution, setExecution] = useState<ExecutionLiveFragment | null>(null);
  // The execution as it is, then each move and progress as it commits (the server sends at most one a second); no polling.
  const live = useSubscription(ExecutionUpdatedDocument, { id }, (data) => setExecution(data.executionUpdated));
  const { calls, loaded } = useExecutionCalls(id, execution !== null);
  const credits = useQuery(CreditsDocument, {});
  const control = useMutation(ControlExecutionDocument);
  const spent = execution?.creditsSpent;
  const { refetch } = credits;
  useEffect(() => {
    if (spent !== undefined) refetch();
  }, [spent, refetch]);

  if (!execution) {
    return <Page title="Execution">{live.error ? <QueryError error={live.error} what="Execution" /> : <Loading what="the execution" />}</Page>;
  }
  const inProgress = calls.filter((call) => call.status === 'in_progress' || call.status === 'ringing' || call.status === 'queued');
  const move = async (action: ExecutionAction) => {
    const result = await control.run({ id, action });
    if (result) setExecution(result.controlExecution);
  };
  const counters: [string, number, string][] = [
    ['Contacts', execution.totalContacts, 'total'],
    ['Waiting', execution.contactsPending, 'pending'],
    ['Being called', execution.contactsInProgress, 'in-progress'],
    ['Completed', execution.contactsCompleted, 'completed'],
    ['Failed', execution.contactsFailed, 'failed'],
    ['Not called (do not call)', execution.contactsDoNotCall, 'do-not-call'],
  ];
  return (
    <Page title={`Execution of ${execution.program.name}`}>
      <p className="meta">
        <span data-testid="execution-status">
          <Badge value={execution.status} />
        </span>{' '}
        <Link href={`/campaigns/${execution.program.id}`}>{execution.program.name}</Link> · started {formatDate(execution.actualStartAt)}
        {execution.actualEndAt ? ` · ended ${formatDate(execution.actualEndAt)}` : ''}
      </p>
      {live.completed ? <p className="hint">The execution is over: nothing more will change.</p> : null}
      {live.error ? <QueryError error={live.error} what="Execution" /> : null}
      {/* Why nothing (more) is dialed and when the next call is due: moves with the subscription like the counters. */}
      <WaitingNotice reason={execution.waitingReason} nextCallAt={execution.nextCallAt} maxConcurrentCalls={execution.program.maxConcurrentCalls} />
      {can('executions.control') ? (
        <div className="actions" role="group" aria-label="Control the execution">
          {actionsOf(execution.status).map(({ action, label }) => (
            <button
              key={action}
              type="button"
              className={action === 'stop' || action === 'cancel' ? 'danger' : undefined}
              onClick={() => void move(action)}
              disabled={control.pending}
            >
              {label}
            </button>
          ))}
        </div>
      ) : null}
      <FormError error={control.error} />
      <Section title="Progress">
        <dl className="counters" aria-live="polite">
          {counters.map(([label, value, key]) => (
            <div key={key}>
              <dt>{label}</dt>
              <dd data-testid={`counter-${key}`}>{value}</dd>
            </div>
          ))}
          <div>
            <dt>Credits spent</dt>
            <dd data-testid="counter-credits">{execution.creditsSpent}</dd>
          </div>
          <div>
            <dt>Credits left</dt>
            <dd data-testid="credit-balance">{credits.data?.organization.creditBalance ?? '…'}</dd>
          </div>
        </dl>
      </Section>
      <Section title="Calls over time by outcome">{loaded ? <CallsChart calls={calls} /> : <Loading what="the calls" />}</Section>
      <Section title="Calls in progress">
        {inProgress.length === 0 ? (
          <p>No call is in progress.</p>
        ) : (
          <Table label="Calls in progress">
            <thead>
              <tr>
                <th scope="col">To</th>
                <th scope="col">Contact</th>
                <th scope="col">Status</th>
                <th scope="col">Since</th>
              </tr>
            </thead>
            <tbody>
              {inProgress.map((call) => (
                <tr key={call.id}>
                  <td>
                    <Link href={`/calls/${call.id}`}>{call.to}</Link>
                  </td>
                  <td>{call.contact?.name ?? '—'}</td>
                  <td>
                    <Badge value={call.status} />
                  </td>
                  <td>{formatDate(call.answeredAt ?? call.queuedAt)}</td>
                </tr>
              ))}
            </tbody>
          </Table>
        )}
        <p>
          <Link href={`/calls?executionId=${id}`}>Every call of this execution</Link>
        </p>
      </Section>
    </Page>
  );
}
