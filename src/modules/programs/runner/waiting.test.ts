import { ExecutionStatus as S, WaitingReason as W } from '../program.enums.js';
import { sameWaiting, waitingMessage, waitingOf, waitingOnContacts, type PendingZone } from './waiting.js';

const at = (iso: string) => new Date(iso);
// Monday 2026-03-09 18:00Z: after a 09:00–17:00 weekday window in London (GMT), before it in Los Angeles (10:00 PDT is inside).
const NOW = at('2026-03-09T18:00:00Z');
const WEEKDAYS_9_TO_5 = { startTime: '09:00', endTime: '17:00', daysOfWeek: [1, 2, 3, 4, 5] };
const zone = (timeZone: string | null, fields: Partial<PendingZone> = {}): PendingZone => ({
  timeZone,
  dueNow: false,
  dueBusy: false,
  nextDueAt: null,
  nextDueNotPlaced: false,
  ...fields,
});

describe('waitingOnContacts: why the pending contacts a claim left wait', () => {
  it('nothing pending: nothing waits', () => {
    expect(waitingOnContacts([], WEEKDAYS_9_TO_5, NOW, null)).toBeNull();
  });

  it('due contacts outside their window: the window, and when it opens on their clock', () => {
    expect(waitingOnContacts([zone('Europe/London', { dueNow: true })], WEEKDAYS_9_TO_5, NOW, null)).toEqual({
      reason: W.outside_calling_window,
      nextCallAt: at('2026-03-10T09:00:00Z'),
    });
    // Of two zones, the one that opens first.
    expect(waitingOnContacts([zone('Europe/London', { dueNow: true }), zone('Asia/Tokyo', { dueNow: true })], WEEKDAYS_9_TO_5, NOW, null)).toEqual({
      reason: W.outside_calling_window,
      nextCallAt: at('2026-03-10T00:00:00Z'),
    });
  });

  it('a due contact free to call inside its window is no wait: the next pass takes it', () => {
    const later = zone('Europe/London', { dueNow: true, nextDueAt: at('2026-03-10T10:00:00Z') });
    expect(waitingOnContacts([later, zone('America/Los_Angeles', { dueNow: true })], WEEKDAYS_9_TO_5, NOW, null)).toBeNull();
    expect(waitingOnContacts([zone(null, { dueNow: true })], null, NOW, null)).toBeNull();
  });

  it('due contacts whose numbers are on a live call: dialed once it ends, before any time ahead; outside their window, the window', () => {
    const retry = zone(null, { nextDueAt: at('2026-03-09T18:00:01Z') });
    expect(waitingOnContacts([retry, zone('America/Los_Angeles', { dueBusy: true })], WEEKDAYS_9_TO_5, NOW, null)).toEqual({
      reason: W.number_in_call,
      nextCallAt: null,
    });
    expect(waitingOnContacts([zone(null, { dueBusy: true })], null, NOW, at('2026-03-09T18:00:00Z'))).toEqual({ reason: W.number_in_call, nextCallAt: null });
    expect(waitingOnContacts([zone('Europe/London', { dueBusy: true })], WEEKDAYS_9_TO_5, NOW, null)).toEqual({
      reason: W.outside_calling_window,
      nextCallAt: at('2026-03-10T09:00:00Z'),
    });
  });

  it('only retries ahead: the first retry’s time, or the window’s opening after it', () => {
    const retry = at('2026-03-09T18:30:00Z');
    expect(waitingOnContacts([zone(null, { nextDueAt: retry })], null, NOW, null)).toEqual({ reason: W.retry_wait, nextCallAt: retry });
    expect(waitingOnContacts([zone('America/Los_Angeles', { nextDueAt: retry })], WEEKDAYS_9_TO_5, NOW, null)).toEqual({
      reason: W.retry_wait,
      nextCallAt: retry,
    });
    expect(waitingOnContacts([zone('Europe/London', { nextDueAt: retry })], WEEKDAYS_9_TO_5, NOW, null)).toEqual({
      reason: W.outside_calling_window,
      nextCallAt: at('2026-03-10T09:00:00Z'),
    });
  });

  it('a retry of a call the carrier never took: the carrier is what it waits for', () => {
    const retry = at('2026-03-09T18:00:30Z');
    expect(waitingOnContacts([zone(null, { nextDueAt: retry, nextDueNotPlaced: true })], null, NOW, null)).toEqual({
      reason: W.carrier_unavailable,
      nextCallAt: retry,
    });
  });

  it('the earliest next call decides the reason, whichever zone and kind it is', () => {
    const zones = [
      zone('Europe/London', { dueNow: true }),
      zone(null, { nextDueAt: at('2026-03-09T20:00:00Z') }),
      zone('America/Los_Angeles', { nextDueAt: at('2026-03-09T23:59:00Z'), nextDueNotPlaced: true }),
    ];
    expect(waitingOnContacts(zones, WEEKDAYS_9_TO_5, NOW, null)).toEqual({ reason: W.carrier_unavailable, nextCallAt: at('2026-03-09T23:59:00Z') });
    expect(waitingOnContacts(zones, null, NOW, null)).toBeNull();
    expect(waitingOnContacts(zones.slice(1, 2), WEEKDAYS_9_TO_5, NOW, null)).toEqual({
      reason: W.outside_calling_window,
      nextCallAt: at('2026-03-10T09:00:00Z'),
    });
    expect(waitingOnContacts(zones.slice(0, 2), WEEKDAYS_9_TO_5, NOW, null)).toEqual({
      reason: W.outside_calling_window,
      nextCallAt: at('2026-03-10T09:00:00Z'),
    });
    // A tie keeps the first found.
    const tie = at('2026-03-09T19:00:00Z');
    expect(waitingOnContacts([zone(null, { nextDueAt: tie }), zone('UTC', { nextDueAt: tie, nextDueNotPlaced: true })], null, NOW, null)).toEqual({
      reason: W.retry_wait,
      nextCallAt: tie,
    });
    expect(waitingOnContacts([zone('UTC', { nextDueAt: tie, nextDueNotPlaced: true }), zone(null, { nextDueAt: tie })], null, NOW, null)).toEqual({
      reason: W.carrier_unavailable,
      nextCallAt: tie,
    });
  });

  it('at or past the execution’s scheduled stop there is no next call; the reason stays', () => {
    const retry = at('2026-03-09T18:30:00Z');
    expect(waitingOnContacts([zone(null, { nextDueAt: retry })], null, NOW, retry)).toEqual({ reason: W.retry_wait, nextCallAt: null });
    expect(waitingOnContacts([zone(null, { nextDueAt: retry })], null, NOW, at('2026-03-09T18:30:00.001Z'))).toEqual({
      reason: W.retry_wait,
      nextCallAt: retry,
    });
  });

  it('a window that never opens: outside it, with no next call', () => {
    const never = { startTime: '09:00', endTime: '17:00', daysOfWeek: [] };
    expect(waitingOnContacts([zone('UTC', { dueNow: true, nextDueAt: at('2026-03-10T00:00:00Z') })], never, NOW, null)).toEqual({
      reason: W.outside_calling_window,
      nextCallAt: null,
    });
  });
});

describe('waitingOf: what the execution shows', () => {
  const runner = { reason: W.outside_calling_window, nextCallAt: at('2026-03-10T09:00:00Z') };
  const start = at('2026-03-12T08:00:00Z');

  it('running: the runner’s finding; a time without a reason is none', () => {
    expect(waitingOf(S.running, runner, start)).toEqual(runner);
    expect(waitingOf(S.running, { reason: null, nextCallAt: runner.nextCallAt }, start)).toEqual({ reason: null, nextCallAt: null });
  });

  it('scheduled, paused: their status says why, whatever the runner last found', () => {
    expect(waitingOf(S.scheduled, runner, start)).toEqual({ reason: W.scheduled, nextCallAt: start });
    expect(waitingOf(S.scheduled, runner, null)).toEqual({ reason: W.scheduled, nextCallAt: null });
    expect(waitingOf(S.paused, runner, start)).toEqual({ reason: W.paused, nextCallAt: null });
    expect(waitingOf(S.paused_no_credits, runner, start)).toEqual({ reason: W.no_credits, nextCallAt: null });
    expect(waitingOf(S.paused_threshold, runner, start)).toEqual({ reason: W.paused_by_rule, nextCallAt: null });
  });

  it.each([S.completed, S.stopped, S.cancelled])('%s: final, nothing waits', (status) => {
    expect(waitingOf(status, runner, start)).toEqual({ reason: null, nextCallAt: null });
  });
});

describe('sameWaiting and waitingMessage', () => {
  const next = at('2026-03-10T09:00:00Z');

  it('two findings are the same when reason and next call time are', () => {
    expect(sameWaiting(null, null)).toBe(true);
    expect(sameWaiting({ reason: W.retry_wait, nextCallAt: next }, { reason: W.retry_wait, nextCallAt: new Date(next.getTime()), detail: 'x' })).toBe(true);
    expect(sameWaiting({ reason: W.retry_wait, nextCallAt: next }, { reason: W.retry_wait, nextCallAt: new Date(next.getTime() + 1) })).toBe(false);
    expect(sameWaiting({ reason: W.retry_wait, nextCallAt: next }, { reason: W.outside_calling_window, nextCallAt: next })).toBe(false);
    expect(sameWaiting({ reason: W.retry_wait, nextCallAt: null }, null)).toBe(false);
    expect(sameWaiting(null, { reason: W.concurrency_limit, nextCallAt: null })).toBe(false);
    expect(sameWaiting({ reason: W.concurrency_limit, nextCallAt: null }, { reason: W.concurrency_limit, nextCallAt: next })).toBe(false);
  });

  it('one line: the reason in words, what is missing, and the next call', () => {
    expect(waitingMessage({ reason: W.outside_calling_window, nextCallAt: next })).toBe(
      'execution waiting: outside every pending contact’s calling window; next call at 2026-03-10T09:00:00.000Z',
    );
    expect(waitingMessage({ reason: W.carrier_not_configured, nextCallAt: null, detail: 'PUBLIC_URL is not set' })).toBe(
      'execution waiting: the program’s carrier cannot place calls (PUBLIC_URL is not set)',
    );
  });

  it.each(Object.values(W))('%s has words of its own', (reason) => {
    const words = waitingMessage({ reason, nextCallAt: null }).replace('execution waiting: ', '');
    expect(words.length).toBeGreaterThan(8);
    expect(Object.values(W).filter((other) => waitingMessage({ reason: other, nextCallAt: null }) === `execution waiting: ${words}`)).toEqual([reason]);
  });
});
