import { FINAL_CALL_STATUSES, isFinalCallStatus, nextCallStatus, outcomeOfEnded } from './call-state.js';
import { CallStatus } from './telephony.enums.js';

const ALL = Object.values(CallStatus);
const LIVE = [CallStatus.queued, CallStatus.ringing, CallStatus.in_progress];
const ORDER = (status: CallStatus) => (isFinalCallStatus(status) ? 3 : LIVE.indexOf(status));

describe('call state machine', () => {
  it('knows the five final statuses', () => {
    expect([...FINAL_CALL_STATUSES].sort()).toEqual(['busy', 'canceled', 'completed', 'failed', 'no_answer']);
    for (const status of LIVE) expect(isFinalCallStatus(status)).toBe(false);
  });

  // Every pair (current, reported): forward moves are taken, everything else is ignored.
  it.each(ALL.flatMap((current) => ALL.map((reported) => [current, reported] as const)))('%s then %s', (current, reported) => {
    const next = nextCallStatus(current, reported);
    if (isFinalCallStatus(current)) expect(next).toBeNull();
    else if (ORDER(reported) > ORDER(current)) expect(next).toBe(reported);
    else expect(next).toBeNull();
  });

  it('never goes back from completed to ringing, nor counts a second final status', () => {
    expect(nextCallStatus(CallStatus.completed, CallStatus.ringing)).toBeNull();
    expect(nextCallStatus(CallStatus.completed, CallStatus.completed)).toBeNull();
    expect(nextCallStatus(CallStatus.busy, CallStatus.completed)).toBeNull();
    expect(nextCallStatus(CallStatus.in_progress, CallStatus.ringing)).toBeNull();
    expect(nextCallStatus(CallStatus.queued, CallStatus.completed)).toBe(CallStatus.completed);
  });

  it('names the outcome of each final status', () => {
    expect(outcomeOfEnded(CallStatus.completed, 'human')).toBe('answered');
    expect(outcomeOfEnded(CallStatus.completed, null)).toBe('answered');
    expect(outcomeOfEnded(CallStatus.completed, 'unknown')).toBe('answered');
    expect(outcomeOfEnded(CallStatus.completed, 'machine')).toBe('voicemail');
    expect(outcomeOfEnded(CallStatus.busy, null)).toBe('busy');
    expect(outcomeOfEnded(CallStatus.no_answer, null)).toBe('no_answer');
    expect(outcomeOfEnded(CallStatus.failed, null)).toBe('failed');
    expect(outcomeOfEnded(CallStatus.canceled, null)).toBe('failed');
    expect(() => outcomeOfEnded(CallStatus.ringing, null)).toThrow('not a final');
  });

  it('names a completed call whose voicemail message was left voicemail_left, and nothing else', () => {
    expect(outcomeOfEnded(CallStatus.completed, 'machine', true)).toBe('voicemail_left');
    expect(outcomeOfEnded(CallStatus.completed, 'machine', false)).toBe('voicemail');
    expect(outcomeOfEnded(CallStatus.busy, 'machine', true)).toBe('busy');
    expect(outcomeOfEnded(CallStatus.failed, 'machine', true)).toBe('failed');
  });
});
