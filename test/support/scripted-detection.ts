// Answering machine detection as both loopback carriers (fake-twilio.ts, fake-telnyx.ts) play it:
// a call's script names the verdicts; synchronous detection answers the last one with the answer
// URL, detection in the background posts each in turn while the first document plays.

/** What a call's script says of its machine detection. */
export interface DetectionScript {
  outcome: string;
  /** With AsyncAmd: the AnsweredBy verdicts posted to its callback, in order; default machine_end_beep for a voicemail, else human. */
  answeredBy?: string[];
  /** MachineDetectionDuration sent with each verdict (milliseconds); default 1800. */
  detectionMs?: number;
}

/**
 * Decides the call's `answeredBy` when detection is synchronous, and returns, when it runs in the
 * background, what posts the verdicts (each set on the call before `send` posts it).
 */
export function scriptedDetection(
  call: { answeredBy: string | null },
  script: DetectionScript,
  detection: { synchronous: boolean; send: ((verdict: string, detectionMs: number) => Promise<void>) | null },
): (() => Promise<void>) | undefined {
  const verdicts = script.answeredBy ?? [script.outcome === 'voicemail' ? 'machine_end_beep' : 'human'];
  if (detection.synchronous) call.answeredBy = verdicts.at(-1)!;
  const { send } = detection;
  if (!send) return undefined;
  return async () => {
    for (const verdict of verdicts) {
      call.answeredBy = verdict;
      await send(verdict, script.detectionMs ?? 1800);
    }
  };
}
