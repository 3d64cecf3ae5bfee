import { own } from '../../../common/own.js';
import { CallStatus } from '../telephony.enums.js';

// What Twilio's REST API and Telnyx's TeXML (which speaks Twilio's words) both say of a call.

const STATUSES: Record<string, CallStatus> = {
  queued: CallStatus.queued,
  initiated: CallStatus.queued,
  ringing: CallStatus.ringing,
  'in-progress': CallStatus.in_progress,
  completed: CallStatus.completed,
  busy: CallStatus.busy,
  'no-answer': CallStatus.no_answer,
  failed: CallStatus.failed,
  canceled: CallStatus.canceled,
};

/** A `CallStatus` (or a call resource's `status`) in the state machine's words; null when unknown. */
export function twimlCallStatusOf(status: string | undefined | null): CallStatus | null {
  return (status && own(STATUSES, status)) || null;
}

/** A duration the carrier sent (`CallDuration`, `RecordingDuration`, a resource's `duration`) in whole seconds; null when absent or not one. */
export function wholeSeconds(value: string | number | undefined | null): number | null {
  if (value === undefined || value === null || value === '') return null;
  const number = Number(value);
  return Number.isInteger(number) && number >= 0 ? number : null;
}
