import type { FieldError } from '../../common/errors.js';
import { DEEPGRAM_MODELS, GOOGLE_LIVE_MODELS, OPENAI_MODELS } from './voice-models.data.js';

// The voice models an agent may name, checked against the lists the providers publish
// (voice-models.data.ts), and the defaults chosen from them. A name the provider does not list is
// refused when the agent is saved (400) and, for an agent saved before this check, when it is
// activated (409) and when a call would open it: never silently replaced by another model.

/** OpenAI's newest GA realtime model in its list (gpt-realtime shuts down 2027-01-20: docs/voice.md). */
export const DEFAULT_REALTIME_MODEL = 'gpt-realtime-2.1';
/** The caller's words in a Realtime session and the OpenAI recognizer: OpenAI's replacement for whisper-1 and gpt-4o-transcribe on live audio. */
export const DEFAULT_TRANSCRIPTION_MODEL = 'gpt-live-transcribe';
/** Google's default Live model ("the default option for most low-latency voice agent experiences"). */
export const DEFAULT_GEMINI_LIVE_MODEL = 'gemini-3.8-live';
/** OpenAI's speech endpoint: every model it lists shuts down 2027-01-06 and none replaces them there (docs/voice.md). */
export const DEFAULT_SPEECH_MODEL = 'gpt-4o-mini-tts';
export const DEFAULT_DEEPGRAM_MODEL = 'nova-3';

/** One published list: who publishes it, where, and the names. */
export interface ModelList {
  provider: string;
  what: string;
  models: readonly string[];
}

export const REALTIME_MODELS: ModelList = { provider: 'OpenAI', what: 'Realtime model', models: OPENAI_MODELS.realtime };
export const TRANSCRIPTION_MODELS: ModelList = { provider: 'OpenAI', what: 'transcription model', models: OPENAI_MODELS.transcription };
export const SPEECH_MODELS: ModelList = { provider: 'OpenAI', what: 'speech model', models: OPENAI_MODELS.speech };
/** Both of Deepgram's live sockets: `/v1/listen`'s models and Flux's (`/v2/listen`, opened for a Flux model). */
export const DEEPGRAM_LISTEN_MODELS: ModelList = {
  provider: 'Deepgram',
  what: 'live transcription model',
  models: [...DEEPGRAM_MODELS.listen, ...DEEPGRAM_MODELS.flux],
};
export const LIVE_MODELS: ModelList = { provider: 'Google', what: 'Live model', models: GOOGLE_LIVE_MODELS.live };

/** Null when `name` is in `list`, else the sentence that refuses it, naming the accepted ones. */
export function unlistedModel(list: ModelList, name: string): string | null {
  if (list.models.includes(name)) return null;
  const article = /^[aeiou]/i.test(list.provider) ? 'an' : 'a';
  return `"${name}" is not ${article} ${list.provider} ${list.what}: ${list.provider} lists ${list.models.join(', ')}`;
}

/** What an agent's model and voice settings say, as stored or as sent. */
export interface VoiceModelChoice {
  model: string;
  voiceConfig?: {
    pipelineMode?: string | null;
    stsProvider?: string | null;
    sttProvider?: string | null;
    sttModel?: string | null;
    ttsProvider?: string | null;
    ttsModel?: string | null;
  } | null;
}

/**
 * Every voice model the agent names that its provider does not list, as field errors. An sts agent
 * whose `modelConfig.model` is of its speech-to-speech provider names the call's model; one of
 * another provider (builtin/echo for typed messages) leaves the call to the provider's default.
 * ElevenLabs publishes no list of its models (its AsyncAPI types `model_id` as any string): not checked.
 */
export function voiceModelProblems(choice: VoiceModelChoice): FieldError[] {
  const voice = choice.voiceConfig;
  if (!voice) return [];
  const problems: FieldError[] = [];
  const check = (field: string, list: ModelList, name: string | null | undefined) => {
    const problem = name ? unlistedModel(list, name) : null;
    if (problem) problems.push({ field, message: `${field} ${problem}` });
  };
  const slash = choice.model.indexOf('/');
  const [provider, name] = slash > 0 ? [choice.model.slice(0, slash), choice.model.slice(slash + 1)] : ['', ''];
  if (voice.pipelineMode === 'sts') {
    if (voice.stsProvider === 'openai' && provider === 'openai') check('modelConfig.model', REALTIME_MODELS, name);
    if (voice.stsProvider === 'google' && provider === 'google') check('modelConfig.model', LIVE_MODELS, name);
  }
  if (voice.pipelineMode === 'streaming') {
    if (voice.sttProvider === 'openai') check('voiceConfig.sttModel', TRANSCRIPTION_MODELS, voice.sttModel);
    if (voice.sttProvider === 'deepgram') check('voiceConfig.sttModel', DEEPGRAM_LISTEN_MODELS, voice.sttModel);
    if (voice.ttsProvider === 'openai') check('voiceConfig.ttsModel', SPEECH_MODELS, voice.ttsModel);
  }
  return problems;
}
