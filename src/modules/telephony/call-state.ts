import type { AnsweredBy } from './carrier.js';
import { CallStatus } from './telephony.enums.js';

/** How far along a call is; a report is applied only when it moves the call forward. */
const STAGE: Record<CallStatus, number> = {
  [CallStatus.queued]: 0,
  [CallStatus.ringing]: 1,
  [CallStatus.in_progress]: 2,
  [CallStatus.completed]: 3,
  [CallStatus.busy]: 3,
  [CallStatus.no_answer]: 3,
  [CallStatus.failed]: 3,
  [CallStatus.canceled]: 3,
};

export const FINAL_CALL_STATUSES: readonly CallStatus[] = Object.values(CallStatus).filter((status) => STAGE[status] === 3);

export function isFinalCallStatus(status: CallStatus): boolean {
  return STAGE[status] === 3;
}

/**
 * The status a call moves to when the carrier reports `reported`, or null when the report
 * changes nothing: a duplicate, a report older than what is known (callbacks arrive out of
 * order), or anything after a final status (a completed call never goes back to ringing, and
 * its first final status is the one that counts).
 */
export function nextCallStatus(current: CallStatus, reported: CallStatus): CallStatus | null {
  return STAGE[reported] > STAGE[current] ? reported : null;
}

export type EndedOutcome = 'answered' | 'voicemail' | 'voicemail_left' | 'no_answer' | 'busy' | 'failed';

/**
 * What a final status means for the contact: a completed call a machine answered is a voicemail,
 * and `voicemail_left` when a message was left on it after the beep (voicemail-drop.ts).
 */
export function outcomeOfEnded(status: CallStatus, answeredBy: AnsweredBy | null, voicemailLeft = false): EndedOutcome {
  switch (status) {
    case CallStatus.completed:
      if (voicemailLeft) return 'voicemail_left';
      return answeredBy === 'machine' ? 'voicemail' : 'answered';
    case CallStatus.busy:
      return 'busy';
    case CallStatus.no_answer:
      return 'no_answer';
    case CallStatus.failed:
    case CallStatus.canceled:
      return 'failed';
    default:
      throw new Error(`${status} is not a final call status`);
  }
}
