import { AppError, type FieldError } from '../../common/errors.js';
import type { VoiceConfigInput } from './agent-config.inputs.js';
import { InterruptionMode, PipelineMode, TurnDetectionType } from './agent.enums.js';
import type { Interruptions, TurnDetection } from './agent.types.js';

/** Which pipelines read each setting: sent with another pipelineMode it would be stored and never used, so it is refused. */
const READ_BY: Record<'interruptions' | 'turnDetection', PipelineMode[]> = {
  interruptions: [PipelineMode.streaming, PipelineMode.sts],
  turnDetection: [PipelineMode.sts, PipelineMode.streaming],
};

/**
 * voiceConfig.interruptions and turnDetection as stored (defaults applied, `ignore` deduplicated;
 * unset, null: the defaults of docs/voice.md), or 400 naming the field that does not fit.
 */
export function voiceTurns(input: VoiceConfigInput): { interruptions: Interruptions | null; turnDetection: TurnDetection | null } {
  const problems: FieldError[] = [];
  for (const [field, modes] of Object.entries(READ_BY) as [keyof typeof READ_BY, PipelineMode[]][]) {
    if (input[field] !== undefined && !modes.includes(input.pipelineMode))
      problems.push({
        field: `voiceConfig.${field}`,
        message: `${field} applies only to pipelineMode ${modes.map((mode) => `"${mode}"`).join(' or ')} (this agent's is "${input.pipelineMode}")`,
      });
  }
  const detection = input.turnDetection;
  if (detection?.eagerness !== undefined && detection.type !== TurnDetectionType.semantic)
    problems.push({ field: 'voiceConfig.turnDetection.eagerness', message: 'eagerness applies only to turnDetection type "semantic"' });
  if (detection?.silenceMs !== undefined && detection.type !== TurnDetectionType.silence)
    problems.push({ field: 'voiceConfig.turnDetection.silenceMs', message: 'silenceMs applies only to turnDetection type "silence"' });
  // Deepgram's turn-taking recognizer is Flux: a semantic end of turn and a Nova model, or Flux and a silence one, contradict each other.
  const flux = input.sttModel ? /^flux-/.test(input.sttModel) : null;
  if (input.pipelineMode === PipelineMode.streaming && (input.sttProvider ?? 'deepgram') === 'deepgram' && detection && flux !== null) {
    if (detection.type === TurnDetectionType.semantic && !flux)
      problems.push({
        field: 'voiceConfig.sttModel',
        message: `turnDetection type "semantic" on Deepgram is Flux (/v2/listen): name a Flux model (flux-general-en, flux-general-multi) or none, not "${input.sttModel}"`,
      });
    if (detection.type === TurnDetectionType.silence && flux)
      problems.push({
        field: 'voiceConfig.turnDetection.type',
        message: `"${input.sttModel}" ends the caller's turn by its own model: turnDetection type "silence" does not apply (use "semantic", or leave it unset)`,
      });
  }
  if (problems.length > 0) throw AppError.badInput(problems);
  const given = input.interruptions;
  return {
    interruptions: given
      ? {
          mode: given.mode ?? InterruptionMode.words,
          minWords: given.minWords ?? 1,
          minSpeechMs: given.minSpeechMs ?? 0,
          ignore: given.ignore ? [...new Set(given.ignore.map((entry) => entry.trim()).filter(Boolean))] : null,
        }
      : null,
    turnDetection: detection ? { type: detection.type, eagerness: detection.eagerness ?? null, silenceMs: detection.silenceMs ?? null } : null,
  };
}
