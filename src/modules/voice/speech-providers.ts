import type { FieldError } from '../../common/errors.js';
import {
  DEEPGRAM_LISTEN_MODELS,
  DEFAULT_DEEPGRAM_MODEL,
  DEFAULT_GEMINI_LIVE_MODEL,
  DEFAULT_REALTIME_MODEL,
  DEFAULT_SPEECH_MODEL,
  DEFAULT_TRANSCRIPTION_MODEL,
  LIVE_MODELS,
  REALTIME_MODELS,
  SPEECH_MODELS,
  TRANSCRIPTION_MODELS,
  unlistedModel,
  type ModelList,
} from '../models/voice-models.js';

// The speech providers, one descriptor each in one list per kind (recognizers, synthesizers,
// speech-to-speech): what an agent's voiceConfig may name, what it needs set, which models it
// takes and what it can do. The GraphQL enums' descriptions, the model checks (voice-models.ts),
// the readiness checks and the docs' table (docs/voice.md › Speech providers) are read from here,
// so a new provider is its class and one entry. Data only: no SDK is loaded by this file.

/** One provider of one kind, as an agent names it. */
export interface SpeechProviderDescriptor<Name extends string = string> {
  name: Name;
  /** Who and what, for the docs' table. */
  label: string;
  /** The GraphQL enum value's description. */
  description: string;
  /** The environment variables it needs set (none: it needs nothing). */
  credentials: readonly string[];
  /** The field of voiceConfig (or modelConfig) that names its model, and the list the provider publishes, or null when nothing is checked. */
  models: { field: string; list: ModelList; default: string } | null;
  /** Runs in the simulator only (it is not speech): refused on a real carrier at activation. */
  offlineOnly: boolean;
  /** What it does beyond the kind's contract, for the docs' table. */
  capabilities: readonly string[];
}

export const RECOGNIZERS = [
  {
    name: 'deepgram',
    label: 'Deepgram live transcription',
    description: 'Deepgram live transcription (DEEPGRAM_API_KEY)',
    credentials: ['DEEPGRAM_API_KEY'],
    models: { field: 'voiceConfig.sttModel', list: DEEPGRAM_LISTEN_MODELS, default: DEFAULT_DEEPGRAM_MODEL },
    offlineOnly: false,
    capabilities: ['interim results', 'endpointing', 'utterance ends', 'Flux turns (/v2/listen)'],
  },
  {
    name: 'openai',
    label: 'OpenAI streaming transcription',
    description: 'OpenAI’s streaming transcription (OPENAI_API_KEY)',
    credentials: ['OPENAI_API_KEY'],
    models: { field: 'voiceConfig.sttModel', list: TRANSCRIPTION_MODELS, default: DEFAULT_TRANSCRIPTION_MODEL },
    offlineOnly: false,
    capabilities: ['a Realtime transcription session'],
  },
  {
    name: 'builtin',
    label: 'The offline pair’s recognizer',
    description: 'The offline pair: only the simulator’s calls (it is not speech)',
    credentials: [],
    models: null,
    offlineOnly: true,
    capabilities: ['words carried beside the audio'],
  },
] as const satisfies readonly SpeechProviderDescriptor[];

export const SYNTHESIZERS = [
  {
    name: 'elevenlabs',
    label: 'ElevenLabs input-streaming synthesis',
    description: 'ElevenLabs input-streaming synthesis (ELEVENLABS_API_KEY)',
    credentials: ['ELEVENLABS_API_KEY'],
    // ElevenLabs publishes no list of its models (its AsyncAPI types `model_id` as any string).
    models: null,
    offlineOnly: false,
    capabilities: ['text streamed in as it is written', 'character alignment'],
  },
  {
    name: 'openai',
    label: 'OpenAI speech synthesis',
    description: 'OpenAI’s speech synthesis (OPENAI_API_KEY)',
    credentials: ['OPENAI_API_KEY'],
    models: { field: 'voiceConfig.ttsModel', list: SPEECH_MODELS, default: DEFAULT_SPEECH_MODEL },
    offlineOnly: false,
    capabilities: ['one request per sentence, played in order'],
  },
  {
    name: 'builtin',
    label: 'The offline pair’s synthesizer',
    description: 'The offline pair: only the simulator’s calls (it is not speech)',
    credentials: [],
    models: null,
    offlineOnly: true,
    capabilities: ['words carried beside the audio'],
  },
] as const satisfies readonly SpeechProviderDescriptor[];

/** A speech-to-speech provider also names the model provider (`<provider>/<model_name>` in modelConfig.model) whose key its calls use. */
export interface SpeechToSpeechDescriptor<Name extends string = string> extends SpeechProviderDescriptor<Name> {
  modelProvider: string;
}

export const SPEECH_TO_SPEECH = [
  {
    name: 'openai',
    label: 'OpenAI Realtime',
    description: 'OpenAI’s realtime speech model',
    credentials: ['OPENAI_API_KEY'],
    models: { field: 'modelConfig.model', list: REALTIME_MODELS, default: DEFAULT_REALTIME_MODEL },
    modelProvider: 'openai',
    offlineOnly: false,
    capabilities: ['tools', 'the caller’s words transcribed'],
  },
  {
    name: 'google',
    label: 'Gemini Live',
    description: 'Google’s live speech model',
    credentials: ['GEMINI_API_KEY'],
    models: { field: 'modelConfig.model', list: LIVE_MODELS, default: DEFAULT_GEMINI_LIVE_MODEL },
    modelProvider: 'google',
    offlineOnly: false,
    capabilities: ['tools', 'the caller’s words transcribed'],
  },
] as const satisfies readonly SpeechToSpeechDescriptor[];

export type RecognizerName = (typeof RECOGNIZERS)[number]['name'];
export type SynthesizerName = (typeof SYNTHESIZERS)[number]['name'];
export type SpeechToSpeechName = (typeof SPEECH_TO_SPEECH)[number]['name'];

/** What a streaming agent gets when it names none. */
export const DEFAULT_RECOGNIZER: RecognizerName = 'deepgram';
export const DEFAULT_SYNTHESIZER: SynthesizerName = 'elevenlabs';

/** The descriptor of `name` in `list`, or null. */
export function descriptorOf<D extends SpeechProviderDescriptor>(list: readonly D[], name: string | null | undefined): D | null {
  return list.find((descriptor) => descriptor.name === name) ?? null;
}

/** A GraphQL enum's valuesConfig, from a list. */
export function enumDescriptions(list: readonly SpeechProviderDescriptor[]): Record<string, { description: string }> {
  return Object.fromEntries(list.map((descriptor) => [descriptor.name, { description: descriptor.description }]));
}

/** The docs' table of the speech providers (docs/voice.md › Speech providers), one row per provider. */
export function speechProviderTable(): string {
  const rows: string[] = ['| kind | `name` | provider | needs | models (default) | what it does |', '|---|---|---|---|---|---|'];
  const kinds: [string, readonly SpeechProviderDescriptor[]][] = [
    ['recognizer (`sttProvider`)', RECOGNIZERS],
    ['synthesizer (`ttsProvider`)', SYNTHESIZERS],
    ['speech to speech (`stsProvider`)', SPEECH_TO_SPEECH],
  ];
  for (const [kind, list] of kinds) {
    for (const descriptor of list) {
      const needs = descriptor.offlineOnly ? 'nothing; the simulator only' : descriptor.credentials.map((name) => `\`${name}\``).join(', ');
      const models = descriptor.models
        ? `${descriptor.models.list.models.length} listed by ${descriptor.models.list.provider} (\`${descriptor.models.default}\`)`
        : 'not checked';
      rows.push(`| ${kind} | \`${descriptor.name}\` | ${descriptor.label} | ${needs} | ${models} | ${descriptor.capabilities.join(', ')} |`);
    }
  }
  return rows.join('\n');
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
 * Every voice model the agent names that its provider does not list, as field errors: each
 * provider's descriptor names the field and the list. A name the provider does not list is refused
 * when the agent is saved (400) and, for an agent saved before this check, when it is activated
 * (409) and when a call would open it: never silently replaced by another model. An sts agent whose
 * `modelConfig.model` is of its speech-to-speech provider names the call's model; one of another
 * provider (builtin/echo for typed messages) leaves the call to the provider's default.
 */
export function voiceModelProblems(choice: VoiceModelChoice): FieldError[] {
  const voice = choice.voiceConfig;
  if (!voice) return [];
  const problems: FieldError[] = [];
  const check = (descriptor: SpeechProviderDescriptor | null, name: string | null | undefined) => {
    const problem = descriptor?.models && name ? unlistedModel(descriptor.models.list, name) : null;
    if (problem) problems.push({ field: descriptor!.models!.field, message: `${descriptor!.models!.field} ${problem}` });
  };
  const slash = choice.model.indexOf('/');
  const [provider, name] = slash > 0 ? [choice.model.slice(0, slash), choice.model.slice(slash + 1)] : ['', ''];
  if (voice.pipelineMode === 'sts') {
    const sts = descriptorOf(SPEECH_TO_SPEECH, voice.stsProvider);
    if (sts && provider === sts.modelProvider) check(sts, name);
  }
  if (voice.pipelineMode === 'streaming') {
    check(descriptorOf(RECOGNIZERS, voice.sttProvider), voice.sttModel);
    check(descriptorOf(SYNTHESIZERS, voice.ttsProvider), voice.ttsModel);
  }
  return problems;
}
