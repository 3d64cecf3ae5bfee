import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import alawmulaw from 'alawmulaw';
import WebSocket, { WebSocketServer } from 'ws';
import { clientEventProblem, serverEventProblem, type SpecProblem } from './openai-realtime-spec.js';
import { closeLoopback, sessionWaiters } from './loopback-sessions.js';
import { waiting } from '../helpers/eventually.js';

// An OpenAI Realtime double on loopback (WebSocket, the GA interface), for the speech-to-speech
// bridge. It speaks and checks the protocol as OpenAI publishes it (openai-realtime.schemas.json,
// vendored from openai/openai-openapi): every event it receives is validated against the GA client
// event schemas, closed to unknown keys as the service is, and one that fails is refused with the
// service's `error` event and not acted on; a socket opened with the retired `OpenAI-Beta:
// realtime=v1` header gets the `beta_api_shape_disabled` error and is closed with 4000; every event
// it sends is checked against the GA server event schemas. It records what it accepts
// (session.update, the caller's audio, every event), runs a small voice-activity detector over the
// appended μ-law audio, and answers each spoken turn from a script with the events the real service
// sends: speech_started/stopped, the caller's transcription, then a reply as audio deltas (μ-law
// tones it generates, one per word) with its transcript deltas, tool calls and response.done. It
// can drop a session, or refuse them. A turn may declare the provider's delay (`delayMs`) before
// its reply; each session notes when every appended frame arrived and every audio delta left, and
// which frame ended each turn, so a benchmark reads relay times through the gateway on one clock.
// `openDelayMs` answers each handshake that late (a provider slow to open its session; `holdOpen`: once
// a promise settles, for a test that must not race the delay), and each
// session notes when its first session.update arrived (the gateway's session open from there).
// A user message of text (conversation.item.create, `input_text`: the caller's keys) is noted in
// `texts`, and the next response.create asking for no line of its own is answered with the next
// scripted turn, as the model answers what it read. Its turn detection does what the session says:
// `interrupt_response` (default true) cancels the response in progress at speech_started, and with
// `create_response` false a turn is answered only when the client sends response.create.

const { mulaw } = alawmulaw;

export type RealtimeEvent = { type: string } & Record<string, any>;

/** One part of a reply: its words, and the tone their audio is made of (so a test can tell parts apart by ear). */
export interface SpokenPart {
  text: string;
  hz?: number;
}

/** An out-of-band text request as the double received it. */
export interface OutOfBandRequest {
  instructions: string;
  /** The text of its input's messages, joined by newlines. */
  input: string;
  metadata: Record<string, string> | null;
}

/** How the double answers one: its text (after `delayMs`), or a failed response. */
export interface OutOfBandAnswer {
  text: string;
  delayMs?: number;
  fail?: boolean;
}

/** A model asked for JSON {"summary": …}: a fixed one. */
const defaultTextAnswer = (): OutOfBandAnswer => ({ text: JSON.stringify({ summary: 'A caller spoke with the agent.' }) });

/** How the fake answers one caller turn. */
export interface ScriptedTurn {
  /** What the transcription says the caller said. */
  caller: string;
  /** What the agent says, in parts. */
  reply: SpokenPart[];
  /** Tools the agent calls after speaking. */
  tools?: { name: string; arguments: Record<string, unknown> }[];
  /**
   * What the model says when it is asked for a reply (response.create) after its tools' outputs
   * came back (conversation.item.create of function_call_output), given those outputs in order:
   * a model that speaks to its tools' answers.
   */
  afterTools?: (outputs: Record<string, unknown>[]) => SpokenPart[];
  /** Milliseconds between two words sent (each word is WORD_MS of audio); default 5. */
  paceMs?: number;
  /** The provider's declared delay: milliseconds from the end of the caller's speech to the reply's start (response.created, then its first audio); default 0. */
  delayMs?: number;
}

/** One turn as the double saw it (performance.now() times, in the double's process). */
export interface HeardTurn {
  /** Index in `appendedAt` of the caller's frame that ended the turn (its silence reached SILENCE_TO_STOP_MS). */
  frameIndex: number;
  /** When speech_stopped was sent. */
  stoppedAt: number;
  /** Index in `audioSentAt` of the reply's first audio delta, once sent. */
  firstAudioIndex: number | null;
}

export const WORD_MS = 200;
export const AGENT_HZ = 440;
/** The tone of a line a response's instructions asked for word for word (the first message), so a test can tell it by ear. */
export const FIRST_LINE_HZ = 660;

/** The last JSON string literal that ends `instructions`, parsed; null when there is none. */
export function quotedLine(instructions: unknown): string | null {
  if (typeof instructions !== 'string') return null;
  const match = /("(?:[^"\\]|\\.)*")\s*$/.exec(instructions);
  if (!match) return null;
  try {
    return JSON.parse(match[1]!) as string;
  } catch {
    return null;
  }
}
const SAMPLE_RATE = 8000;
const SPEECH_RMS = 1500;
const SILENCE_RMS = 300;
const SILENCE_TO_STOP_MS = 300;

/** μ-law bytes of a sine tone. */
export function tone(hz: number, ms: number, amplitude = 8000): Buffer {
  const samples = new Int16Array(Math.round((SAMPLE_RATE * ms) / 1000));
  for (let i = 0; i < samples.length; i++) samples[i] = Math.round(amplitude * Math.sin((2 * Math.PI * hz * i) / SAMPLE_RATE));
  return Buffer.from(mulaw.encode(samples));
}

const wordTones = new Map<number, string>();
/** One word's audio (WORD_MS of a tone), base64, made once per frequency. */
function wordAudio(hz: number): string {
  let audio = wordTones.get(hz);
  if (!audio) wordTones.set(hz, (audio = tone(hz, WORD_MS).toString('base64')));
  return audio;
}

export function rms(ulaw: Buffer): number {
  const samples = mulaw.decode(new Uint8Array(ulaw));
  if (samples.length === 0) return 0;
  let sum = 0;
  for (const sample of samples) sum += sample * sample;
  return Math.sqrt(sum / samples.length);
}

/** The main frequency of a μ-law chunk, by counting zero crossings. */
export function frequency(ulaw: Buffer): number {
  const samples = mulaw.decode(new Uint8Array(ulaw));
  let crossings = 0;
  for (let i = 1; i < samples.length; i++) if (samples[i - 1]! < 0 !== samples[i]! < 0) crossings++;
  return (crossings / 2) * (SAMPLE_RATE / samples.length);
}

/** What the double refused or got wrong, so a test can require there was nothing. */
export interface RealtimeProblem {
  /** `refused`: an event from the gateway the service would refuse; `sent`: an event of the double's own that is not GA. */
  kind: 'refused' | 'sent';
  event: unknown;
  problem: SpecProblem;
}

/**
 * The `error` the service sends, then closes the socket with 4000, when a client opens it with
 * `OpenAI-Beta: realtime=v1` (its type and code are the service's; the message's words are ours).
 */
export const BETA_SHAPE_DISABLED = {
  type: 'invalid_request_error',
  code: 'beta_api_shape_disabled',
  message:
    "The Realtime API beta interface has been removed. Connect without the 'OpenAI-Beta: realtime=v1' header and send GA events (https://platform.openai.com/docs/guides/realtime).",
  param: null,
  event_id: null,
} as const;

type Json = Record<string, any>;

/** The response being generated: cancelled (by the client, or by the service on the caller's speech), and how to end its wait for the next word. */
interface Responding {
  id: string;
  cancelled: boolean;
  reason?: 'client_cancelled' | 'turn_detected';
  wake: (() => void) | null;
}

/** The beta names of the GA server events that were renamed. */
const LEGACY_NAMES: Record<string, string> = {
  'response.output_audio.delta': 'response.audio.delta',
  'response.output_audio.done': 'response.audio.done',
  'response.output_audio_transcript.delta': 'response.audio_transcript.delta',
  'response.output_audio_transcript.done': 'response.audio_transcript.done',
  'response.output_text.delta': 'response.text.delta',
  'response.output_text.done': 'response.text.done',
};

/** How session.update applies: a plain object is merged key by key; a tagged one (a format, a turn detection: it has a `type`), an array or a value replaces. */
function merged(into: Json, update: Json): Json {
  const out: Json = { ...into };
  for (const [key, value] of Object.entries(update)) {
    const mergeable = (entry: unknown) => entry && typeof entry === 'object' && !Array.isArray(entry) && !('type' in entry);
    out[key] = mergeable(value) && mergeable(out[key]) ? merged(out[key], value) : value;
  }
  return out;
}

export class FakeRealtimeSession {
  readonly received: RealtimeEvent[] = [];
  readonly audioChunks: Buffer[] = [];
  /** When each appended chunk arrived (performance.now()), in order: a benchmark's relay times. */
  readonly appendedAt: number[] = [];
  /** When each agent audio delta was sent (performance.now()), in order. */
  readonly audioSentAt: number[] = [];
  /** The caller's turns the double answered, in order. */
  readonly heardTurns: HeardTurn[] = [];
  /** The text of each user message of text the gateway added (the caller's keys), in order. */
  readonly texts: string[] = [];
  /** Each out-of-band text request (response.create with conversation none): its instructions and its input's text, in order. */
  readonly outOfBand: OutOfBandRequest[] = [];
  /** A user message of text waits for the response.create that answers it. */
  private textWaiting = false;
  /** The effective session configuration, as `session.updated` reports it. */
  config: Json;
  /** When the first session.update arrived (performance.now()): the gateway's session is open from here. */
  configuredAt: number | null = null;
  private speaking = false;
  /** When the message being handled arrived (before it was parsed and checked). */
  private messageAt = 0;
  private silentMs = 0;
  private responding: Responding | null = null;
  /** The caller's last turn, heard with create_response false: answered by the next plain response.create. */
  private pendingTurn: { turn: ScriptedTurn; heard: HeardTurn } | null = null;
  /** Milliseconds of audio sent per assistant item, so a truncation past the end is refused as the service does. */
  private readonly audioMs = new Map<string, number>();
  private readonly openCalls = new Set<string>();
  /** The last turn that called tools and speaks after them, with the outputs given so far. */
  private followUp: { turn: ScriptedTurn; outputs: Record<string, unknown>[] } | null = null;
  private readonly waiters: { test: (event: RealtimeEvent) => boolean; resolve: (event: RealtimeEvent) => void }[] = [];
  readonly closed: Promise<void>;

  constructor(
    private readonly socket: WebSocket,
    readonly headers: IncomingHttpHeaders,
    readonly model: string | null,
    private readonly nextTurn: () => ScriptedTurn | undefined,
    private readonly problems: RealtimeProblem[],
    private readonly legacyNames: () => boolean = () => false,
    private readonly textAnswer: (request: OutOfBandRequest) => OutOfBandAnswer = defaultTextAnswer,
  ) {
    this.closed = new Promise((resolve) => socket.once('close', () => resolve()));
    this.config = {
      type: 'realtime',
      object: 'realtime.session',
      id: `sess_${randomUUID()}`,
      model: model ?? 'gpt-realtime',
      output_modalities: ['audio'],
      instructions: '',
      audio: {
        input: {
          format: { type: 'audio/pcm', rate: 24000 },
          turn_detection: { type: 'server_vad', threshold: 0.5, prefix_padding_ms: 300, silence_duration_ms: 200 },
        },
        output: { format: { type: 'audio/pcm', rate: 24000 }, voice: 'alloy', speed: 1 },
      },
      tools: [],
      tool_choice: 'auto',
      max_output_tokens: 'inf',
      tracing: null,
    };
    if (betaHeader(headers)) {
      // The retired beta interface: one error, then the service closes the socket.
      this.send({ type: 'error', error: { ...BETA_SHAPE_DISABLED } });
      socket.close(4000, 'beta_api_shape_disabled');
      return;
    }
    socket.on('message', (data) => {
      this.messageAt = performance.now();
      this.onMessage(data.toString());
    });
    this.send({ type: 'session.created', session: this.config });
  }

  /** Everything the caller's side appended, as one buffer. */
  audio(): Buffer {
    return Buffer.concat(this.audioChunks);
  }

  sessionUpdates(): RealtimeEvent[] {
    return this.received.filter((event) => event.type === 'session.update');
  }

  /** Resolves with the first received event (past or future) of this type that passes the test. */
  waitFor(type: string, test: (event: RealtimeEvent) => boolean = () => true, timeoutMs?: number): Promise<RealtimeEvent> {
    const seen = this.received.find((event) => event.type === type && test(event));
    if (seen) return Promise.resolve(seen);
    const received = new Promise<RealtimeEvent>((resolve) => this.waiters.push({ test: (event) => event.type === type && test(event), resolve }));
    const refused = () => ({ refused: this.problems.filter((problem) => problem.kind === 'refused').map((problem) => problem.problem.message) });
    return waiting(`the fake provider to receive ${type}`, received, { timeoutMs, describe: refused });
  }

  /** The provider drops the socket without a closing handshake. */
  drop(): void {
    this.socket.terminate();
  }

  /** The agent speaks unprompted (a greeting): a reply as for a turn. */
  say(reply: SpokenPart[], options: Pick<ScriptedTurn, 'tools' | 'paceMs'> = {}): Promise<void> {
    return this.respond({ caller: '', reply, ...options });
  }

  /** `stamps`: where to note when it went out (just before the socket write). */
  private send(event: RealtimeEvent, stamps?: number[]): void {
    const full = { event_id: `event_${randomUUID()}`, ...event };
    const problem = serverEventProblem(full);
    if (problem) this.problems.push({ kind: 'sent', event: full, problem });
    // Checked as GA, then renamed when the test asks for the beta names (a proxy or an older endpoint).
    if (this.legacyNames() && LEGACY_NAMES[full.type]) full.type = LEGACY_NAMES[full.type];
    const data = JSON.stringify(full);
    stamps?.push(performance.now());
    if (this.socket.readyState === WebSocket.OPEN) this.socket.send(data);
  }

  /** The service's answer to an event it will not act on: an `error` naming the event, the session kept. */
  private refuse(event: unknown, problem: SpecProblem, type = 'invalid_request_error'): void {
    this.problems.push({ kind: 'refused', event, problem });
    const eventId = event && typeof event === 'object' && typeof (event as Json).event_id === 'string' ? (event as Json).event_id : null;
    this.send({ type: 'error', error: { type, code: problem.code, message: problem.message, param: problem.param, event_id: eventId } });
  }

  private onMessage(data: string): void {
    let event: RealtimeEvent;
    try {
      event = JSON.parse(data) as RealtimeEvent;
    } catch {
      this.refuse(data, { code: 'invalid_json', message: 'The event is not valid JSON.', param: null });
      return;
    }
    const problem = clientEventProblem(event);
    if (problem) {
      this.refuse(event, problem);
      return;
    }
    if (event.type === 'conversation.item.truncate') {
      const sent = this.audioMs.get(event.item_id);
      if (sent === undefined)
        return this.refuse(event, { code: 'item_not_found', message: `Item with item_id '${event.item_id}' not found.`, param: 'item_id' });
      if (event.content_index !== 0) return this.refuse(event, { code: 'invalid_value', message: 'Invalid content_index.', param: 'content_index' });
      if (event.audio_end_ms > sent)
        return this.refuse(event, {
          code: 'invalid_value',
          message: `Audio content of ${sent}ms is shorter than ${event.audio_end_ms}ms.`,
          param: 'audio_end_ms',
        });
    }
    if (event.type === 'conversation.item.create' && event.item.type === 'function_call_output' && !this.openCalls.delete(event.item.call_id)) {
      return this.refuse(event, {
        code: 'invalid_value',
        message: `No function call with call_id '${event.item.call_id}' awaits an output.`,
        param: 'item.call_id',
      });
    }
    this.received.push(event);
    for (const waiter of [...this.waiters]) {
      if (waiter.test(event)) {
        this.waiters.splice(this.waiters.indexOf(waiter), 1);
        waiter.resolve(event);
      }
    }
    switch (event.type) {
      case 'session.update':
        this.configuredAt ??= this.messageAt;
        this.config = merged(this.config, event.session);
        this.send({ type: 'session.updated', session: this.config });
        return;
      case 'input_audio_buffer.append':
        this.heard(Buffer.from(String(event.audio), 'base64'));
        return;
      case 'response.cancel':
        if (this.responding && !this.responding.cancelled) this.cancel(this.responding, 'client_cancelled');
        return;
      case 'response.create': {
        // Out of band (conversation none): an answer of its own beside whatever the call's conversation is doing.
        if (event.response?.conversation === 'none') {
          void this.answerApart(event.response as Json);
          return;
        }
        // A model that does as its response's instructions say: one that asks for a line quoted as a
        // JSON string (the gateway's first message) is answered with exactly that line, spoken.
        const line = quotedLine(event.response?.instructions);
        if (line) void this.respond({ caller: '', reply: [{ text: line, hz: FIRST_LINE_HZ }] });
        else if (this.followUp?.turn.afterTools) {
          const { turn, outputs } = this.followUp;
          this.followUp = null;
          void this.respond({ caller: '', reply: turn.afterTools!(outputs) });
        } else if (this.textWaiting) {
          this.textWaiting = false;
          const turn = this.nextTurn();
          if (turn) void this.respond(turn);
        } else if (this.pendingTurn) {
          const { turn, heard } = this.pendingTurn;
          this.pendingTurn = null;
          void this.respond(turn, heard);
        }
        return;
      }
      case 'conversation.item.truncate':
        this.send({ type: 'conversation.item.truncated', item_id: event.item_id, content_index: event.content_index, audio_end_ms: event.audio_end_ms });
        return;
      case 'conversation.item.create': {
        if (event.item.type === 'function_call_output' && this.followUp) this.followUp.outputs.push(JSON.parse(String(event.item.output)));
        if (event.item.type === 'message' && event.item.role === 'user') {
          this.texts.push((event.item.content as Json[]).map((part) => String(part.text ?? '')).join(''));
          this.textWaiting = true;
        }
        const item = { id: event.item.id ?? `item_${randomUUID()}`, object: 'realtime.item', status: 'completed', ...event.item };
        this.send({ type: 'conversation.item.added', previous_item_id: null, item });
        this.send({ type: 'conversation.item.done', previous_item_id: null, item });
        return;
      }
    }
  }

  private cancel(response: Responding, reason: 'client_cancelled' | 'turn_detected'): void {
    response.cancelled = true;
    response.reason = reason;
    response.wake?.();
  }

  /** The session's turn detection as configured (null: turned off). */
  private turnDetection(): Json | null {
    return (this.config.audio?.input?.turn_detection ?? null) as Json | null;
  }

  /** Server VAD, simulated: loud frames start speech, SILENCE_TO_STOP_MS of quiet ends it and the turn is answered. */
  private heard(chunk: Buffer): void {
    this.appendedAt.push(this.messageAt);
    this.audioChunks.push(chunk);
    const level = rms(chunk);
    const ms = (chunk.length / SAMPLE_RATE) * 1000;
    if (!this.speaking && level > SPEECH_RMS) {
      this.speaking = true;
      this.silentMs = 0;
      this.send({ type: 'input_audio_buffer.speech_started', audio_start_ms: 0, item_id: `item_${randomUUID()}` });
      // interrupt_response (default true): the service cancels the response in progress itself.
      if (this.responding && !this.responding.cancelled && this.turnDetection()?.interrupt_response !== false) this.cancel(this.responding, 'turn_detected');
    } else if (this.speaking && level < SILENCE_RMS) {
      this.silentMs += ms;
      if (this.silentMs >= SILENCE_TO_STOP_MS) {
        this.speaking = false;
        const itemId = `item_${randomUUID()}`;
        this.send({ type: 'input_audio_buffer.speech_stopped', audio_end_ms: 0, item_id: itemId });
        const heard: HeardTurn = { frameIndex: this.appendedAt.length - 1, stoppedAt: performance.now(), firstAudioIndex: null };
        this.send({ type: 'input_audio_buffer.committed', item_id: itemId, previous_item_id: null });
        const turn = this.nextTurn();
        if (!turn) return;
        this.heardTurns.push(heard);
        this.send({
          type: 'conversation.item.input_audio_transcription.completed',
          item_id: itemId,
          content_index: 0,
          transcript: turn.caller,
          usage: { type: 'duration', seconds: 1 },
        });
        // create_response false: VAD events and the transcription still come; the client asks for the reply.
        if (this.turnDetection()?.create_response === false) this.pendingTurn = { turn, heard };
        else void this.respond(turn, heard);
      }
    } else if (this.speaking) {
      this.silentMs = 0;
    }
  }

  /**
   * An out-of-band response, text only, as the service streams one (response.created naming no
   * conversation and carrying the request's metadata back, the message's text part, its deltas, then
   * response.done): the default conversation and the response in progress are left as they are.
   */
  private async answerApart(request: Json): Promise<void> {
    const input = ((request.input ?? []) as Json[])
      .flatMap((item) => (item.type === 'message' ? ((item.content ?? []) as Json[]).map((part) => String(part.text ?? '')) : []))
      .join('\n');
    const asked: OutOfBandRequest = {
      instructions: String(request.instructions ?? ''),
      input,
      metadata: (request.metadata ?? null) as Record<string, string> | null,
    };
    this.outOfBand.push(asked);
    const answer = this.textAnswer(asked);
    if (answer.delayMs) await new Promise((resolve) => setTimeout(resolve, answer.delayMs));
    const id = `resp_${randomUUID()}`;
    const itemId = `item_${randomUUID()}`;
    // No conversation_id: its description says an out-of-band response's is null, its schema types it a string; it is left out (not required).
    const resource = { id, object: 'realtime.response', output_modalities: ['text'], metadata: asked.metadata };
    this.send({ type: 'response.created', response: { ...resource, status: 'in_progress', output: [] } });
    if (answer.fail) {
      this.send({
        type: 'response.done',
        response: { ...resource, status: 'failed', status_details: { type: 'failed', error: { type: 'server_error', code: 'server_error' } }, output: [] },
      });
      return;
    }
    const item = { id: itemId, object: 'realtime.item', type: 'message', role: 'assistant' };
    this.send({ type: 'response.output_item.added', response_id: id, output_index: 0, item: { ...item, status: 'in_progress', content: [] } });
    const base = { response_id: id, item_id: itemId, output_index: 0, content_index: 0 };
    this.send({ type: 'response.content_part.added', ...base, part: { type: 'text', text: '' } });
    for (const delta of answer.text.match(/.{1,24}/gs) ?? []) this.send({ type: 'response.output_text.delta', ...base, delta });
    this.send({ type: 'response.output_text.done', ...base, text: answer.text });
    this.send({ type: 'response.content_part.done', ...base, part: { type: 'text', text: answer.text } });
    const done = { ...item, status: 'completed', content: [{ type: 'output_text', text: answer.text }] };
    this.send({ type: 'response.output_item.done', response_id: id, output_index: 0, item: done });
    this.send({ type: 'response.done', response: { ...resource, status: 'completed', output: [done] } });
  }

  private async respond(turn: ScriptedTurn, heard?: HeardTurn): Promise<void> {
    if (turn.delayMs) await new Promise((resolve) => setTimeout(resolve, turn.delayMs));
    const response: Responding = { id: `resp_${randomUUID()}`, cancelled: false, wake: null };
    this.responding = response;
    const itemId = `item_${randomUUID()}`;
    const base = { response_id: response.id, item_id: itemId, output_index: 0, content_index: 0 };
    this.audioMs.set(itemId, 0);
    this.send({ type: 'response.created', response: { id: response.id, object: 'realtime.response', status: 'in_progress', output: [] } });
    const message = { id: itemId, object: 'realtime.item', type: 'message', role: 'assistant', status: 'in_progress', content: [] as Json[] };
    this.send({ type: 'response.output_item.added', response_id: response.id, output_index: 0, item: message });
    this.send({ type: 'conversation.item.added', previous_item_id: null, item: message });
    this.send({ type: 'response.content_part.added', ...base, part: { type: 'audio', transcript: '' } });
    const spoken: string[] = [];
    for (const part of turn.reply) {
      for (const word of part.text.split(/\s+/).filter(Boolean)) {
        if (response.cancelled) break;
        const delta = spoken.length === 0 ? word : ` ${word}`;
        spoken.push(delta);
        this.send({ type: 'response.output_audio_transcript.delta', ...base, delta });
        if (heard && heard.firstAudioIndex === null) heard.firstAudioIndex = this.audioSentAt.length;
        this.send({ type: 'response.output_audio.delta', ...base, delta: wordAudio(part.hz ?? AGENT_HZ) }, this.audioSentAt);
        this.audioMs.set(itemId, (this.audioMs.get(itemId) ?? 0) + WORD_MS);
        // A cancel ends the response at once, as the service does, not at the next word.
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, turn.paceMs ?? 5);
          response.wake = () => {
            clearTimeout(timer);
            resolve();
          };
        });
        response.wake = null;
      }
    }
    const output: Json[] = [];
    const done = { ...message, status: response.cancelled ? 'incomplete' : 'completed', content: [{ type: 'output_audio', transcript: spoken.join('') }] };
    if (!response.cancelled) {
      this.send({ type: 'response.output_audio.done', ...base });
      this.send({ type: 'response.output_audio_transcript.done', ...base, transcript: spoken.join('') });
      this.send({ type: 'response.content_part.done', ...base, part: { type: 'audio', transcript: spoken.join('') } });
    }
    this.send({ type: 'response.output_item.done', response_id: response.id, output_index: 0, item: done });
    output.push(done);
    if (!response.cancelled && turn.tools?.length) this.followUp = { turn, outputs: [] };
    if (!response.cancelled) {
      for (const [index, tool] of (turn.tools ?? []).entries()) {
        const call = {
          id: `item_${randomUUID()}`,
          object: 'realtime.item',
          type: 'function_call',
          status: 'completed',
          call_id: `call_${randomUUID()}`,
          name: tool.name,
          arguments: JSON.stringify(tool.arguments),
        };
        this.openCalls.add(call.call_id);
        this.send({
          type: 'response.output_item.added',
          response_id: response.id,
          output_index: index + 1,
          item: { ...call, status: 'in_progress', arguments: '' },
        });
        this.send({
          type: 'response.function_call_arguments.done',
          response_id: response.id,
          item_id: call.id,
          output_index: index + 1,
          call_id: call.call_id,
          name: call.name,
          arguments: call.arguments,
        });
        this.send({ type: 'response.output_item.done', response_id: response.id, output_index: index + 1, item: call });
        output.push(call);
      }
    }
    this.send({
      type: 'response.done',
      response: {
        id: response.id,
        object: 'realtime.response',
        status: response.cancelled ? 'cancelled' : 'completed',
        ...(response.cancelled ? { status_details: { type: 'cancelled', reason: response.reason ?? 'client_cancelled' } } : {}),
        output,
      },
    });
    if (this.responding === response) this.responding = null;
  }
}

/** Whether a handshake asks for the retired beta interface. */
function betaHeader(headers: IncomingHttpHeaders): boolean {
  const value = headers['openai-beta'];
  return (Array.isArray(value) ? value : [value ?? '']).some((entry) => /realtime/i.test(entry));
}

export interface FakeRealtime {
  url: string;
  sessions: FakeRealtimeSession[];
  /** Turns answered in order, across sessions. */
  script: ScriptedTurn[];
  /** When set, the turn every caller turn is answered with once the script is empty (a benchmark's endless calls). */
  everyTurn: ScriptedTurn | null;
  /** When set, every new session is refused with this HTTP status. */
  refuseWith: number | null;
  /** Handshakes refused so far (refuseWith). */
  refused: number;
  /** Milliseconds each handshake is answered late (0: at once): the gateway's session opens that much later. */
  openDelayMs: number;
  /** When set, each handshake is answered once this settles (a test holds the session's open for as long as it needs). */
  holdOpen: Promise<unknown> | null;
  /**
   * Events of the gateway the double refused as the service would (not GA, unknown keys, no
   * session.type...), and events of its own that are not GA: a test requires this stays empty.
   */
  problems: RealtimeProblem[];
  /** When set, the renamed audio and transcript events go out under their beta names. */
  legacyEventNames: boolean;
  /** How each out-of-band text request is answered (default: a fixed JSON summary). */
  textAnswer: (request: OutOfBandRequest) => OutOfBandAnswer;
  nextSession(timeoutMs?: number): Promise<FakeRealtimeSession>;
  close(): Promise<void>;
}

export async function startFakeRealtime(): Promise<FakeRealtime> {
  const server: Server = createServer((_req, res) => res.writeHead(426).end());
  const wss = new WebSocketServer({ noServer: true });
  const fake: FakeRealtime = {
    url: '',
    sessions: [],
    script: [],
    everyTurn: null,
    refuseWith: null,
    refused: 0,
    openDelayMs: 0,
    holdOpen: null,
    problems: [],
    legacyEventNames: false,
    textAnswer: defaultTextAnswer,
    nextSession: (timeoutMs?: number) => waiters.next(timeoutMs),
    close: () => closeLoopback(server, wss),
  };
  const waiters = sessionWaiters<FakeRealtimeSession>(fake.sessions, 'realtime');
  server.on('upgrade', (req, socket, head) => {
    if (fake.refuseWith) {
      fake.refused++;
      socket.end(`HTTP/1.1 ${fake.refuseWith} Refused\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`);
      return;
    }
    const accept = () =>
      wss.handleUpgrade(req, socket, head, (ws) => {
        const model = new URL(req.url ?? '/', 'http://fake').searchParams.get('model');
        const session = new FakeRealtimeSession(
          ws,
          req.headers,
          model,
          () => fake.script.shift() ?? fake.everyTurn ?? undefined,
          fake.problems,
          () => fake.legacyEventNames,
          (request) => fake.textAnswer(request),
        );
        fake.sessions.push(session);
        waiters.opened(session);
      });
    if (fake.holdOpen) void fake.holdOpen.then(accept);
    else if (fake.openDelayMs > 0) setTimeout(accept, fake.openDelayMs);
    else accept();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  fake.url = `ws://127.0.0.1:${(server.address() as AddressInfo).port}/v1/realtime`;
  return fake;
}
