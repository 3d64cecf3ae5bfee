import { InterruptionMode, PipelineMode, TurnDetectionType, TurnEagerness } from '../../agents/agent.enums.js';
import type { VoiceConfig } from '../../agents/agent.types.js';
import { realtimeInput } from './gemini-live.js';
import { gatewayDecides, turnDetection } from './openai-realtime.js';

const voice = (extra: Partial<VoiceConfig> = {}): VoiceConfig => ({ pipelineMode: PipelineMode.sts, ...extra });
const interruptions = (mode: InterruptionMode) => ({ mode, minWords: 1, minSpeechMs: 0, ignore: null });

describe('the turn-taking settings in each provider’s words', () => {
  it('OpenAI: the gateway decides (its own cut and reply off) in every mode but any', () => {
    expect(turnDetection(voice())).toEqual({ type: 'server_vad', create_response: false, interrupt_response: false });
    expect(gatewayDecides(voice({ interruptions: interruptions(InterruptionMode.never) }))).toBe(true);
    expect(turnDetection(voice({ interruptions: interruptions(InterruptionMode.any) }))).toEqual({ type: 'server_vad' });
    expect(gatewayDecides(null)).toBe(true);
  });

  it('OpenAI: semantic is semantic_vad with its eagerness, silence is server VAD with its pause', () => {
    const any = interruptions(InterruptionMode.any);
    expect(
      turnDetection(voice({ interruptions: any, turnDetection: { type: TurnDetectionType.semantic, eagerness: TurnEagerness.high, silenceMs: null } })),
    ).toEqual({
      type: 'semantic_vad',
      eagerness: 'high',
    });
    expect(turnDetection(voice({ interruptions: any, turnDetection: { type: TurnDetectionType.semantic, eagerness: null, silenceMs: null } }))).toEqual({
      type: 'semantic_vad',
    });
    expect(turnDetection(voice({ interruptions: any, turnDetection: { type: TurnDetectionType.silence, eagerness: null, silenceMs: 700 } }))).toEqual({
      type: 'server_vad',
      silence_duration_ms: 700,
    });
  });

  it('Gemini: never is NO_INTERRUPTION, a pause its activity detection’s silenceDurationMs; else Google’s defaults', () => {
    expect(realtimeInput(voice())).toBeNull();
    expect(realtimeInput(voice({ interruptions: interruptions(InterruptionMode.words) }))).toBeNull();
    expect(realtimeInput(voice({ interruptions: interruptions(InterruptionMode.never) }))).toEqual({ activityHandling: 'NO_INTERRUPTION' });
    expect(realtimeInput(voice({ turnDetection: { type: TurnDetectionType.silence, eagerness: null, silenceMs: 900 } }))).toEqual({
      automaticActivityDetection: { silenceDurationMs: 900 },
    });
    expect(realtimeInput(voice({ turnDetection: { type: TurnDetectionType.semantic, eagerness: TurnEagerness.low, silenceMs: null } }))).toBeNull();
  });
});
