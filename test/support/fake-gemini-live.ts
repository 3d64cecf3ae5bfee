import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import WebSocket, { WebSocketServer } from 'ws';
import { closeLoopback, sessionWaiters } from './loopback-sessions.js';
import { waiting } from '../helpers/eventually.js';
import { quotedLine } from './fake-openai-realtime.js';

// A Gemini Live double on loopback (the Gemini API's BidiGenerateContent WebSocket), for the
// speech-to-speech bridge's Google provider. Google publishes no machine-readable description of
// Live: the messages follow Google's "Live API - WebSockets API reference"
// (https://ai.google.dev/api/live) and the "Gemini 3.8 Live" model page
// (https://ai.google.dev/gemini-api/docs/models/gemini-3.8-live), both looked up on 2026-11-26, and
// the fields each message may carry are the ones of @google/genai 3.1.0's own types
// (dist/genai.d.ts: LiveClientMessage, LiveClientSetup, LiveClientRealtimeInput,
// LiveClientToolResponse, FunctionResponse, FunctionDeclaration, AudioTranscriptionConfig,
// SessionResumptionConfig, LiveServerMessage and what they hold), written out below as shapes.
//
// Like the service, it parses every client message as the proto's JSON: a field it does not know,
// or a value of the wrong type, closes the socket with 1007 and the protobuf parser's words ("Invalid
// JSON payload received. Unknown name ..."); a first message that is not `setup`, a second `setup`,
// an unknown model, or a key that is not the one it was given close with 1008. It checks what 3.8
// Live refuses (thinking settings, affective dialog, proactive audio turned off, a modality other
// than audio), that audio comes as `audio/pcm;rate=16000` whole 16-bit samples, and that a tool
// response answers a call it made. It answers as the service does: `setupComplete`, a session
// resumption handle, the caller's transcription (`inputTranscription`), the reply as `modelTurn`
// inline audio (PCM16 24 kHz tones it generates, one per word) with `outputTranscription`,
// `toolCall`s (waiting for their `toolResponse`), `interrupted` when the caller speaks over a reply
// (not when the setup's `realtimeInputConfig.activityHandling` is NO_INTERRUPTION: the reply goes on
// and the caller's turn is answered after it),
// `generationComplete` and `turnComplete`, and `goAway` when a test asks; a session opened with a
// known handle is marked resumed. A turn may declare the service's delay before its reply
// (`delayMs`), `everyTurn` answers endless calls, and each session notes when every audio message
// arrived and every audio part left, and which message ended each turn (a benchmark's relay times,
// on the clock of the process it runs in), as the OpenAI double does. Realtime text input is a
// message of the caller's side the model answers: one that asks for a line quoted as a JSON string
// (the gateway's first message) is answered with exactly that line, spoken; any other (the caller's
// keys) is noted in `texts` and answered with the next scripted turn. As Google's Gemini 3.x
// Live models do, `clientContent` is refused (1007) unless it seeds the history
// (`historyConfig.initialHistoryInClientContent`) before the model's first turn.

export type Json = Record<string, any>;
type Shape = 'string' | 'number' | 'boolean' | 'base64' | 'any' | { enum: string[] } | { of: Shape } | { [field: string]: Shape };

const enumOf = (...values: string[]): Shape => ({ enum: values });
const listOf = (shape: Shape): Shape => ({ of: shape });

const PART: Shape = { text: 'string', inlineData: { data: 'base64', mimeType: 'string' }, thought: 'boolean' };
const CONTENT: Shape = { role: 'string', parts: listOf(PART) };
const TRANSCRIPTION_CONFIG: Shape = {
  languageCodes: listOf('string'),
  customVocabulary: listOf('string'),
  wordTimestamp: 'boolean',
  diarization: 'boolean',
  mode: enumOf('VERBATIM', 'SMART'),
};
const SETUP: Shape = {
  model: 'string',
  generationConfig: {
    responseModalities: listOf(enumOf('TEXT', 'AUDIO', 'IMAGE')),
    temperature: 'number',
    topP: 'number',
    topK: 'number',
    maxOutputTokens: 'number',
    seed: 'number',
    mediaResolution: 'string',
    speechConfig: { voiceConfig: { prebuiltVoiceConfig: { voiceName: 'string' } }, languageCode: 'string' },
    thinkingConfig: 'any',
    enableAffectiveDialog: 'boolean',
  },
  systemInstruction: CONTENT,
  tools: listOf({
    functionDeclarations: listOf({
      name: 'string',
      description: 'string',
      parameters: 'any',
      parametersJsonSchema: 'any',
      response: 'any',
      responseJsonSchema: 'any',
      behavior: enumOf('UNSPECIFIED', 'BLOCKING', 'NON_BLOCKING'),
    }),
    googleSearch: 'any',
  }),
  realtimeInputConfig: {
    automaticActivityDetection: {
      disabled: 'boolean',
      startOfSpeechSensitivity: 'string',
      endOfSpeechSensitivity: 'string',
      prefixPaddingMs: 'number',
      silenceDurationMs: 'number',
    },
    activityHandling: enumOf('ACTIVITY_HANDLING_UNSPECIFIED', 'START_OF_ACTIVITY_INTERRUPTS', 'NO_INTERRUPTION'),
    turnCoverage: 'string',
  },
  // `transparent` is Vertex AI's only (the SDK refuses it for the Gemini API).
  sessionResumption: { handle: 'string' },
  contextWindowCompression: { triggerTokens: 'any', slidingWindow: { targetTokens: 'any' } },
  inputAudioTranscription: TRANSCRIPTION_CONFIG,
  outputAudioTranscription: TRANSCRIPTION_CONFIG,
  proactivity: { proactiveAudio: 'boolean' },
  historyConfig: 'any',
  safetySettings: 'any',
  labels: 'any',
};
const CLIENT_MESSAGE: Shape = {
  setup: SETUP,
  clientContent: { turns: listOf(CONTENT), turnComplete: 'boolean' },
  realtimeInput: {
    audio: { data: 'base64', mimeType: 'string' },
    audioStreamEnd: 'boolean',
    video: { data: 'base64', mimeType: 'string' },
    mediaChunks: listOf({ data: 'base64', mimeType: 'string' }),
    text: 'string',
    activityStart: {},
    activityEnd: {},
  },
  toolResponse: {
    functionResponses: listOf({
      id: 'string',
      name: 'string',
      response: 'any',
      parts: 'any',
      scheduling: enumOf('SCHEDULING_UNSPECIFIED', 'SILENT', 'WHEN_IDLE', 'INTERRUPT'),
      willContinue: 'boolean',
    }),
  },
  contextUpdate: { systemInstruction: CONTENT, tools: 'any' },
};

/** The first field of `value` that `shape` does not allow, in the protobuf JSON parser's words; null when it parses. */
export function shapeProblem(value: unknown, shape: Shape, path: string): string | null {
  if (shape === 'any') return null;
  const wrong = (type: string) => `Invalid value at '${path}' (${type}), ${JSON.stringify(value)?.slice(0, 60)}`;
  if (shape === 'string') return typeof value === 'string' ? null : wrong('TYPE_STRING');
  if (shape === 'number') return typeof value === 'number' ? null : wrong('TYPE_NUMBER');
  if (shape === 'boolean') return typeof value === 'boolean' ? null : wrong('TYPE_BOOL');
  if (shape === 'base64') return typeof value === 'string' && /^[A-Za-z0-9+/]*={0,2}$/.test(value) && value.length % 4 === 0 ? null : wrong('TYPE_BYTES');
  if ('enum' in shape && Array.isArray(shape.enum)) return typeof value === 'string' && shape.enum.includes(value) ? null : wrong('TYPE_ENUM');
  if ('of' in shape && typeof shape.of !== 'undefined' && Object.keys(shape).length === 1) {
    if (!Array.isArray(value)) return wrong('TYPE_LIST');
    for (const [index, item] of value.entries()) {
      const problem = shapeProblem(item, shape.of as Shape, `${path}[${index}]`);
      if (problem) return problem;
    }
    return null;
  }
  if (!value || typeof value !== 'object' || Array.isArray(value)) return wrong('TYPE_MESSAGE');
  const fields = shape as Record<string, Shape>;
  for (const [key, item] of Object.entries(value as Json)) {
    if (!Object.hasOwn(fields, key)) return `Invalid JSON payload received. Unknown name "${key}" at '${path}': Cannot find field.`;
    const problem = shapeProblem(item, fields[key]!, path ? `${path}.${key}` : key);
    if (problem) return problem;
  }
  return null;
}

/** The Live models the double knows (Gemini API names, as `models/<name>`). */
export const LIVE_MODELS = [
  'gemini-3.8-live',
  'gemini-3.8-live-extended-thinking',
  'gemini-3.1-flash-live-preview',
  'gemini-2.5-flash-native-audio-preview-12-2025',
];
/** Google's Live guide (read 2026-12-02): the extended-thinking model takes thinkingLevel low, medium or high (minimal is not available), and function calling is asynchronous only. */
const EXTENDED_THINKING_LEVELS = ['LOW', 'MEDIUM', 'HIGH'];
/** The models that take `contextUpdate` mid-session (Gemini 3.8 Live's, per Google's session page); the others refuse it. */
const CONTEXT_UPDATE_MODELS = ['gemini-3.8-live', 'gemini-3.8-live-extended-thinking'];

/**
 * Where the caller's transcription goes among the reply's messages. Google's Live reference: the
 * input (and output) transcription "is independent to the model turn which means it doesn't imply
 * any ordering between transcription and model turn"; all of these are allowed.
 *  - `caller-first`: both fragments of the caller's words, then the reply (the double's default);
 *  - `caller-split`: the first fragment, the reply's first word (its audio and words), the second fragment, the rest;
 *  - `caller-after-reply`: the whole reply and generationComplete, then the caller's words, then turnComplete;
 *  - `caller-after-complete`: the whole reply and turnComplete, then the caller's words;
 *  - `words-after-audio`: the caller first, then all the reply's audio, then its words (the output transcription lagging);
 *  - `words-after-complete`: the caller first, the reply's audio, generationComplete and turnComplete, then its words;
 *  - `all-after-complete`: the reply's audio and turnComplete, then the caller's words, then the reply's words.
 * An interrupted turn has no generationComplete ("it will go through interrupted > turn_complete"); its
 * lagging words come where the order puts them, after the interruption.
 */
export type GeminiOrder =
  'caller-first' | 'caller-split' | 'caller-after-reply' | 'caller-after-complete' | 'words-after-audio' | 'words-after-complete' | 'all-after-complete';
/** The orders whose reply words come after all its audio. */
const LAGGING_WORDS: GeminiOrder[] = ['words-after-audio', 'words-after-complete', 'all-after-complete'];
export const LIVE_PATH = '/ws/google.ai.generativelanguage.v1beta.GenerativeService.BidiGenerateContent';
export const GEMINI_AGENT_HZ = 440;
export const GEMINI_WORD_MS = 200;
/** The tone of a line the gateway asked for word for word (the first message). */
export const GEMINI_FIRST_LINE_HZ = 660;
const INPUT_HZ = 16_000;
const OUTPUT_HZ = 24_000;
const SPEECH_RMS = 1500;
const SILENCE_RMS = 300;
const SILENCE_TO_STOP_MS = 300;

export interface GeminiSpokenPart {
  text: string;
  hz?: number;
}

export interface GeminiTurn {
  /** What the transcription says the caller said (sent in two fragments). */
  caller: string;
  reply: GeminiSpokenPart[];
  /** Tools the model calls after speaking; the turn completes once each is answered. */
  tools?: { name: string; args: Record<string, unknown> }[];
  /** What the model says, in the same turn, once its tools' responses came (given in order): a model that speaks to them. */
  afterTools?: (responses: Record<string, unknown>[]) => GeminiSpokenPart[];
  /** Milliseconds between two words sent; default 5. */
  paceMs?: number;
  /** The service's declared delay: milliseconds from the end of the caller's speech (its activity detection) to the reply's first message; default 0. */
  delayMs?: number;
  /** Where the caller's words go among the reply's messages; default `caller-first`. */
  order?: GeminiOrder;
  /** Whether the caller's last fragment says `finished: true` (the SDK's Transcription.finished); default true. */
  finished?: boolean;
}

/** One caller turn as the double heard it (performance.now() times). */
export interface GeminiHeardTurn {
  /** Index in `appendedAt` of the audio message that ended the turn. */
  frameIndex: number;
  /** When the double decided the caller had stopped. */
  stoppedAt: number;
  /** Index in `audioSentAt` of the reply's first audio part, once sent. */
  firstAudioIndex: number | null;
}

/** PCM16 little-endian bytes of a sine tone at 24 kHz. */
export function tone24k(hz: number, ms: number, amplitude = 8000): Buffer {
  const samples = Math.round((OUTPUT_HZ * ms) / 1000);
  const bytes = Buffer.alloc(samples * 2);
  for (let i = 0; i < samples; i++) bytes.writeInt16LE(Math.round(amplitude * Math.sin((2 * Math.PI * hz * i) / OUTPUT_HZ)), i * 2);
  return bytes;
}

/** A word's audio, base64, made once per pitch (a benchmark sends thousands). */
const wordAudioCache = new Map<number, string>();
function wordAudio(hz: number): string {
  let audio = wordAudioCache.get(hz);
  if (!audio) wordAudioCache.set(hz, (audio = tone24k(hz, GEMINI_WORD_MS).toString('base64')));
  return audio;
}

export interface GeminiProblem {
  message: unknown;
  problem: string;
}

export class FakeGeminiSession {
  readonly received: Json[] = [];
  /** Caller audio received, PCM16 at 16 kHz. */
  readonly audioChunks: Buffer[] = [];
  setup: Json | null = null;
  /** The replies in order, when the caller's activity does not interrupt them (activityHandling NO_INTERRUPTION). */
  private replies: Promise<void> = Promise.resolve();
  /** When the setup arrived (performance.now()): the gateway's session is open from here. */
  setupAt: number | null = null;
  /** When each realtimeInput audio message arrived (performance.now()), in order. */
  readonly appendedAt: number[] = [];
  /** When each modelTurn audio part was sent (performance.now()), in order. */
  readonly audioSentAt: number[] = [];
  readonly heardTurns: GeminiHeardTurn[] = [];
  /** Realtime text input that asked for no line of its own (the caller's keys), in order. */
  readonly texts: string[] = [];
  /** When the message being handled arrived. */
  private messageAt = 0;
  /** The handle this session resumed, when it was opened with a known one. */
  resumedFrom: string | null = null;
  readonly closed: Promise<{ code: number; reason: string }>;
  private speaking = false;
  private silentMs = 0;
  private responding: { interrupted: boolean } | null = null;
  /** Replies the model has begun (a 3.x model takes no clientContent after the first). */
  private modelTurns = 0;
  private readonly openCalls = new Map<string, (response: Record<string, unknown>) => void>();
  private readonly waiters: { test: (message: Json) => boolean; resolve: (message: Json) => void }[] = [];

  constructor(
    private readonly socket: WebSocket,
    readonly path: string,
    readonly key: string | null,
    private readonly fake: FakeGeminiLive,
    private readonly handles: Set<string>,
  ) {
    this.closed = new Promise((resolve) => socket.once('close', (code, reason) => resolve({ code, reason: reason.toString() })));
    socket.on('message', (data) => {
      this.messageAt = performance.now();
      this.onMessage(data.toString());
    });
  }

  /** Every 16 kHz sample the caller's side sent, as one buffer. */
  audio(): Int16Array {
    const bytes = Buffer.concat(this.audioChunks);
    return Int16Array.from({ length: bytes.length >> 1 }, (_, i) => bytes.readInt16LE(i * 2));
  }

  /** Resolves with the first received message (past or future) that has this key and passes the test. */
  waitFor(kind: string, test: (message: Json) => boolean = () => true, timeoutMs?: number): Promise<Json> {
    const seen = this.received.find((message) => kind in message && test(message));
    if (seen) return Promise.resolve(seen);
    const received = new Promise<Json>((resolve) => this.waiters.push({ test: (message) => kind in message && test(message), resolve }));
    return waiting(`the fake Gemini to receive ${kind}`, received, { timeoutMs, describe: () => ({ problems: this.fake.problems.map((p) => p.problem) }) });
  }

  /** The service will close the connection soon (its time limit): `goAway`, then a close after `afterMs`. */
  goAway(afterMs = 2000): void {
    this.send({ goAway: { timeLeft: `${afterMs / 1000}s` } });
    setTimeout(() => this.socket.close(1000, 'session time limit'), afterMs).unref();
  }

  drop(): void {
    this.socket.terminate();
  }

  /** The connection reached its time limit and the service closes it without a goAway (as reported at 58:00 with 1011). */
  expire(): void {
    this.socket.close(1011, 'Deadline expired before operation could complete.');
  }

  /** `stamps`: where to note when it went out. */
  private send(message: Json, stamps?: number[]): void {
    // The service sends its JSON in binary frames.
    const data = Buffer.from(JSON.stringify(message));
    stamps?.push(performance.now());
    if (this.socket.readyState === WebSocket.OPEN) this.socket.send(data);
  }

  private refuse(message: unknown, code: 1007 | 1008, problem: string): void {
    this.fake.problems.push({ message, problem });
    this.socket.close(code, problem.slice(0, 120));
  }

  private onMessage(data: string): void {
    let message: Json;
    try {
      message = JSON.parse(data) as Json;
    } catch {
      return this.refuse(data, 1007, 'Invalid JSON payload received.');
    }
    const problem = shapeProblem(message, CLIENT_MESSAGE, '');
    if (problem) return this.refuse(message, 1007, problem);
    const kinds = Object.keys(message);
    if (kinds.length !== 1)
      return this.refuse(
        message,
        1007,
        `Request contains an invalid argument: one of setup, clientContent, realtimeInput, toolResponse, contextUpdate per message (got ${kinds.join(', ') || 'none'}).`,
      );
    const kind = kinds[0]!;
    if (!this.setup && kind !== 'setup') return this.refuse(message, 1007, 'Request contains an invalid argument: the first message must be setup.');
    if (this.setup && kind === 'setup') return this.refuse(message, 1007, 'Request contains an invalid argument: setup was already sent.');
    if (kind === 'setup' && !this.acceptSetup(message.setup)) return;
    if (
      kind === 'clientContent' &&
      /^gemini-3/.test(String(this.setup?.model).replace(/^models\//, '')) &&
      (!this.setup?.historyConfig?.initialHistoryInClientContent || this.modelTurns > 0)
    ) {
      return this.refuse(
        message,
        1007,
        'Request contains an invalid argument: clientContent is only accepted to seed the initial history; send text with realtimeInput.',
      );
    }
    if (kind === 'realtimeInput' && typeof message.realtimeInput.text === 'string') {
      const line = quotedLine(message.realtimeInput.text);
      if (line) void this.respond({ caller: '', reply: [{ text: line, hz: GEMINI_FIRST_LINE_HZ }] }, null);
      else {
        this.texts.push(message.realtimeInput.text);
        const turn = this.fake.script.shift() ?? this.fake.everyTurn ?? undefined;
        if (turn) void this.respond(turn, null);
      }
    }
    if (kind === 'realtimeInput' && message.realtimeInput.audio) {
      const audio = message.realtimeInput.audio;
      if (audio.mimeType !== `audio/pcm;rate=${INPUT_HZ}`)
        return this.refuse(message, 1007, `Unsupported audio mime type ${audio.mimeType}: the double expects audio/pcm;rate=${INPUT_HZ}.`);
      const bytes = Buffer.from(audio.data, 'base64');
      if (bytes.length % 2 !== 0) return this.refuse(message, 1007, 'Audio data is not whole 16-bit samples.');
      this.heard(bytes);
    }
    if (kind === 'contextUpdate') {
      const model = String(this.setup?.model ?? '').replace(/^models\//, '');
      if (!CONTEXT_UPDATE_MODELS.includes(model))
        return this.refuse(message, 1007, `Request contains an invalid argument: contextUpdate is not supported by ${model}.`);
    }
    if (kind === 'toolResponse') {
      for (const response of message.toolResponse.functionResponses ?? []) {
        const answered = this.openCalls.get(response.id);
        if (!answered) return this.refuse(message, 1007, `Request contains an invalid argument: no function call with id ${response.id} awaits a response.`);
        this.openCalls.delete(response.id);
        answered((response.response ?? {}) as Record<string, unknown>);
      }
    }
    this.received.push(message);
    for (const waiter of [...this.waiters]) {
      if (waiter.test(message)) {
        this.waiters.splice(this.waiters.indexOf(waiter), 1);
        waiter.resolve(message);
      }
    }
  }

  private acceptSetup(setup: Json): boolean {
    if (this.fake.refuseWith) {
      // Refused on the test's demand, not for anything the gateway sent: not a problem.
      this.socket.close(this.fake.refuseWith.code, this.fake.refuseWith.reason);
      return false;
    }
    if (this.key !== this.fake.apiKey) {
      this.refuse({ setup }, 1008, 'API key not valid. Please pass a valid API key.');
      return false;
    }
    const name = typeof setup.model === 'string' ? setup.model.replace(/^models\//, '') : '';
    if (!setup.model?.startsWith('models/') || !LIVE_MODELS.includes(name)) {
      this.refuse({ setup }, 1008, `${setup.model} is not found for API version v1beta, or is not supported for bidiGenerateContent.`);
      return false;
    }
    const generation = setup.generationConfig ?? {};
    const modalities = generation.responseModalities ?? [];
    if (modalities.length !== 1 || modalities[0] !== 'AUDIO') {
      this.refuse({ setup }, 1007, 'Request contains an invalid argument: a native audio model answers in AUDIO only.');
      return false;
    }
    if (
      name === 'gemini-3.8-live' &&
      (generation.thinkingConfig || generation.enableAffectiveDialog !== undefined || setup.proactivity?.proactiveAudio === false)
    ) {
      this.refuse(
        { setup },
        1007,
        'Request contains an invalid argument: gemini-3.8-live takes no thinking config or affective dialog, and proactive audio cannot be turned off.',
      );
      return false;
    }
    if (name === 'gemini-3.8-live-extended-thinking') {
      const level = generation.thinkingConfig?.thinkingLevel;
      const blocking = (setup.tools ?? []).some((tool: Json) =>
        (tool.functionDeclarations ?? []).some((declaration: Json) => declaration.behavior !== 'NON_BLOCKING'),
      );
      if (!EXTENDED_THINKING_LEVELS.includes(String(level).toUpperCase())) {
        this.refuse(
          { setup },
          1007,
          `Request contains an invalid argument: gemini-3.8-live-extended-thinking takes thinkingLevel low, medium or high (got ${String(level)}).`,
        );
        return false;
      }
      if (blocking) {
        this.refuse(
          { setup },
          1007,
          'Request contains an invalid argument: gemini-3.8-live-extended-thinking supports asynchronous (NON_BLOCKING) function calling only.',
        );
        return false;
      }
    }
    if (setup.sessionResumption?.handle) {
      if (!this.handles.has(setup.sessionResumption.handle)) {
        this.refuse({ setup }, 1008, 'Session resumption handle is not valid.');
        return false;
      }
      this.resumedFrom = setup.sessionResumption.handle;
    }
    this.setup = setup;
    this.setupAt = this.messageAt;
    this.send({ setupComplete: {} });
    if (setup.sessionResumption) this.newHandle();
    return true;
  }

  private newHandle(): void {
    const handle = `handle-${randomUUID()}`;
    this.handles.add(handle);
    this.send({ sessionResumptionUpdate: { newHandle: handle, resumable: true } });
  }

  /** Automatic activity detection, simulated: loud audio starts speech, SILENCE_TO_STOP_MS of quiet ends the turn. */
  private heard(bytes: Buffer): void {
    this.appendedAt.push(this.messageAt);
    this.audioChunks.push(bytes);
    let sum = 0;
    for (let i = 0; i + 1 < bytes.length; i += 2) sum += bytes.readInt16LE(i) ** 2;
    const samples = bytes.length / 2;
    const level = samples > 0 ? Math.sqrt(sum / samples) : 0;
    const ms = (samples / INPUT_HZ) * 1000;
    if (!this.speaking && level > SPEECH_RMS) {
      this.speaking = true;
      this.silentMs = 0;
      // The caller speaks over a reply: the service stops it and says so (unless told NO_INTERRUPTION: then the reply goes on).
      if (this.responding && !this.responding.interrupted && !this.noInterruption()) {
        this.responding.interrupted = true;
        this.send({ serverContent: { interrupted: true } });
      }
    } else if (this.speaking && level < SILENCE_RMS) {
      this.silentMs += ms;
      if (this.silentMs >= SILENCE_TO_STOP_MS) {
        this.speaking = false;
        const turn = this.fake.script.shift() ?? this.fake.everyTurn ?? undefined;
        if (!turn) return;
        const heard: GeminiHeardTurn = { frameIndex: this.appendedAt.length - 1, stoppedAt: performance.now(), firstAudioIndex: null };
        this.heardTurns.push(heard);
        // Not interrupted, the reply in progress is finished before the next turn is answered.
        if (this.noInterruption()) this.replies = this.replies.then(() => this.respond(turn, heard));
        else void this.respond(turn, heard);
      }
    } else if (this.speaking) {
      this.silentMs = 0;
    }
  }

  private noInterruption(): boolean {
    return this.setup?.realtimeInputConfig?.activityHandling === 'NO_INTERRUPTION';
  }

  /** The caller's words in two fragments (the last one `finished` unless the turn says not). */
  private sendCaller(turn: GeminiTurn, which: 'first' | 'second' | 'both'): void {
    const words = turn.caller.split(' ');
    const half = Math.ceil(words.length / 2);
    const rest = words.length > half;
    const finished = turn.finished ?? true;
    if (which !== 'second')
      this.send({ serverContent: { inputTranscription: { text: words.slice(0, half).join(' '), ...(finished && !rest ? { finished: true } : {}) } } });
    if (which !== 'first' && rest)
      this.send({ serverContent: { inputTranscription: { text: ` ${words.slice(half).join(' ')}`, ...(finished ? { finished: true } : {}) } } });
  }

  /** `heard`: the caller's turn it answers (null for a reply to text, which has no caller words to send). */
  private async respond(turn: GeminiTurn, heard: GeminiHeardTurn | null): Promise<void> {
    this.modelTurns += 1;
    const order = turn.order ?? 'caller-first';
    if (heard && (order === 'caller-first' || order === 'words-after-audio' || order === 'words-after-complete')) this.sendCaller(turn, 'both');
    if (heard && order === 'caller-split') this.sendCaller(turn, 'first');
    if (turn.delayMs) await new Promise((resolve) => setTimeout(resolve, turn.delayMs));
    const response = { interrupted: false };
    this.responding = response;
    let first = true;
    /** The words of the audio sent so far, for an output transcription that lags its audio. */
    const spoken: string[] = [];
    for (const part of turn.reply) {
      for (const word of part.text.split(/\s+/).filter(Boolean)) {
        if (response.interrupted) break;
        const text = first ? word : ` ${word}`;
        if (LAGGING_WORDS.includes(order)) spoken.push(text);
        else this.send({ serverContent: { outputTranscription: { text } } });
        if (heard && heard.firstAudioIndex === null) heard.firstAudioIndex = this.audioSentAt.length;
        this.send(
          {
            serverContent: { modelTurn: { parts: [{ inlineData: { mimeType: `audio/pcm;rate=${OUTPUT_HZ}`, data: wordAudio(part.hz ?? GEMINI_AGENT_HZ) } }] } },
          },
          this.audioSentAt,
        );
        if (heard && first && order === 'caller-split') this.sendCaller(turn, 'second');
        first = false;
        await new Promise((resolve) => setTimeout(resolve, turn.paceMs ?? 5));
      }
    }
    // The lagging transcription of what was generated comes after it, even after an interruption.
    const sendSpoken = () => spoken.splice(0).forEach((text) => this.send({ serverContent: { outputTranscription: { text } } }));
    if (order === 'words-after-audio') sendSpoken();
    if (!response.interrupted && turn.tools?.length) {
      const answered = turn.tools.map((tool) => {
        const id = `call-${randomUUID()}`;
        return { call: { id, name: tool.name, args: tool.args }, done: new Promise<Record<string, unknown>>((resolve) => this.openCalls.set(id, resolve)) };
      });
      this.send({ toolCall: { functionCalls: answered.map((entry) => entry.call) } });
      const responses = await Promise.race([
        Promise.all(answered.map((entry) => entry.done)),
        new Promise<null>((resolve) => setTimeout(() => resolve(null), 5000)),
      ]);
      if (responses && turn.afterTools && !response.interrupted) {
        // The same turn goes on: each word follows the ones before it.
        for (const part of turn.afterTools(responses)) {
          for (const text of part.text.split(/\s+/).filter(Boolean)) {
            this.send({ serverContent: { outputTranscription: { text: ` ${text}` } } });
            this.send(
              {
                serverContent: {
                  modelTurn: { parts: [{ inlineData: { mimeType: `audio/pcm;rate=${OUTPUT_HZ}`, data: wordAudio(part.hz ?? GEMINI_AGENT_HZ) } }] },
                },
              },
              this.audioSentAt,
            );
            await new Promise((resolve) => setTimeout(resolve, turn.paceMs ?? 5));
          }
        }
      }
    }
    if (!response.interrupted) this.send({ serverContent: { generationComplete: true } });
    if (order === 'caller-after-reply') this.sendCaller(turn, 'both');
    this.send({ serverContent: { turnComplete: true } });
    if (heard && (order === 'caller-after-complete' || order === 'all-after-complete')) this.sendCaller(turn, 'both');
    sendSpoken();
    if (this.setup?.sessionResumption) this.newHandle();
    if (this.responding === response) this.responding = null;
  }
}

export interface FakeGeminiLive {
  /** GEMINI_BASE_URL for the gateway: http://127.0.0.1:port (the SDK turns it into ws://…). */
  baseUrl: string;
  apiKey: string;
  sessions: FakeGeminiSession[];
  script: GeminiTurn[];
  /** When set, the turn every caller turn is answered with once the script is empty (a benchmark's endless calls). */
  everyTurn: GeminiTurn | null;
  /** When set, every new session's setup is answered by closing with this code and reason. */
  refuseWith: { code: number; reason: string } | null;
  /** Messages of the gateway the double refused as the service would: a test requires none. */
  problems: GeminiProblem[];
  nextSession(timeoutMs?: number): Promise<FakeGeminiSession>;
  close(): Promise<void>;
}

export async function startFakeGeminiLive(apiKey = 'gemini-test-key'): Promise<FakeGeminiLive> {
  const server: Server = createServer((_req, res) => res.writeHead(404).end());
  const wss = new WebSocketServer({ noServer: true });
  const handles = new Set<string>();
  const fake: FakeGeminiLive = {
    baseUrl: '',
    apiKey,
    sessions: [],
    script: [],
    everyTurn: null,
    refuseWith: null,
    problems: [],
    nextSession: (timeoutMs?: number) => waiters.next(timeoutMs),
    close: () => closeLoopback(server, wss),
  };
  const waiters = sessionWaiters<FakeGeminiSession>(fake.sessions, 'Gemini Live');
  server.on('upgrade', (req, socket, head) => {
    // A bare-origin baseUrl serializes with a trailing '/', so the SDK's path starts '//ws/…' (which
    // `new URL` would read as a host): the path is read as it is, its leading slashes collapsed.
    const url = new URL((req.url ?? '/').replace(/^\/+/, '/'), 'http://fake');
    if (url.pathname !== LIVE_PATH) {
      socket.end('HTTP/1.1 404 Not Found\r\nConnection: close\r\nContent-Length: 0\r\n\r\n');
      return;
    }
    wss.handleUpgrade(req, socket, head, (ws) => {
      const session = new FakeGeminiSession(ws, req.url ?? '', url.searchParams.get('key'), fake, handles);
      fake.sessions.push(session);
      waiters.opened(session);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  fake.baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return fake;
}
