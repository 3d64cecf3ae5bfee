// Data, not code of ours: the model names each provider publishes as accepted, copied verbatim from
// the provider's own description (the enum of the named schema, at the named commit), for validating
// the models agents name and checking that the defaults are still offered. voice-models.test.ts
// checks each list against the specification excerpts vendored under test/support/ (the same commits).
// To refresh: take the newer description, update the commit, date and list, then run that test.

/** OpenAI's OpenAPI description (MIT), `openai/openai-openapi` `openapi.json`. */
export const OPENAI_MODELS = {
  source: { repository: 'https://github.com/openai/openai-openapi', commit: 'f85dbe223d40e1a31cba812ab2d755c7e98a92a3', date: '2026-08-21', license: 'MIT' },
  /** `RealtimeSessionCreateRequestGA.model`: the models of a Realtime (speech-to-speech) session. */
  realtime: [
    'gpt-realtime',
    'gpt-realtime-1.5',
    'gpt-realtime-2',
    'gpt-realtime-2.1',
    'gpt-realtime-2.1-mini',
    'gpt-realtime-2025-08-28',
    'gpt-4o-realtime-preview',
    'gpt-4o-realtime-preview-2024-10-01',
    'gpt-4o-realtime-preview-2024-12-17',
    'gpt-4o-realtime-preview-2025-06-03',
    'gpt-4o-mini-realtime-preview',
    'gpt-4o-mini-realtime-preview-2024-12-17',
    'gpt-realtime-mini',
    'gpt-realtime-mini-2025-10-06',
    'gpt-realtime-mini-2025-12-15',
    'gpt-audio-1.5',
    'gpt-audio-mini',
    'gpt-audio-mini-2025-10-06',
    'gpt-audio-mini-2025-12-15',
  ],
  /** `AudioTranscription.model`: the transcription models of Realtime and Realtime transcription sessions. */
  transcription: [
    'whisper-1',
    'gpt-transcribe',
    'gpt-live-transcribe',
    'gpt-4o-mini-transcribe',
    'gpt-4o-mini-transcribe-2025-12-15',
    'gpt-4o-transcribe',
    'gpt-4o-transcribe-diarize',
    'gpt-realtime-whisper',
  ],
  /** `CreateSpeechRequest.model`: the models of `/v1/audio/speech`. */
  speech: ['tts-1', 'tts-1-hd', 'gpt-4o-mini-tts', 'gpt-4o-mini-tts-2025-12-15'],
} as const;

/** Deepgram's AsyncAPI description (CC BY 4.0, © Deepgram), `deepgram/deepgram-api-specs` `asyncapi.yml`: `ListenV1Model`, the models of `/v1/listen`, and `ListenV2Model`, Flux's of `/v2/listen`. */
export const DEEPGRAM_MODELS = {
  source: {
    repository: 'https://github.com/deepgram/deepgram-api-specs',
    commit: '4ba987cf0522671a6a0ec0b6012670e4946f6430',
    date: '2026-07-22',
    license: 'CC-BY-4.0',
  },
  listen: [
    'nova-3',
    'nova-3-general',
    'nova-3-medical',
    'nova-2',
    'nova-2-general',
    'nova-2-meeting',
    'nova-2-finance',
    'nova-2-conversationalai',
    'nova-2-voicemail',
    'nova-2-video',
    'nova-2-medical',
    'nova-2-drivethru',
    'nova-2-automotive',
    'nova',
    'nova-general',
    'nova-phonecall',
    'nova-medical',
    'enhanced',
    'enhanced-general',
    'enhanced-meeting',
    'enhanced-phonecall',
    'enhanced-finance',
    'base',
    'meeting',
    'phonecall',
    'finance',
    'conversationalai',
    'voicemail',
    'video',
    'custom',
  ],
  /** `ListenV2Model`: Flux, the turn-taking models of `/v2/listen` (only there). */
  flux: ['flux-general-en', 'flux-general-multi'],
} as const;

/**
 * Google publishes no machine-readable list of Live models: these are the ones its Live API pages
 * name (ai.google.dev/gemini-api/docs/live-guide, the model comparison, and the model pages of
 * gemini-3.8-live and gemini-3.8-live-extended-thinking), read on 2026-12-02 (CC BY 4.0, Google
 * Developers site content).
 */
export const GOOGLE_LIVE_MODELS = {
  source: {
    pages: ['https://ai.google.dev/gemini-api/docs/live-guide', 'https://ai.google.dev/gemini-api/docs/models/gemini-3.8-live-extended-thinking'],
    read: '2026-12-02',
    license: 'CC-BY-4.0',
  },
  live: ['gemini-3.8-live', 'gemini-3.8-live-extended-thinking', 'gemini-3.1-flash-live-preview', 'gemini-2.5-flash-native-audio-preview-12-2025'],
} as const;
