import type { ReactNode } from 'react';
import type { WaitingReason } from '../../api/generated';
import { formatDate } from '../../components/common';

/** A moment the API gave, readable, with the exact instant in `datetime` (what a test or a screen reader reads). */
function At({ value }: { value: string | null | undefined }) {
  if (!value) return <>a time not yet known</>;
  return <time dateTime={value}>{formatDate(value)}</time>;
}

/** The short name of each reason, for a list (the execution's page says it in full). */
export const WAITING_LABEL: Record<WaitingReason, string> = {
  carrier_not_configured: 'Carrier not configured',
  carrier_pacing: 'Carrier pacing',
  carrier_unavailable: 'Carrier unavailable',
  concurrency_limit: 'Every call slot busy',
  no_credits: 'No credits',
  number_in_call: 'Number on another call',
  outside_calling_window: 'Outside the calling window',
  paused: 'Paused',
  paused_by_rule: 'Paused by a rule',
  retry_wait: 'Waiting for retries',
  scheduled: 'Scheduled',
};

/** Why the execution places no (more) calls now, in the words of the API's `WaitingReason`, with `nextCallAt` where it is known. */
function sentence(reason: WaitingReason, next: string | null | undefined, maxConcurrentCalls?: number): ReactNode {
  switch (reason) {
    case 'outside_calling_window':
      return (
        <>
          Outside every waiting contact’s calling window (on each contact’s own clock) until <At value={next} />.
        </>
      );
    case 'no_credits':
      return <>The organization has no credit left to pay the next call: once credits are granted, resume the execution.</>;
    case 'carrier_not_configured':
      return (
        <>
          The program’s carrier cannot place calls: no carrier connection for its caller ID, or the gateway has no public URL. Fix the program or the
          connection.
        </>
      );
    case 'carrier_pacing':
      return (
        <>
          The carrier connection’s calls per second are used up: the next call goes at <At value={next} />.
        </>
      );
    case 'carrier_unavailable':
      return (
        <>
          The carrier did not take the last calls (down or unreachable): they are tried again at <At value={next} />.
        </>
      );
    case 'concurrency_limit':
      return <>Every call slot{maxConcurrentCalls ? ` (${maxConcurrentCalls} at once)` : ''} holds a call: the next contact is dialed when one ends.</>;
    case 'number_in_call':
      return <>The due contacts’ numbers are on a live call of this program: they are dialed once it ends.</>;
    case 'paused':
      return <>Paused by a user: resume continues it.</>;
    case 'paused_by_rule':
      return <>Paused by an auto-pause rule whose threshold was reached: resume continues it.</>;
    case 'retry_wait':
      return (
        <>
          Every waiting contact waits for its retry: the first is due at <At value={next} />.
        </>
      );
    case 'scheduled':
      return next ? (
        <>
          Not started: it starts at <At value={next} />, or when someone starts it.
        </>
      ) : (
        <>Not started: it starts when someone starts it.</>
      );
  }
}

/** The execution's page: why nothing (more) is being dialed, as the campaign runner last found it; nothing while calls flow. */
export function WaitingNotice({
  reason,
  nextCallAt,
  maxConcurrentCalls,
}: {
  reason: WaitingReason | null;
  nextCallAt: string | null;
  maxConcurrentCalls?: number;
}) {
  if (!reason) return null;
  return (
    <div className="waiting" role="status" data-testid="waiting-reason" data-reason={reason}>
      <h2>Why no more calls are placed now</h2>
      <p>{sentence(reason, nextCallAt, maxConcurrentCalls)}</p>
    </div>
  );
}
