import type { CallListInstanceCreateOptions } from 'twilio/lib/rest/api/v2010/account/call.js';
import type { PlaceCallRequest } from '../../carrier.js';
import { MACHINE_DETECTION_TIMEOUT_S, MACHINE_VERDICT_KINDS, type MachineVerdict, type MachineVerdictKind } from '../../machine-verdict.js';

/**
 * CreateCall's machine-detection parameters (the SDK's names for Twilio's MachineDetection,
 * MachineDetectionTimeout, AsyncAmd, AsyncAmdStatusCallback, AsyncAmdStatusCallbackMethod): with a
 * verdict URL, asynchronous detection that waits for the end of a machine's greeting, so the answer
 * URL is asked at once and the agent speaks without waiting; without one, synchronous `Enable`.
 */
type DetectionOptions = Pick<
  CallListInstanceCreateOptions,
  'machineDetection' | 'machineDetectionTimeout' | 'asyncAmd' | 'asyncAmdStatusCallback' | 'asyncAmdStatusCallbackMethod'
>;

export function machineDetectionOf(request: PlaceCallRequest): DetectionOptions {
  if (!request.machineDetection) return {};
  if (!request.machineVerdictUrl) return { machineDetection: 'Enable' };
  return {
    machineDetection: 'DetectMessageEnd',
    machineDetectionTimeout: MACHINE_DETECTION_TIMEOUT_S,
    asyncAmd: 'true',
    asyncAmdStatusCallback: request.machineVerdictUrl,
    asyncAmdStatusCallbackMethod: 'POST',
  };
}

/** An AsyncAmdStatusCallback's form (AccountSid, CallSid, AnsweredBy, MachineDetectionDuration); null when it names no call or no verdict we know. */
export function twilioMachineVerdict(fields: Record<string, string>): MachineVerdict | null {
  const kind = fields.AnsweredBy as MachineVerdictKind | undefined;
  if (!fields.CallSid || !kind || !MACHINE_VERDICT_KINDS.includes(kind)) return null;
  const duration = Number(fields.MachineDetectionDuration);
  return { carrierCallId: fields.CallSid, kind, detectionMs: fields.MachineDetectionDuration && Number.isFinite(duration) && duration >= 0 ? duration : null };
}
