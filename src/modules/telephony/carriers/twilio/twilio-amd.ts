import type { CallListInstanceCreateOptions } from 'twilio/lib/rest/api/v2010/account/call.js';
import type { PlaceCallRequest } from '../../carrier.js';
import { MACHINE_DETECTION_TIMEOUT_S } from '../../machine-verdict.js';

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
