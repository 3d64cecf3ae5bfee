import { ExecutionStatus, WaitingReason } from '../program.enums.js';
import type { CallingWindow } from '../program.types.js';
import { nextWindowOpening } from './calling-window.js';

/** Why a running execution's pending contacts are not dialed now, and when the next call can be placed (null: not known). */
export interface Waiting {
  reason: WaitingReason;
  nextCallAt: Date | null;
  /** What exactly is missing, for the log line (never stored). */
  detail?: string;
}

/** The pending contacts a claim did not take, by time zone, as the claim read them. */
export interface PendingZone {
  timeZone: string | null;
  /** Some row is due now (never tried, or its retry time has come) and its number is on no live call of the program. */
  dueNow: boolean;
  /** Some row is due now but its number is on a live call of the program (another execution's, or a duplicate in this one). */
  dueBusy: boolean;
  /** The earliest retry time still ahead, if any. */
  nextDueAt: Date | null;
  /** Whether a row due at nextDueAt waits because the carrier did not take its last call (not because of the retry policy). */
  nextDueNotPlaced: boolean;
}

/**
 * Why the pending contacts left after a claim wait, decided by the one the next call will go to: for
 * each zone, the first instant one of its rows is both due and inside its calling window (the
 * window read on the zone's clock). A row callable now is no wait (the next pass takes it: null); a
 * number on a live call is dialed once that call ends, which comes before any time ahead. Past the
 * execution's scheduledStopAt there is no next call.
 */
export function waitingOnContacts(zones: readonly PendingZone[], window: CallingWindow | null, now: Date, stopAt: Date | null): Waiting | null {
  let first: Waiting | null = null;
  let busy = false;
  const consider = (reason: WaitingReason, at: Date | null) => {
    if (at && (!first?.nextCallAt || at.getTime() < first.nextCallAt.getTime())) first = { reason, nextCallAt: at };
  };
  for (const zone of zones) {
    const opening = zone.dueNow || zone.dueBusy ? nextWindowOpening(now, zone.timeZone, window) : null;
    const openNow = opening !== null && opening.getTime() <= now.getTime();
    if (zone.dueNow && openNow) return null;
    if (zone.dueBusy && openNow) busy = true;
    else if (opening) consider(WaitingReason.outside_calling_window, opening);
    if (zone.nextDueAt) {
      const due = nextWindowOpening(zone.nextDueAt, zone.timeZone, window);
      const retry = zone.nextDueNotPlaced ? WaitingReason.carrier_unavailable : WaitingReason.retry_wait;
      consider(due && due.getTime() > zone.nextDueAt.getTime() ? WaitingReason.outside_calling_window : retry, due);
    }
  }
  if (busy) return { reason: WaitingReason.number_in_call, nextCallAt: null };
  if (zones.length === 0) return null;
  const found = first as Waiting | null;
  // No zone's window ever opens (it names no weekday): nobody is called again.
  if (!found) return { reason: WaitingReason.outside_calling_window, nextCallAt: null };
  if (stopAt && found.nextCallAt && found.nextCallAt.getTime() >= stopAt.getTime()) return { reason: found.reason, nextCallAt: null };
  return found;
}

/** What the runner last found, as the execution shows it: a running one's own, the others' from their status; none once final. */
export function waitingOf(
  status: ExecutionStatus,
  runner: { reason: WaitingReason | null; nextCallAt: Date | null },
  scheduledStartAt: Date | null,
): { reason: WaitingReason | null; nextCallAt: Date | null } {
  switch (status) {
    case ExecutionStatus.running:
      return { reason: runner.reason, nextCallAt: runner.reason ? runner.nextCallAt : null };
    case ExecutionStatus.preparing:
    case ExecutionStatus.scheduled:
      return { reason: WaitingReason.scheduled, nextCallAt: scheduledStartAt };
    case ExecutionStatus.paused:
      return { reason: WaitingReason.paused, nextCallAt: null };
    case ExecutionStatus.paused_no_credits:
      return { reason: WaitingReason.no_credits, nextCallAt: null };
    case ExecutionStatus.paused_threshold:
      return { reason: WaitingReason.paused_by_rule, nextCallAt: null };
    default:
      return { reason: null, nextCallAt: null };
  }
}

/** Whether two findings say the same (the stored one is rewritten, and announced, only when not). */
export function sameWaiting(a: Waiting | null, b: Waiting | null): boolean {
  return (a?.reason ?? null) === (b?.reason ?? null) && (a?.nextCallAt?.getTime() ?? null) === (b?.nextCallAt?.getTime() ?? null);
}

/** The runner's one log line when an execution starts waiting for a new reason. */
export function waitingMessage(waiting: Waiting): string {
  const next = waiting.nextCallAt ? `; next call at ${waiting.nextCallAt.toISOString()}` : '';
  return `execution waiting: ${WAITING_WORDS[waiting.reason]}${waiting.detail ? ` (${waiting.detail})` : ''}${next}`;
}

const WAITING_WORDS: Record<WaitingReason, string> = {
  scheduled: 'not started',
  paused: 'paused by a user',
  paused_by_rule: 'paused by an auto-pause rule',
  no_credits: 'no credit left to pay the next call',
  concurrency_limit: 'every call slot holds a call',
  carrier_not_configured: 'the program’s carrier cannot place calls',
  carrier_unavailable: 'the carrier did not take the last calls',
  carrier_pacing: 'the carrier connection’s calls per second are used up',
  outside_calling_window: 'outside every pending contact’s calling window',
  retry_wait: 'every pending contact waits for its retry',
  number_in_call: 'the due contacts’ numbers are on a live call of this program',
};
