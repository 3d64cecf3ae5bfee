/**
 * What asynchronous answering-machine detection concluded of an answered call, in Twilio's words
 * (its `AnsweredBy` values, which other carriers map onto): a person, a machine whose greeting has
 * started (wait for its end), a machine whose greeting ended with a beep, with silence or otherwise
 * (the moment to leave a message), a fax, or no conclusion.
 */
export type MachineVerdictKind = 'human' | 'machine_start' | 'machine_end_beep' | 'machine_end_silence' | 'machine_end_other' | 'fax' | 'unknown';

export const MACHINE_VERDICT_KINDS: readonly MachineVerdictKind[] = [
  'human',
  'machine_start',
  'machine_end_beep',
  'machine_end_silence',
  'machine_end_other',
  'fax',
  'unknown',
];

export interface MachineVerdict {
  /** The carrier's id of the call it is about. */
  carrierCallId: string;
  kind: MachineVerdictKind;
  /** How long the carrier listened before it concluded (Twilio's MachineDetectionDuration), when it says. */
  detectionMs: number | null;
}

/** Whether the verdict says a machine's greeting is over: the moment a message can be left after the beep. */
export function isGreetingEnd(kind: MachineVerdictKind): boolean {
  return kind === 'machine_end_beep' || kind === 'machine_end_silence' || kind === 'machine_end_other';
}

/**
 * How long after the answer a machine verdict still counts: one later than this is ignored (the
 * person has been talking to the agent for that long; detection that slow is wrong more often than
 * not). Twilio's detection gives up after MachineDetectionTimeout, 30 s, asked for explicitly.
 */
export const MACHINE_VERDICT_WINDOW_MS = 45_000;

/** The detection timeout asked of the carrier, in seconds (Twilio's MachineDetectionTimeout; its default too). */
export const MACHINE_DETECTION_TIMEOUT_S = 30;

/**
 * A verdict callback's form in the words Twilio's AsyncAmdStatusCallback and Telnyx's TeXML AMD
 * callback (TexmlCallAmdWebhook) both use: CallSid, AnsweredBy (MACHINE_VERDICT_KINDS) and
 * MachineDetectionDuration in milliseconds; null when it names no call or no verdict we know.
 */
export function machineVerdictOfForm(fields: Record<string, string>): MachineVerdict | null {
  const kind = fields.AnsweredBy as MachineVerdictKind | undefined;
  if (!fields.CallSid || !kind || !MACHINE_VERDICT_KINDS.includes(kind)) return null;
  const duration = Number(fields.MachineDetectionDuration);
  return { carrierCallId: fields.CallSid, kind, detectionMs: fields.MachineDetectionDuration && Number.isFinite(duration) && duration >= 0 ? duration : null };
}
