import { DEEPGRAM_MODELS, GOOGLE_LIVE_MODELS, OPENAI_MODELS } from './voice-models.data.js';

// The voice models an agent may name, checked against the lists the providers publish
// (voice-models.data.ts), and the defaults chosen from them; each speech provider's descriptor
// (voice/speech-providers.ts) names the list its model is checked against. A name the provider does not list is
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
