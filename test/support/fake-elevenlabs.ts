import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import alawmulaw from 'alawmulaw';
import WebSocket, { WebSocketServer } from 'ws';
import { clientMessageProblem, queryProblem, serverMessageProblem, STREAM_INPUT_SPEC_SOURCE } from './elevenlabs-stream-input-spec.js';
import { closeLoopback, sessionWaiters } from './loopback-sessions.js';

// An ElevenLabs text-to-speech double on loopback: the input-streaming socket
// (`/v1/text-to-speech/{voice_id}/stream-input`) as ElevenLabs publishes it
// (elevenlabs-stream-input.asyncapi.json, vendored from elevenlabs/elevenlabs-docs). The handshake is
// checked (the path and voice, the `xi-api-key` header against the key it expects, the query against
// the binding's parameters, closed: an unknown one or a value outside its enum is refused), then every
// message: the first must be the initialization (`{"text": " "}` and its settings), the next ones text
// that ends with a space, `{"text": ""}` ends the input; each is validated against its schema, closed
// to unknown keys, and settings may not change after the first message. What the service refuses after
// the handshake it refuses the way ElevenLabs does: the socket is closed with 1008 (policy violation)
// and its words as the close reason, cut to the 123 bytes a close frame holds.
//
// It buffers text as the service does (the chunk schedule, unless `auto_mode`, `flush` or the end of
// input says to speak now), and speaks each generation deterministically: μ-law 8 kHz, MS_PER_CHAR ms per
// character (divided by `speed`), a tone per word loud enough for a phone line's voice detection,
// silence for spaces, sent in chunks of CHUNK_CHARS characters with their alignment (chars, start
// times and durations relative to the chunk, as the AsyncAPI says). After the end of input and the
// last audio it sends `{"isFinal": true}` and closes with 1000. Every message it sends is checked
// against the server schemas too. It records the texts it received in order (across streams), and
// offers faults: refuse the key (at the handshake or by a 1008 close), hang (never answer the
// handshake, or never speak), delay the first audio, pace the chunks slower than real time, drop the
// socket after a number of audio chunks. For the benchmark, each stream stamps (performance.now()) when
// each text arrived and when each audio message left, so a relay through the gateway is read on the
// bench's one clock.

const { mulaw } = alawmulaw;

const SAMPLE_RATE = 8000;
/** Milliseconds of audio per character at speed 1 (about 15 characters a second, a brisk speaking rate). */
export const MS_PER_CHAR = 65;
/** Characters per audio message: a sentence comes in several chunks, as the service's does. */
export const CHUNK_CHARS = 12;
/** The service's default chunk schedule (characters buffered before each generation), from the AsyncAPI. */
const DEFAULT_SCHEDULE = [120, 160, 250, 290];
/** The fewest characters `try_trigger_generation` speaks (the schedule's floor, per the AsyncAPI's "range 50-500"). */
const TRIGGER_MINIMUM = 50;
/** The models ElevenLabs does not serve on this socket ("WebSockets are not available for the eleven_v3 model"). */
const SOCKETLESS_MODELS = new Set(['eleven_v3']);
/** The inactivity message ElevenLabs closes an idle stream with (its words, as reported in elevenlabs/elevenlabs-docs#426). */
const inactivityMessage = (seconds: number) =>
  `Have not received a new text input within the timeout of ${seconds} seconds. Streaming input terminated. Please make sure to either feed the input in the timely manner, or to send the end of input text (empty string "") when done.`;

/** ElevenLabs' refusal of a key, as its REST API words it (`invalid_api_key`, developer-guides/error-messages). */
export const INVALID_API_KEY = { status: 'invalid_api_key', message: 'Invalid API key' } as const;

/** μ-law bytes of a sine tone, or silence when `hz` is 0. */
export function tone(hz: number, ms: number, amplitude = 8000): Buffer {
  const samples = new Int16Array(Math.round((SAMPLE_RATE * ms) / 1000));
  if (hz > 0) for (let i = 0; i < samples.length; i++) samples[i] = Math.round(amplitude * Math.sin((2 * Math.PI * hz * i) / SAMPLE_RATE));
  return Buffer.from(mulaw.encode(samples));
}

/** Root mean square of μ-law audio, in 16-bit sample units. */
export function rms(ulaw: Buffer): number {
  const samples = mulaw.decode(new Uint8Array(ulaw));
  if (samples.length === 0) return 0;
  let sum = 0;
  for (const sample of samples) sum += sample * sample;
  return Math.sqrt(sum / samples.length);
}

/** The tone of the n-th word of a stream: within a phone line's band, and different from its neighbours'. */
export function wordHz(wordIndex: number): number {
  return 400 + (wordIndex % 8) * 150;
}

/** A message of the gateway the double refused, or one of its own that does not match the spec. */
export interface ElevenLabsProblem {
  kind: 'refused' | 'sent';
  message: unknown;
  problem: string;
}

export interface ElevenLabsFaults {
  /** Refuse even the expected key. */
  refuseKey: boolean;
  /** How a key is refused: HTTP 401 at the handshake (the REST API's `invalid_api_key`), or a 1008 close after the first message. */
  keyRefusal: 'handshake' | 'close';
  /** Never answer the handshake, or accept it and never speak. */
  hang: 'handshake' | 'audio' | null;
  /** Drop the socket (no close frame) once this many audio chunks of a stream were sent. */
  dropAfterChunks: number | null;
  /** Milliseconds before a stream's first audio. */
  firstAudioDelayMs: number;
  /** Milliseconds between two audio chunks (more than a chunk's duration: slower than real time). */
  chunkIntervalMs: number;
  /** Speaking rate: 2 makes audio half as long per character. */
  speed: number;
  /** Overrides the inactivity timeout (`inactivity_timeout` seconds, 20 unless the query says), in milliseconds. */
  inactivityMs: number | null;
}

const NO_FAULTS: ElevenLabsFaults = {
  refuseKey: false,
  keyRefusal: 'handshake',
  hang: null,
  dropAfterChunks: null,
  firstAudioDelayMs: 0,
  chunkIntervalMs: 0,
  speed: 1,
  inactivityMs: null,
};

type Json = Record<string, any>;

/** One alignment entry per character: the character, where it starts in its chunk, how long it lasts. */
interface Aligned {
  char: string;
  ms: number;
  hz: number;
}

function byteCut(text: string, bytes: number): string {
  let out = text;
  while (Buffer.byteLength(out) > bytes) out = out.slice(0, -1);
  return out;
}

export class FakeElevenLabsStream {
  /** Every message received, parsed, in order (the refused one included). */
  readonly received: Json[] = [];
  /** The texts to speak received, in order (not the initialization's " ", nor the end's ""). */
  readonly texts: string[] = [];
  /** The texts spoken, one per generation, in order. */
  readonly generations: string[] = [];
  /** When each of `texts` arrived (performance.now()). */
  readonly textAt: number[] = [];
  /** Audio chunks sent, and when each left (performance.now()). */
  audioChunks = 0;
  readonly audioSentAt: number[] = [];
  initialization: Json | null = null;
  ended = false;
  /** How the socket closed, and by whom. */
  readonly closed: Promise<{ code: number; reason: string }>;
  private buffer = '';
  private wordIndex = 0;
  private queue: Promise<void> = Promise.resolve();
  private inactivity: NodeJS.Timeout | undefined;
  private readonly autoMode: boolean;
  private readonly schedule: number[] = DEFAULT_SCHEDULE;

  constructor(
    private readonly socket: WebSocket,
    readonly voiceId: string,
    readonly query: URLSearchParams,
    readonly headers: IncomingHttpHeaders,
    private readonly fake: FakeElevenLabs,
  ) {
    this.autoMode = query.get('auto_mode') === 'true';
    this.closed = new Promise((resolve) => socket.once('close', (code, reason) => resolve({ code, reason: reason.toString() })));
    socket.once('close', () => clearTimeout(this.inactivity));
    socket.on('message', (data, isBinary) => this.onMessage(isBinary ? null : data.toString()));
    this.touch();
  }

  /** The stream's socket is dropped without a closing handshake. */
  drop(): void {
    this.socket.terminate();
  }

  /** Closes as the service does when it refuses: 1008 and its words, cut to what a close frame holds. */
  private refuse(message: unknown, problem: string): void {
    this.fake.problems.push({ kind: 'refused', message, problem });
    this.close(1008, problem);
  }

  private close(code: number, reason: string): void {
    clearTimeout(this.inactivity);
    if (this.socket.readyState === WebSocket.OPEN) this.socket.close(code, byteCut(reason, 123));
  }

  private send(kind: 'AudioOutput' | 'FinalOutput', message: Json): void {
    const problem = serverMessageProblem(kind, message);
    if (problem) this.fake.problems.push({ kind: 'sent', message, problem });
    if (this.socket.readyState === WebSocket.OPEN) this.socket.send(JSON.stringify(message));
  }

  /** Restarts the inactivity clock: each message from the client does, until its input ends. */
  private touch(): void {
    clearTimeout(this.inactivity);
    if (this.ended) return;
    const seconds = Number(this.query.get('inactivity_timeout') ?? 20);
    this.inactivity = setTimeout(() => this.close(1008, inactivityMessage(seconds)), this.fake.faults.inactivityMs ?? seconds * 1000);
  }

  private onMessage(data: string | null): void {
    let message: Json;
    try {
      message = JSON.parse(data ?? '') as Json;
    } catch {
      this.refuse(data, 'Invalid message: not JSON text');
      return;
    }
    this.received.push(message);
    this.touch();
    if (this.ended) return this.refuse(message, 'Invalid message: the input already ended');
    if (!this.initialization) return this.initialize(message);
    if (message && typeof message === 'object' && message.text === '') {
      const problem = clientMessageProblem('CloseConnection', message);
      if (problem) return this.refuse(message, `Invalid message: ${problem}`);
      this.ended = true;
      clearTimeout(this.inactivity);
      this.speak(this.buffer);
      this.buffer = '';
      this.queue = this.queue.then(() => {
        this.send('FinalOutput', { isFinal: true });
        this.close(1000, '');
      });
      return;
    }
    const problem = clientMessageProblem('SendText', message);
    if (problem) return this.refuse(message, `Invalid message: ${problem}`);
    for (const [field, initial] of [
      ['voice_settings', 'voice_settings'],
      ['generator_config', 'generation_config'],
    ] as const) {
      if (field in message && JSON.stringify(message[field]) !== JSON.stringify(this.initialization[initial])) {
        return this.refuse(message, `${field} field must be provided in the first message and then either be not provided or not change.`);
      }
    }
    const text = String(message.text);
    if (this.fake.requireTrailingSpace && !text.endsWith(' ')) return this.refuse(message, 'Invalid message: text must end with a single space');
    // A single space keeps the stream alive and says nothing (developer-guides/websockets, Tips).
    if (text === ' ') return;
    this.texts.push(text);
    this.textAt.push(performance.now());
    this.fake.texts.push(text);
    this.buffer += text;
    const threshold = this.schedule[Math.min(this.generations.length, this.schedule.length - 1)]!;
    if (
      this.autoMode ||
      message.flush === true ||
      (message.try_trigger_generation === true && this.buffer.length >= TRIGGER_MINIMUM) ||
      this.buffer.length >= threshold
    ) {
      this.speak(this.buffer);
      this.buffer = '';
    }
  }

  private initialize(message: Json): void {
    const problem = clientMessageProblem('InitializeConnection', message);
    if (problem) return this.refuse(message, `Invalid message: the first message must initialize the stream (${problem})`);
    const key = (this.headers['xi-api-key'] as string | undefined) ?? (message['xi-api-key'] as string | undefined);
    if (key !== this.fake.apiKey || this.fake.faults.refuseKey) return this.refuse({ ...message, 'xi-api-key': undefined }, INVALID_API_KEY.message);
    if (this.fake.voices && !this.fake.voices.has(this.voiceId)) return this.refuse(message, `A voice with the voice_id ${this.voiceId} was not found.`);
    this.initialization = message;
  }

  /** Queues one generation: its audio in chunks, in order after the ones before it. */
  private speak(text: string): void {
    if (!text) return;
    this.generations.push(text);
    const characters: Aligned[] = [];
    let inWord = false;
    for (const char of text) {
      const space = /\s/.test(char);
      if (!space && !inWord) this.wordIndex++;
      inWord = !space;
      characters.push({ char, ms: Math.max(1, Math.round(MS_PER_CHAR / this.fake.faults.speed)), hz: space ? 0 : wordHz(this.wordIndex - 1) });
    }
    this.queue = this.queue.then(async () => {
      for (let start = 0; start < characters.length; start += CHUNK_CHARS) {
        if (this.socket.readyState !== WebSocket.OPEN) return;
        const faults = this.fake.faults;
        if (faults.hang === 'audio') return new Promise<void>(() => undefined);
        const wait = this.audioChunks === 0 ? faults.firstAudioDelayMs : faults.chunkIntervalMs;
        if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
        if (this.socket.readyState !== WebSocket.OPEN) return;
        const chunk = characters.slice(start, start + CHUNK_CHARS);
        const starts: number[] = [];
        let at = 0;
        for (const entry of chunk) {
          starts.push(at);
          at += entry.ms;
        }
        const alignment = { chars: chunk.map((entry) => entry.char), charStartTimesMs: starts, charsDurationsMs: chunk.map((entry) => entry.ms) };
        const audio = Buffer.concat(chunk.map((entry) => tone(entry.hz, entry.ms))).toString('base64');
        this.send('AudioOutput', { audio, alignment, normalizedAlignment: alignment });
        this.audioSentAt.push(performance.now());
        this.audioChunks++;
        if (faults.dropAfterChunks !== null && this.audioChunks >= faults.dropAfterChunks) {
          this.drop();
          return;
        }
        // Let the event loop breathe between chunks even at full speed, as a socket would.
        await new Promise((resolve) => setImmediate(resolve));
      }
    });
  }
}

export interface FakeElevenLabs {
  /** ws://127.0.0.1:port: what ELEVENLABS_BASE_URL is set to. */
  readonly baseUrl: string;
  /** The key it expects in `xi-api-key`. */
  apiKey: string;
  /** Voice ids it knows; null: any. */
  voices: Set<string> | null;
  /** Refuse a text that does not end with a space, as the AsyncAPI says it should ("Should always end with a single space string"). */
  requireTrailingSpace: boolean;
  faults: ElevenLabsFaults;
  streams: FakeElevenLabsStream[];
  /** Every text to speak received, across streams, in order. */
  texts: string[];
  /** Handshakes refused, with the HTTP status and the reason given. */
  refusedHandshakes: { status: number; body: unknown }[];
  /** Messages it refused, and messages of its own that do not match the spec: a test requires none of the second kind. */
  problems: ElevenLabsProblem[];
  nextStream(timeoutMs?: number): Promise<FakeElevenLabsStream>;
  /** Faults back to none, records emptied. */
  reset(): void;
  close(): Promise<void>;
}

const PATH = /^\/v1\/text-to-speech\/([^/]+)\/stream-input$/;

export async function startFakeElevenLabs(options: { apiKey?: string } = {}): Promise<FakeElevenLabs> {
  const server: Server = createServer((_req, res) => answer(res, 404, { detail: 'Not Found' }));
  const wss = new WebSocketServer({ noServer: true });
  let port = 0;
  const fake: FakeElevenLabs = {
    get baseUrl() {
      return `ws://127.0.0.1:${port}`;
    },
    apiKey: options.apiKey ?? 'xi-test-key',
    voices: null,
    requireTrailingSpace: true,
    faults: { ...NO_FAULTS },
    streams: [],
    texts: [],
    refusedHandshakes: [],
    problems: [],
    nextStream: (timeoutMs?: number) => waiters.next(timeoutMs),
    reset() {
      fake.faults = { ...NO_FAULTS };
      fake.voices = null;
      fake.requireTrailingSpace = true;
      fake.texts.length = 0;
      fake.problems.length = 0;
      fake.refusedHandshakes.length = 0;
    },
    close: async () => {
      for (const socket of hung) socket.destroy();
      await closeLoopback(server, wss);
    },
  };
  /** Handshakes left unanswered (the `hang: 'handshake'` fault): an upgraded socket is no longer the HTTP server's to close. */
  const hung = new Set<import('node:stream').Duplex>();
  const waiters = sessionWaiters<FakeElevenLabsStream>(fake.streams, 'ElevenLabs stream-input');

  /** Refuses a handshake with an HTTP answer, ElevenLabs' JSON `detail` as its body. */
  function refuseHandshake(socket: import('node:stream').Duplex, status: number, body: unknown): void {
    fake.refusedHandshakes.push({ status, body });
    const text = JSON.stringify(body);
    socket.end(
      `HTTP/1.1 ${status} Refused\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(text)}\r\nConnection: close\r\n\r\n${text}`,
    );
  }

  server.on('upgrade', (req, socket, head) => {
    if (fake.faults.hang === 'handshake') {
      // Never answered: the client's handshake timeout decides. Its giving up ends the socket here too.
      hung.add(socket);
      socket.once('end', () => socket.destroy());
      socket.once('close', () => hung.delete(socket));
      return;
    }
    const url = new URL(req.url ?? '/', 'http://fake');
    const path = PATH.exec(url.pathname);
    if (!path) return refuseHandshake(socket, 404, { detail: 'Not Found' });
    const key = req.headers['xi-api-key'];
    if (fake.faults.keyRefusal === 'handshake' && key !== undefined && (key !== fake.apiKey || fake.faults.refuseKey)) {
      return refuseHandshake(socket, 401, { detail: { ...INVALID_API_KEY } });
    }
    const problem = queryProblem(new URLSearchParams(url.search));
    if (problem) return refuseHandshake(socket, 400, { detail: { status: 'invalid_request', message: problem } });
    const model = url.searchParams.get('model_id');
    if (model && SOCKETLESS_MODELS.has(model)) {
      return refuseHandshake(socket, 403, { detail: { status: 'model_not_supported', message: `The model ${model} is not available over WebSockets.` } });
    }
    wss.handleUpgrade(req, socket, head, (ws) => {
      const stream = new FakeElevenLabsStream(ws, decodeURIComponent(path[1]!), url.searchParams, req.headers, fake);
      fake.streams.push(stream);
      waiters.opened(stream);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
  return fake;
}

function answer(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'Content-Type': 'application/json' }).end(JSON.stringify(body));
}

export { STREAM_INPUT_SPEC_SOURCE };
