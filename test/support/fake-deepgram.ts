import { createServer, type IncomingHttpHeaders, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import alawmulaw from 'alawmulaw';
import WebSocket, { WebSocketServer } from 'ws';
import { clientMessageProblem, FLUX_SPEC, QUERY_PARAMETERS, serverMessageProblem } from './deepgram-listen-spec.js';
import { closeLoopback, sessionWaiters } from './loopback-sessions.js';
import { waiting } from '../helpers/eventually.js';

// A Deepgram live transcription double on loopback (`/v1/listen`), for the streaming pipeline's
// recognizer. It checks what it is sent against Deepgram's AsyncAPI (deepgram-listen.asyncapi.json,
// through deepgram-listen-spec.ts): the handshake's `Authorization: Token <key>` (a wrong or missing
// key is refused with 401 and Deepgram's INVALID_AUTH body and `dg-error` header), every query
// parameter (one the channel does not list, or a value its schema refuses, is refused with 400),
// every JSON message (closed to unknown fields; one that fails closes the socket with 1008) and the
// audio (binary frames, never empty); it closes a socket idle for 10 s with 1011 `NET-0001` as
// Deepgram does. It "transcribes" from a script, one entry per caller turn, hearing turns by energy
// in the μ-law audio (the same kind of detector as the gateway's end-of-speech.ts) and answering as
// Deepgram does: SpeechStarted, interim Results, a final Result with speech_final after
// `endpointing` ms of silence, UtteranceEnd after `utterance_end_ms` without words, all timed in
// seconds of the audio received; every message it sends is checked against the server schemas.
// Faults on demand: refuse every key (`refuse`), drop a session (`session.drop()`), hang the
// handshake (`hang`), answer late (`openDelayMs`), delay every message (`messageDelayMs`), send every
// final twice (`duplicateFinals`). For the benchmark, it can hear the same words in every turn past the
// script (`everyTurn`, or a session's own `everyTurn`) and stamps, on performance.now(), when each
// audio frame arrived and when each turn's final left, so a relay through the gateway is read on the
// bench's one clock.
//
// Flux (`/v2/listen`, deepgram-listen-v2.asyncapi.json) is checked against its own channel: its query
// (model, encoding, sample_rate, eot_threshold, eager_eot_threshold, eot_timeout_ms, keyterm, …; no
// other), its client messages (CloseStream, Configure: a KeepAlive or Finalize is refused), and it
// answers as Flux does: `Connected`, then per turn `TurnInfo` events, StartOfTurn, Update, EndOfTurn
// (every message numbered by `sequence_id`). Deepgram does not publish how its end-of-turn model
// decides: the double ends a turn after `eot_threshold` × FLUX_SILENCE_PER_THRESHOLD_MS of silence
// (0.7, Deepgram's default: 350 ms), or `eot_timeout_ms` when that is shorter.
//
// With `eager_eot_threshold` (only then, as Deepgram documents), a pause of `eager_eot_threshold` ×
// FLUX_SILENCE_PER_THRESHOLD_MS in a turn with words sends EagerEndOfTurn (the words so far); speech
// again before the end of the turn sends TurnResumed, and the turn goes on. A scripted turn may come
// in parts (a FluxTurn, or a string with ` | ` between them): each burst of speech after a pause
// adds the next part's words, so words change only after a TurnResumed, and an EndOfTurn carries the
// words of the EagerEndOfTurn before it when one came since (Deepgram's state machine,
// developers.deepgram.com/docs/flux/state). A part may end without an EagerEndOfTurn (`eager:
// false`): its EndOfTurn then follows a TurnResumed with new words, as when Flux's confidence passes
// both thresholds at once or eot_timeout_ms ends the turn. Every TurnInfo the double sends is checked
// against that state machine (a breach is a `sent` problem). A test may hold the session's messages
// from one event on (`holdFrom('EndOfTurn')`) and let them go (`release()`), in order, to see what the
// gateway does between two of Flux's events.

const { mulaw } = alawmulaw;

type Json = Record<string, any>;

/** μ-law 8 kHz, the only audio the double hears (the gateway sends nothing else). */
const SAMPLE_RATE = 8000;
/** The detector works on 20 ms windows, Twilio's frame. */
const WINDOW_MS = 20;
/** A window is speech when its RMS (16-bit) is above this (as in end-of-speech.ts). */
const SPEECH_RMS = 500;
/** Speech starts after this much loud audio without a break. */
const SPEECH_ONSET_MS = 60;
/** An interim result every this much audio of speech. */
const INTERIM_EVERY_MS = 100;
/** Deepgram closes a socket without audio or a text message for this long (`NET-0001`). */
export const DEEPGRAM_IDLE_MS = 10_000;

/** μ-law bytes of a sine tone (a caller "speaking"). */
export function tone(ms: number, hz = 300, amplitude = 8000): Buffer {
  const samples = new Int16Array(Math.round((SAMPLE_RATE * ms) / 1000));
  for (let i = 0; i < samples.length; i++) samples[i] = Math.round(amplitude * Math.sin((2 * Math.PI * hz * i) / SAMPLE_RATE));
  return Buffer.from(mulaw.encode(samples));
}

/** μ-law bytes of silence. */
export function silence(ms: number): Buffer {
  return Buffer.alloc(Math.round((SAMPLE_RATE * ms) / 1000), 0xff);
}

/** Splits audio into Twilio's 20 ms frames. */
export function frames(audio: Buffer, frameBytes = 160): Buffer[] {
  const out: Buffer[] = [];
  for (let offset = 0; offset < audio.length; offset += frameBytes) out.push(audio.subarray(offset, offset + frameBytes));
  return out;
}

function rms(window: Buffer): number {
  const samples = mulaw.decode(new Uint8Array(window));
  let sum = 0;
  for (const sample of samples) sum += sample * sample;
  return samples.length ? Math.sqrt(sum / samples.length) : 0;
}

/** What the double refused, or sent that Deepgram's description does not allow, so a test can require there was nothing. */
export interface DeepgramProblem {
  /** `handshake`: a refused handshake; `refused`: a message from the gateway refused; `sent`: one of the double's own that is not in the description. */
  kind: 'handshake' | 'refused' | 'sent';
  problem: string;
  message?: unknown;
}

/**
 * The types the AsyncAPI leaves as "Any type" for some parameters, from Deepgram's reference for the
 * live socket (developers.deepgram.com/reference/speech-to-text/listen-streaming): integers,
 * `endpointing` an integer or `false`, `mip_opt_out` a boolean, the rest free strings.
 */
const ANY_TYPE_PARAMETERS: Record<string, (value: string) => boolean> = {
  channels: (value) => /^[1-9][0-9]*$/.test(value),
  sample_rate: (value) => /^[1-9][0-9]*$/.test(value),
  endpointing: (value) => value === 'false' || /^(0|[1-9][0-9]*)$/.test(value),
  utterance_end_ms: (value) => /^[1-9][0-9]*$/.test(value),
  mip_opt_out: (value) => value === 'true' || value === 'false',
  language: (value) => /^[A-Za-z]{2,3}(-[A-Za-z0-9]{2,8})*$|^multi$/.test(value),
};
/** Parameters Deepgram takes more than once (the others once). */
const REPEATABLE = new Set(['keyterm', 'keywords', 'search', 'replace', 'tag', 'extra']);

/** The types Flux's channel leaves as "Any type", from Deepgram's Flux reference (developers.deepgram.com/reference/speech-to-text/listen-flux). */
const FLUX_ANY_TYPE_PARAMETERS: Record<string, (value: string) => boolean> = {
  sample_rate: (value) => /^[1-9][0-9]*$/.test(value),
  eot_threshold: (value) => /^0?\.[0-9]+$/.test(value) && Number(value) >= 0.5 && Number(value) <= 0.9,
  eager_eot_threshold: (value) => /^0?\.[0-9]+$/.test(value) && Number(value) >= 0.3 && Number(value) <= 0.9,
  eot_timeout_ms: (value) => /^[1-9][0-9]*$/.test(value) && Number(value) >= 500 && Number(value) <= 10_000,
  mip_opt_out: (value) => value === 'true' || value === 'false',
};
/** A scripted Flux turn said in parts, a pause after each: `eager[i]` false sends no EagerEndOfTurn in the pause after part i (true by default). */
export interface FluxTurn {
  parts: string[];
  eager?: boolean[];
}

/** The double's end-of-turn model: silence needed per unit of `eot_threshold` (Deepgram publishes none). */
export const FLUX_SILENCE_PER_THRESHOLD_MS = 500;

/** Why Deepgram would refuse this Flux handshake query (400), or null. */
export function fluxQueryProblem(query: URLSearchParams): string | null {
  const seen = new Set<string>();
  for (const [name, value] of query) {
    const schema = FLUX_SPEC.queryParameters.get(name);
    if (!schema) return `Unknown query parameter: '${name}'.`;
    if (seen.has(name) && name !== 'keyterm' && name !== 'language_hint' && name !== 'tag') return `Query parameter '${name}' was given more than once.`;
    seen.add(name);
    const allowed = schema.enum as string[] | undefined;
    if (allowed && !allowed.includes(value)) return `Invalid value for '${name}': '${value}' (expected one of ${allowed.join(', ')}).`;
    const check = FLUX_ANY_TYPE_PARAMETERS[name];
    if (check && !check(value)) return `Invalid value for '${name}': '${value}'.`;
    if (!allowed && !check && value.trim() === '') return `Empty value for '${name}'.`;
  }
  if (!query.has('model')) return "'model' is required.";
  if (query.has('encoding') && !query.has('sample_rate')) return "'sample_rate' is required when 'encoding' is given.";
  if (query.has('language_hint') && query.get('model') !== 'flux-general-multi') return "'language_hint' is only valid when model is flux-general-multi.";
  if (query.has('eager_eot_threshold') && Number(query.get('eager_eot_threshold')) > Number(query.get('eot_threshold') ?? 0.7))
    return "'eager_eot_threshold' must not be above 'eot_threshold'.";
  return null;
}

/** Why Deepgram would refuse this handshake query (400), or null. */
export function queryProblem(query: URLSearchParams): string | null {
  const seen = new Set<string>();
  for (const [name, value] of query) {
    const schema = QUERY_PARAMETERS.get(name);
    if (!schema) return `Unknown query parameter: '${name}'.`;
    if (seen.has(name) && !REPEATABLE.has(name)) return `Query parameter '${name}' was given more than once.`;
    seen.add(name);
    const allowed = schema.enum as string[] | undefined;
    if (allowed && !allowed.includes(value)) return `Invalid value for '${name}': '${value}' (expected one of ${allowed.join(', ')}).`;
    const check = ANY_TYPE_PARAMETERS[name];
    if (check && !check(value)) return `Invalid value for '${name}': '${value}'.`;
    if (!allowed && !check && value.trim() === '') return `Empty value for '${name}'.`;
  }
  // "Sample rate of submitted audio. Required (and only read) when a value is provided for encoding."
  if (query.has('encoding') && !query.has('sample_rate')) return "'sample_rate' is required when 'encoding' is given.";
  // Nova-3 takes key terms (`keyterm`); it refuses `keywords` before upgrading (the SDK quotes this).
  if (/^nova-3/.test(query.get('model') ?? '') && query.has('keywords')) return 'Keywords are not supported for Nova-3. Please use `keyterm` instead.';
  return null;
}

/** What the gateway asked for, read from the query with Deepgram's defaults (the AsyncAPI's). */
interface ListenSettings {
  interimResults: boolean;
  vadEvents: boolean;
  /** null: endpointing disabled. */
  endpointingMs: number | null;
  utteranceEndMs: number | null;
  bytesPerSecond: number;
  /** Flux with eager_eot_threshold: the pause that sends EagerEndOfTurn; null: none is sent. */
  eagerMs?: number | null;
}

/** Flux's: the silence that ends a turn (the double's model of eot_threshold and eot_timeout_ms), and the pause that sends EagerEndOfTurn. */
function fluxSettings(query: URLSearchParams): ListenSettings {
  const value = (name: string) => query.get(name) ?? (FLUX_SPEC.queryParameters.get(name)?.default as string | undefined) ?? null;
  const endOfTurnMs = Math.min(Math.round(Number(value('eot_threshold') ?? 0.7) * FLUX_SILENCE_PER_THRESHOLD_MS), Number(value('eot_timeout_ms') ?? 5000));
  return {
    interimResults: true,
    vadEvents: true,
    endpointingMs: endOfTurnMs,
    eagerMs: query.has('eager_eot_threshold') ? Math.round(Number(query.get('eager_eot_threshold')) * FLUX_SILENCE_PER_THRESHOLD_MS) : null,
    utteranceEndMs: null,
    bytesPerSecond: Number(query.get('sample_rate') ?? SAMPLE_RATE),
  };
}

function settings(query: URLSearchParams): ListenSettings {
  const value = (name: string) => query.get(name) ?? (QUERY_PARAMETERS.get(name)?.default as string | undefined) ?? null;
  const endpointing = value('endpointing');
  const utteranceEnd = value('utterance_end_ms');
  return {
    interimResults: value('interim_results') === 'true',
    vadEvents: value('vad_events') === 'true',
    endpointingMs: endpointing === null || endpointing === 'false' ? null : Number(endpointing),
    utteranceEndMs: utteranceEnd === null ? null : Number(utteranceEnd),
    bytesPerSecond: Number(query.get('sample_rate') ?? SAMPLE_RATE) * Number(value('channels') ?? 1),
  };
}

interface HeardTurn {
  words: string[];
  startMs: number;
  interims: number;
  /** Its words were already given in a final (after Finalize). */
  finalized: boolean;
  /** Flux: the parts still to be said (each burst of speech after a pause adds the next), and whether each part's pause sends EagerEndOfTurn. */
  parts: string[][];
  eager: boolean[];
  /** Flux: the parts said so far; an EagerEndOfTurn was sent in this pause (a TurnResumed is due if speech comes again). */
  said: number;
  eagerSent: boolean;
  /** Quiet for a while within the turn: the next loud window starts the next part. */
  paused: boolean;
}

/** A script entry's parts and their eager flags (a string's parts are separated by ` | `). */
function turnParts(entry: string | FluxTurn): { parts: string[][]; eager: boolean[] } {
  const parts = typeof entry === 'string' ? entry.split(' | ') : entry.parts;
  const words = parts.map((part) => part.split(/\s+/).filter(Boolean));
  return { parts: words, eager: words.map((_, index) => (typeof entry === 'string' ? true : (entry.eager?.[index] ?? true))) };
}

/** A pause within a turn this long (or longer) makes the next speech the next part. */
const PART_PAUSE_MS = 100;

export class FakeDeepgramSession {
  /** Every JSON message accepted, in order. */
  readonly received: Json[] = [];
  /** Every message sent, in order (after any delay, as it left). */
  readonly sent: Json[] = [];
  readonly audioChunks: Buffer[] = [];
  audioBytes = 0;
  keepAlives = 0;
  finalizes = 0;
  closeStreamed = false;
  readonly requestId = randomUUID();
  /** When the session opened, and when each binary frame arrived (performance.now(), one per frame, never trimmed). */
  readonly openedAt = performance.now();
  readonly audioAt: number[] = [];
  /**
   * Each turn with words that ended by endpointing: the index (in `audioAt`) of the frame whose
   * silence ended it, and when its speech_final Results left (null until it has, after any delay).
   */
  readonly turnEnds: { frameIndex: number; finalSentAt: number | null }[] = [];
  /** The words of this session's every turn once the script is used up (before the double's own `everyTurn`). */
  everyTurn: string | null = null;
  readonly closed: Promise<{ code: number; reason: string }>;
  private readonly settings: ListenSettings;
  /** A Flux session (`/v2/listen`): TurnInfo events, numbered. */
  readonly flux: boolean;
  private sequenceId = 0;
  private turnIndex = 0;
  private position = 0;
  private pending = Buffer.alloc(0);
  private speaking = false;
  private loudMs = 0;
  private quietMs = 0;
  private turn: HeardTurn | null = null;
  private segmentStartMs = 0;
  private lastWordEndMs: number | null = null;
  private idle: NodeJS.Timeout | undefined;
  private ended = false;
  private readonly waiters: { test: () => boolean; resolve: () => void }[] = [];
  /** Messages held from `holdFrom`'s event on, in order, until `release()`; the event that starts holding. */
  private held: (() => void)[] | null = null;
  private holdEvent: string | null = null;
  /** Flux's turn state as sent (developers.deepgram.com/docs/flux/state): the last EagerEndOfTurn's words while awaiting the end. */
  private fluxState: { state: 'Initial' | 'TurnOngoing' | 'AwaitingEnd'; eagerWords: string } = { state: 'Initial', eagerWords: '' };

  constructor(
    private readonly socket: WebSocket,
    readonly query: URLSearchParams,
    readonly headers: IncomingHttpHeaders,
    private readonly fake: FakeDeepgram,
    private readonly nextTurn: () => string | FluxTurn | undefined,
    flux = false,
  ) {
    this.flux = flux;
    this.settings = flux ? fluxSettings(query) : settings(query);
    this.closed = new Promise((resolve) => socket.once('close', (code, reason) => resolve({ code, reason: reason.toString() })));
    socket.once('close', () => {
      this.ended = true;
      clearTimeout(this.idle);
    });
    socket.on('message', (data, isBinary) => this.onMessage(data as Buffer, isBinary));
    this.touch();
    if (flux) this.send({ type: 'Connected', request_id: this.requestId, sequence_id: 0 });
  }

  /** Milliseconds of audio heard (whole 20 ms windows; all timing is kept in integer milliseconds). */
  get audioMs(): number {
    return Math.round((this.position * 1000) / this.settings.bytesPerSecond);
  }

  /** Everything received as audio, as one buffer. */
  audio(): Buffer {
    return Buffer.concat(this.audioChunks);
  }

  /** Resolves once `test` holds (checked after every message received or sent); no deadline of its own in a test, `timeoutMs` in the bench. */
  until(test: () => boolean, what: string, timeoutMs?: number): Promise<void> {
    if (test()) return Promise.resolve();
    return waiting(`the Deepgram double to see ${what}`, new Promise<void>((resolve) => this.waiters.push({ test, resolve })), { timeoutMs });
  }

  /** Deepgram drops the session: a close frame (1011 and a reason, as its NET errors), or the socket ended without one. */
  drop(how: 'terminate' | { code: number; reason: string } = { code: 1011, reason: 'NET-0000' }): void {
    if (how === 'terminate') this.socket.terminate();
    else this.socket.close(how.code, how.reason);
  }

  /** Holds this session's messages from the next one of this Flux event on (it included), in order, until `release()`. */
  holdFrom(event: 'EagerEndOfTurn' | 'TurnResumed' | 'EndOfTurn'): void {
    this.holdEvent = event;
  }

  /** Sends what was held, in order, and holds no more. */
  release(): void {
    this.holdEvent = null;
    const held = this.held ?? [];
    this.held = null;
    for (const send of held) send();
  }

  /** Whether messages are being held (a `holdFrom` event was reached). */
  get holding(): boolean {
    return this.held !== null;
  }

  private notify(): void {
    for (const waiter of [...this.waiters]) {
      if (waiter.test()) {
        this.waiters.splice(this.waiters.indexOf(waiter), 1);
        waiter.resolve();
      }
    }
  }

  /** Deepgram's 10 s without audio or a text message. */
  private touch(): void {
    clearTimeout(this.idle);
    this.idle = setTimeout(() => this.socket.close(1011, 'NET-0001'), this.fake.idleTimeoutMs);
    this.idle.unref();
  }

  private refuse(problem: string, message: unknown): void {
    this.fake.problems.push({ kind: 'refused', problem, message });
    this.socket.close(1008, problem.slice(0, 120));
  }

  private onMessage(data: Buffer, isBinary: boolean): void {
    if (this.ended || this.closeStreamed) return;
    this.touch();
    if (isBinary) {
      if (data.length === 0) return this.refuse('An empty binary frame (Deepgram documents that it closes the stream).', data);
      this.audioAt.push(performance.now());
      this.audioChunks.push(Buffer.from(data));
      this.audioBytes += data.length;
      this.hear(data);
      this.notify();
      return;
    }
    let message: unknown;
    try {
      message = JSON.parse(data.toString());
    } catch {
      return this.refuse('A text frame that is not JSON.', data.toString());
    }
    const problem = this.flux ? FLUX_SPEC.clientMessageProblem(message) : clientMessageProblem(message);
    if (problem) return this.refuse(`Invalid control message: ${problem}.`, message);
    const accepted = message as Json;
    this.received.push(accepted);
    switch (accepted.type) {
      case 'KeepAlive':
        this.keepAlives++;
        break;
      case 'Finalize':
        this.finalizes++;
        this.finalizeNow();
        break;
      case 'CloseStream':
        this.closeStreamed = true;
        this.finishStream();
        break;
    }
    this.notify();
  }

  /** Feeds audio through 20 ms windows: loud ones start a turn, quiet ones end it. */
  private hear(chunk: Buffer): void {
    const windowBytes = (this.settings.bytesPerSecond * WINDOW_MS) / 1000;
    this.pending = Buffer.concat([this.pending, chunk]);
    while (this.pending.length >= windowBytes) {
      const window = this.pending.subarray(0, windowBytes);
      this.pending = this.pending.subarray(windowBytes);
      this.position += windowBytes;
      this.onWindow(rms(window) > SPEECH_RMS);
    }
  }

  private onWindow(loud: boolean): void {
    const now = this.audioMs;
    if (loud) {
      if (this.speaking && this.flux) this.resumeIfPaused(now);
      this.quietMs = 0;
      if (!this.speaking) {
        this.loudMs += WINDOW_MS;
        if (this.loudMs >= SPEECH_ONSET_MS) this.startTurn(now - this.loudMs);
      } else {
        this.interimIfDue(now);
      }
      return;
    }
    if (!this.speaking) {
      this.loudMs = 0;
      this.utteranceEndIfDue(now);
      return;
    }
    this.quietMs += WINDOW_MS;
    const endpointing = this.settings.endpointingMs;
    if (this.flux) this.pauseInTurn(now);
    if (endpointing !== null && this.quietMs >= Math.max(endpointing, WINDOW_MS)) this.endTurn(now);
  }

  /** Flux: a pause in the turn; long enough, with words heard and the eager threshold asked for, an EagerEndOfTurn (once a pause). */
  private pauseInTurn(now: number): void {
    const turn = this.turn!;
    if (this.quietMs >= PART_PAUSE_MS) turn.paused = true;
    const eagerMs = this.settings.eagerMs;
    if (eagerMs === null || eagerMs === undefined || turn.eagerSent || turn.finalized || this.quietMs < eagerMs) return;
    if (turn.words.length === 0 || turn.eager[turn.said - 1] === false) return;
    if (this.quietMs >= (this.settings.endpointingMs ?? Infinity)) return;
    turn.eagerSent = true;
    this.sendTurnInfo('EagerEndOfTurn', turn.words, turn.startMs, now - this.quietMs);
  }

  /** Flux: speech again in a paused turn: TurnResumed if an EagerEndOfTurn was sent in the pause, and the next part's words join the turn. */
  private resumeIfPaused(now: number): void {
    const turn = this.turn!;
    if (!turn.paused) return;
    turn.paused = false;
    if (turn.eagerSent) {
      turn.eagerSent = false;
      this.sendTurnInfo('TurnResumed', turn.words, turn.startMs, now);
    }
    if (turn.said < turn.parts.length) {
      turn.said += 1;
      turn.words = turn.parts.slice(0, turn.said).flat();
    }
  }

  private startTurn(startMs: number): void {
    this.speaking = true;
    const { parts, eager } = turnParts(this.nextTurn() ?? '');
    // Nova hears the whole entry at once; Flux hears its parts one burst of speech at a time.
    const said = this.flux ? Math.min(1, parts.length) : parts.length;
    this.turn = { words: parts.slice(0, said).flat(), startMs, interims: 0, finalized: false, parts, eager, said, eagerSent: false, paused: false };
    if (this.flux) return this.sendTurnInfo('StartOfTurn', [], startMs, this.audioMs);
    if (this.settings.vadEvents) this.send({ type: 'SpeechStarted', channel: [0, 1], timestamp: startMs / 1000 });
  }

  private interimIfDue(now: number): void {
    const turn = this.turn!;
    if (!this.settings.interimResults || turn.finalized || turn.interims >= turn.words.length) return;
    if (now - turn.startMs < (turn.interims + 1) * INTERIM_EVERY_MS) return;
    turn.interims++;
    if (this.flux) return this.sendTurnInfo('Update', turn.words.slice(0, turn.interims), turn.startMs, now);
    this.sendResults({ words: turn.words.slice(0, turn.interims), from: turn.startMs, to: now, isFinal: false, speechFinal: false });
  }

  private endTurn(now: number): void {
    const turn = this.turn!;
    const speechEnd = now - this.quietMs;
    this.speaking = false;
    this.loudMs = 0;
    this.quietMs = 0;
    this.turn = null;
    const words = turn.finalized ? [] : turn.words;
    const ended = words.length > 0 ? { frameIndex: this.audioAt.length - 1, finalSentAt: null as number | null } : null;
    if (ended) this.turnEnds.push(ended);
    if (this.flux) {
      this.sendTurnInfo('EndOfTurn', words, turn.startMs, speechEnd, () => {
        if (ended && ended.finalSentAt === null) ended.finalSentAt = performance.now();
      });
      this.turnIndex++;
      return;
    }
    this.sendResults({ words, from: turn.startMs, to: speechEnd, isFinal: true, speechFinal: true }, () => {
      if (ended && ended.finalSentAt === null) ended.finalSentAt = performance.now();
    });
    if (words.length > 0) this.lastWordEndMs = speechEnd;
  }

  private utteranceEndIfDue(now: number): void {
    const wait = this.settings.utteranceEndMs;
    if (wait === null || this.lastWordEndMs === null || now - this.lastWordEndMs < wait) return;
    this.send({ type: 'UtteranceEnd', channel: [0, 1], last_word_end: this.lastWordEndMs / 1000 });
    this.lastWordEndMs = null;
  }

  /** Finalize: what was heard since the last final, made final now (Deepgram marks it `from_finalize`). */
  private finalizeNow(): void {
    const now = this.audioMs;
    const turn = this.turn;
    const words = turn && !turn.finalized ? turn.words : [];
    if (turn) turn.finalized = true;
    this.sendResults({ words, from: turn?.startMs ?? now, to: now, isFinal: true, speechFinal: false, fromFinalize: true });
    if (words.length > 0) this.lastWordEndMs = now;
  }

  /** Flux's TurnInfo for the current turn: its words so far spread over [from, to] (ms of audio). */
  private sendTurnInfo(
    event: 'StartOfTurn' | 'Update' | 'EagerEndOfTurn' | 'TurnResumed' | 'EndOfTurn',
    words: string[],
    from: number,
    to: number,
    onSent?: () => void,
  ): void {
    this.checkFluxOrder(event, words.join(' '));
    const span = Math.max(to - from, 0) / Math.max(words.length, 1);
    this.send(
      {
        type: 'TurnInfo',
        request_id: this.requestId,
        // Numbered as it is sent (send()).
        sequence_id: 0,
        event,
        turn_index: this.turnIndex,
        audio_window_start: seconds(from),
        audio_window_end: seconds(to),
        transcript: words.join(' '),
        words: words.map((word, index) => ({ word, confidence: 0.99, start: seconds(from + index * span), end: seconds(from + (index + 1) * span) })),
        end_of_turn_confidence: event === 'EndOfTurn' ? 0.9 : event === 'EagerEndOfTurn' ? 0.6 : 0.1,
      },
      onSent,
    );
  }

  /**
   * Flux's state machine for what the double sends (developers.deepgram.com/docs/flux/state):
   * StartOfTurn from Initial; EagerEndOfTurn only with eager_eot_threshold, in a turn, with words;
   * TurnResumed only after an EagerEndOfTurn; EndOfTurn's words those of the EagerEndOfTurn before it,
   * when one came (words change only after a TurnResumed). A breach is a `sent` problem.
   */
  private checkFluxOrder(event: string, transcript: string): void {
    const flux = this.fluxState;
    const breach = (problem: string) => this.fake.problems.push({ kind: 'sent', problem: `Flux's state machine: ${problem}`, message: { event, transcript } });
    switch (event) {
      case 'StartOfTurn':
        if (flux.state !== 'Initial') breach(`StartOfTurn in ${flux.state}`);
        flux.state = 'TurnOngoing';
        return;
      case 'Update':
        if (flux.state === 'AwaitingEnd' && transcript !== flux.eagerWords) breach('the words changed after EagerEndOfTurn without TurnResumed');
        return;
      case 'EagerEndOfTurn':
        if (this.settings.eagerMs === null || this.settings.eagerMs === undefined) breach('EagerEndOfTurn without eager_eot_threshold');
        if (flux.state !== 'TurnOngoing') breach(`EagerEndOfTurn in ${flux.state}`);
        if (!transcript) breach('EagerEndOfTurn with an empty transcript');
        flux.state = 'AwaitingEnd';
        flux.eagerWords = transcript;
        return;
      case 'TurnResumed':
        if (flux.state !== 'AwaitingEnd') breach(`TurnResumed in ${flux.state}`);
        flux.state = 'TurnOngoing';
        return;
      case 'EndOfTurn':
        if (flux.state === 'AwaitingEnd' && transcript !== flux.eagerWords) breach('EndOfTurn words differ from the EagerEndOfTurn before it');
        flux.state = 'Initial';
        flux.eagerWords = '';
        return;
    }
  }

  /** CloseStream: the last words final, then Metadata, then the socket closed (1000). */
  private finishStream(): void {
    clearTimeout(this.idle);
    if (this.flux) {
      // Flux: the open turn's words end it, then the socket closes.
      const turn = this.turn;
      if (turn && turn.words.length > 0) this.sendTurnInfo('EndOfTurn', turn.words, turn.startMs, this.audioMs);
      this.later(() => this.socket.close(1000));
      return;
    }
    const turn = this.turn;
    if (turn && !turn.finalized && turn.words.length > 0) {
      this.sendResults({ words: turn.words, from: turn.startMs, to: this.audioMs, isFinal: true, speechFinal: false });
    }
    this.send({
      type: 'Metadata',
      transaction_key: 'deprecated',
      request_id: this.requestId,
      sha256: '0'.repeat(64),
      created: new Date().toISOString(),
      duration: this.audioMs / 1000,
      channels: 1,
    });
    this.later(() => this.socket.close(1000));
  }

  /**
   * A Results message for the audio since the last final, up to all the audio heard (as Deepgram's
   * windows do); its words spread evenly over [from, to] (milliseconds), the speech they were heard in.
   */
  private sendResults(
    result: { words: string[]; from: number; to: number; isFinal: boolean; speechFinal: boolean; fromFinalize?: boolean },
    onSent?: () => void,
  ): void {
    const start = this.segmentStartMs;
    const end = this.audioMs;
    if (result.isFinal) this.segmentStartMs = end;
    const span = Math.max(result.to - result.from, 0) / Math.max(result.words.length, 1);
    const words = result.words.map((word, index) => ({
      word: word.toLowerCase().replace(/[^\p{L}\p{N}']/gu, ''),
      start: seconds(result.from + index * span),
      end: seconds(result.from + (index + 1) * span),
      confidence: 0.99,
      punctuated_word: word,
    }));
    const message: Json = {
      type: 'Results',
      channel_index: [0, 1],
      duration: seconds(end - start),
      start: seconds(start),
      is_final: result.isFinal,
      speech_final: result.speechFinal,
      channel: { alternatives: [{ transcript: result.words.join(' '), confidence: result.words.length ? 0.99 : 0, words }] },
      metadata: { request_id: this.requestId, model_info: { name: '2-general-nova', version: '2024-01-09.29447', arch: 'nova-3' }, model_uuid: randomUUID() },
      from_finalize: result.fromFinalize ?? false,
    };
    this.send(message, onSent);
    if (result.isFinal && this.fake.duplicateFinals) this.send(message);
  }

  /** Checks and sends one message (after any delay); `onSent` once it left. */
  private send(message: Json, onSent?: () => void): void {
    if (this.flux) message.sequence_id = this.sequenceId++;
    const problem = this.flux ? FLUX_SPEC.serverMessageProblem(message) : serverMessageProblem(message);
    if (problem) this.fake.problems.push({ kind: 'sent', problem, message });
    const go = () =>
      this.later(() => {
        if (this.socket.readyState !== WebSocket.OPEN) return;
        this.socket.send(JSON.stringify(message));
        onSent?.();
        this.sent.push(message);
        this.notify();
      });
    if (this.held === null && this.holdEvent !== null && message.event === this.holdEvent) this.held = [];
    if (this.held !== null) {
      this.held.push(go);
      this.notify();
      return;
    }
    go();
  }

  /** Now, or after `messageDelayMs` (timers of one delay fire in order, so the messages keep theirs). */
  private later(action: () => void): void {
    if (this.fake.messageDelayMs > 0) setTimeout(action, this.fake.messageDelayMs);
    else action();
  }
}

/** Milliseconds as Deepgram's seconds, to the millisecond. */
function seconds(ms: number): number {
  return Math.round(ms) / 1000;
}

export interface FakeDeepgram {
  /** `ws://127.0.0.1:<port>`: DEEPGRAM_BASE_URL. */
  readonly baseUrl: string;
  /** The key the double accepts (`Authorization: Token <it>`). */
  apiKey: string;
  sessions: FakeDeepgramSession[];
  problems: DeepgramProblem[];
  /** The words of the caller's next turns, one entry a turn (a turn beyond them is heard without words, unless `everyTurn`); Flux hears a turn's parts (FluxTurn, or ` | `) a burst of speech each. */
  script(turns: (string | FluxTurn)[]): void;
  /** Forgets the turns scripted and not yet heard (a test that failed half-way leaves none to the next). */
  clearScript(): void;
  /** The words of every turn once the script is used up (a session's own `everyTurn` first); null: heard without words. */
  everyTurn: string | null;
  /** Refuses every handshake as Deepgram would for this status (401 INVALID_AUTH by default). */
  refuse: { status: number; err_code: string; err_msg: string } | null;
  /** Accepts the connection and never answers the handshake. */
  hang: boolean;
  /** Answers each handshake this late. */
  openDelayMs: number;
  /** Sends every message this late (in order). */
  messageDelayMs: number;
  /** Sends every final Results message twice. */
  duplicateFinals: boolean;
  /** Closes a socket idle this long with 1011 NET-0001 (Deepgram: 10 s). */
  idleTimeoutMs: number;
  /** The first session opened after this call. */
  nextSession(timeoutMs?: number): Promise<FakeDeepgramSession>;
  close(): Promise<void>;
}

/** Deepgram's INVALID_AUTH, as its reference gives it. */
export const INVALID_AUTH = { status: 401, err_code: 'INVALID_AUTH', err_msg: 'Invalid credentials.' } as const;

export async function startFakeDeepgram(options: { apiKey?: string } = {}): Promise<FakeDeepgram> {
  const server: Server = createServer((_request, response) => response.writeHead(426).end());
  const wss = new WebSocketServer({ noServer: true });
  const hung = new Set<Socket>();
  const turns: (string | FluxTurn)[] = [];
  let baseUrl = '';
  const fake: FakeDeepgram = {
    get baseUrl() {
      return baseUrl;
    },
    apiKey: options.apiKey ?? 'dg-test-key',
    sessions: [],
    problems: [],
    script: (next) => void turns.push(...next),
    clearScript: () => void turns.splice(0),
    everyTurn: null,
    refuse: null,
    hang: false,
    openDelayMs: 0,
    messageDelayMs: 0,
    duplicateFinals: false,
    idleTimeoutMs: DEEPGRAM_IDLE_MS,
    nextSession: (timeoutMs?: number) => waiters.next(timeoutMs),
    close: async () => {
      for (const socket of hung) socket.destroy();
      await closeLoopback(server, wss);
    },
  };
  const waiters = sessionWaiters<FakeDeepgramSession>(fake.sessions, 'Deepgram');

  /** Deepgram's refusal of a handshake: the status, `dg-request-id`, `dg-error` and the same words as a JSON body. */
  const refuseHandshake = (socket: Socket, status: number, errCode: string, errMsg: string) => {
    fake.problems.push({ kind: 'handshake', problem: `${status} ${errCode}: ${errMsg}` });
    const requestId = randomUUID();
    const body = JSON.stringify({ err_code: errCode, err_msg: errMsg, request_id: requestId });
    const reason = status === 401 ? 'Unauthorized' : status === 404 ? 'Not Found' : status === 400 ? 'Bad Request' : 'Refused';
    socket.end(
      `HTTP/1.1 ${status} ${reason}\r\nContent-Type: application/json\r\ndg-request-id: ${requestId}\r\ndg-error: ${body}\r\n` +
        `Connection: close\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
    );
  };

  server.on('upgrade', (request: IncomingMessage, socket: Socket, head: Buffer) => {
    if (fake.hang) {
      hung.add(socket);
      return;
    }
    const url = new URL(request.url ?? '/', 'http://fake');
    if (fake.refuse) return refuseHandshake(socket, fake.refuse.status, fake.refuse.err_code, fake.refuse.err_msg);
    const flux = url.pathname === '/v2/listen';
    if (url.pathname !== '/v1/listen' && !flux) return refuseHandshake(socket, 404, 'NOT_FOUND', `No such path: ${url.pathname}`);
    if (request.headers.authorization !== `Token ${fake.apiKey}`)
      return refuseHandshake(socket, INVALID_AUTH.status, INVALID_AUTH.err_code, INVALID_AUTH.err_msg);
    // Flux's models are served on /v2/listen only: /v1/listen refuses them as it does any model it does not list.
    const problem = flux ? fluxQueryProblem(url.searchParams) : queryProblem(url.searchParams);
    if (problem) return refuseHandshake(socket, 400, 'Bad Request', problem);
    const accept = () =>
      wss.handleUpgrade(request, socket, head, (ws) => {
        const session: FakeDeepgramSession = new FakeDeepgramSession(
          ws,
          url.searchParams,
          request.headers,
          fake,
          () => turns.shift() ?? session.everyTurn ?? fake.everyTurn ?? undefined,
          flux,
        );
        fake.sessions.push(session);
        waiters.opened(session);
      });
    if (fake.openDelayMs > 0) setTimeout(accept, fake.openDelayMs);
    else accept();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `ws://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return fake;
}
