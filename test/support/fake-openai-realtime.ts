import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';
import alawmulaw from 'alawmulaw';
import WebSocket, { WebSocketServer } from 'ws';

// An OpenAI Realtime double on loopback (WebSocket, the documented event names), for the
// speech-to-speech bridge: it records what it receives (session.update, the caller's audio, every
// event), runs a small voice-activity detector over the appended μ-law audio, and answers each
// spoken turn from a script with the events the real service sends: speech_started/stopped, the
// caller's transcription, then a reply as audio deltas (μ-law tones it generates, one per word)
// with its transcript deltas, tool calls and response.done. It can drop a session, or refuse them.

const { mulaw } = alawmulaw;

export type RealtimeEvent = { type: string } & Record<string, any>;

/** One part of a reply: its words, and the tone their audio is made of (so a test can tell parts apart by ear). */
export interface SpokenPart {
  text: string;
  hz?: number;
}

/** How the fake answers one caller turn. */
export interface ScriptedTurn {
  /** What the transcription says the caller said. */
  caller: string;
  /** What the agent says, in parts. */
  reply: SpokenPart[];
  /** Tools the agent calls after speaking. */
  tools?: { name: string; arguments: Record<string, unknown> }[];
  /** Milliseconds between two words sent (each word is WORD_MS of audio); default 5. */
  paceMs?: number;
}

export const WORD_MS = 200;
export const AGENT_HZ = 440;
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
  for (let i = 1; i < samples.length; i++) if ((samples[i - 1]! < 0) !== (samples[i]! < 0)) crossings++;
  return (crossings / 2) * (SAMPLE_RATE / samples.length);
}

export class FakeRealtimeSession {
  readonly received: RealtimeEvent[] = [];
  readonly audioChunks: Buffer[] = [];
  private speaking = false;
  private silentMs = 0;
  private responding: { id: string; cancelled: boolean } | null = null;
  private readonly waiters: { test: (event: RealtimeEvent) => boolean; resolve: (event: RealtimeEvent) => void }[] = [];
  readonly closed: Promise<void>;

  constructor(
    private readonly socket: WebSocket,
    readonly headers: IncomingHttpHeaders,
    readonly model: string | null,
    private readonly nextTurn: () => ScriptedTurn | undefined,
  ) {
    this.closed = new Promise((resolve) => socket.once('close', () => resolve()));
    socket.on('message', (data) => this.onMessage(JSON.parse(data.toString()) as RealtimeEvent));
    this.send({ type: 'session.created', session: { id: `sess_${randomUUID()}`, model } });
  }

  /** Everything the caller's side appended, as one buffer. */
  audio(): Buffer {
    return Buffer.concat(this.audioChunks);
  }

  sessionUpdates(): RealtimeEvent[] {
    return this.received.filter((event) => event.type === 'session.update');
  }

  /** Resolves with the first received event (past or future) of this type that passes the test. */
  waitFor(type: string, test: (event: RealtimeEvent) => boolean = () => true, timeoutMs = 5000): Promise<RealtimeEvent> {
    const seen = this.received.find((event) => event.type === type && test(event));
    if (seen) return Promise.resolve(seen);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`the fake provider received no ${type} in ${timeoutMs} ms`)), timeoutMs);
      this.waiters.push({ test: (event) => event.type === type && test(event), resolve: (event) => (clearTimeout(timer), resolve(event)) });
    });
  }

  /** The provider drops the socket without a closing handshake. */
  drop(): void {
    this.socket.terminate();
  }

  /** The agent speaks unprompted (a greeting): a reply as for a turn. */
  say(reply: SpokenPart[], options: Pick<ScriptedTurn, 'tools' | 'paceMs'> = {}): Promise<void> {
    return this.respond({ caller: '', reply, ...options });
  }

  private send(event: RealtimeEvent): void {
    if (this.socket.readyState === WebSocket.OPEN) this.socket.send(JSON.stringify({ event_id: `event_${randomUUID()}`, ...event }));
  }

  private onMessage(event: RealtimeEvent): void {
    this.received.push(event);
    for (const waiter of [...this.waiters]) {
      if (waiter.test(event)) {
        this.waiters.splice(this.waiters.indexOf(waiter), 1);
        waiter.resolve(event);
      }
    }
    if (event.type === 'session.update') this.send({ type: 'session.updated', session: event.session });
    if (event.type === 'input_audio_buffer.append') this.heard(Buffer.from(String(event.audio), 'base64'));
    if (event.type === 'response.cancel' && this.responding) this.responding.cancelled = true;
  }

  /** Server VAD, simulated: loud frames start speech, SILENCE_TO_STOP_MS of quiet ends it and the turn is answered. */
  private heard(chunk: Buffer): void {
    this.audioChunks.push(chunk);
    const level = rms(chunk);
    const ms = (chunk.length / SAMPLE_RATE) * 1000;
    if (!this.speaking && level > SPEECH_RMS) {
      this.speaking = true;
      this.silentMs = 0;
      this.send({ type: 'input_audio_buffer.speech_started', audio_start_ms: 0, item_id: `item_${randomUUID()}` });
    } else if (this.speaking && level < SILENCE_RMS) {
      this.silentMs += ms;
      if (this.silentMs >= SILENCE_TO_STOP_MS) {
        this.speaking = false;
        const itemId = `item_${randomUUID()}`;
        this.send({ type: 'input_audio_buffer.speech_stopped', audio_end_ms: 0, item_id: itemId });
        this.send({ type: 'input_audio_buffer.committed', item_id: itemId, previous_item_id: null });
        const turn = this.nextTurn();
        if (!turn) return;
        this.send({ type: 'conversation.item.input_audio_transcription.completed', item_id: itemId, content_index: 0, transcript: turn.caller });
        void this.respond(turn);
      }
    } else if (this.speaking) {
      this.silentMs = 0;
    }
  }

  private async respond(turn: ScriptedTurn): Promise<void> {
    const response = { id: `resp_${randomUUID()}`, cancelled: false };
    this.responding = response;
    const itemId = `item_${randomUUID()}`;
    this.send({ type: 'response.created', response: { id: response.id, object: 'realtime.response', status: 'in_progress', output: [] } });
    this.send({ type: 'response.output_item.added', response_id: response.id, output_index: 0, item: { id: itemId, type: 'message', role: 'assistant' } });
    const spoken: string[] = [];
    for (const part of turn.reply) {
      for (const word of part.text.split(/\s+/).filter(Boolean)) {
        if (response.cancelled) break;
        const delta = spoken.length === 0 ? word : ` ${word}`;
        spoken.push(delta);
        this.send({ type: 'response.audio_transcript.delta', response_id: response.id, item_id: itemId, output_index: 0, content_index: 0, delta });
        this.send({ type: 'response.audio.delta', response_id: response.id, item_id: itemId, output_index: 0, content_index: 0, delta: tone(part.hz ?? AGENT_HZ, WORD_MS).toString('base64') });
        await new Promise((resolve) => setTimeout(resolve, turn.paceMs ?? 5));
      }
    }
    if (!response.cancelled) {
      this.send({ type: 'response.audio.done', response_id: response.id, item_id: itemId, output_index: 0, content_index: 0 });
      this.send({ type: 'response.audio_transcript.done', response_id: response.id, item_id: itemId, output_index: 0, content_index: 0, transcript: spoken.join('') });
      for (const [index, tool] of (turn.tools ?? []).entries()) {
        this.send({
          type: 'response.function_call_arguments.done',
          response_id: response.id,
          item_id: `item_${randomUUID()}`,
          output_index: index + 1,
          call_id: `call_${randomUUID()}`,
          name: tool.name,
          arguments: JSON.stringify(tool.arguments),
        });
      }
    }
    this.send({ type: 'response.done', response: { id: response.id, object: 'realtime.response', status: response.cancelled ? 'cancelled' : 'completed' } });
    if (this.responding === response) this.responding = null;
  }
}

export interface FakeRealtime {
  url: string;
  sessions: FakeRealtimeSession[];
  /** Turns answered in order, across sessions. */
  script: ScriptedTurn[];
  /** When set, every new session is refused with this HTTP status. */
  refuseWith: number | null;
  nextSession(timeoutMs?: number): Promise<FakeRealtimeSession>;
  close(): Promise<void>;
}

export async function startFakeRealtime(): Promise<FakeRealtime> {
  const server: Server = createServer((_req, res) => res.writeHead(426).end());
  const wss = new WebSocketServer({ noServer: true });
  const pending: ((session: FakeRealtimeSession) => void)[] = [];
  const fake: FakeRealtime = {
    url: '',
    sessions: [],
    script: [],
    refuseWith: null,
    nextSession(timeoutMs = 5000) {
      const index = fake.sessions.length;
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error('no realtime session was opened')), timeoutMs);
        pending.push((session) => {
          if (fake.sessions.indexOf(session) >= index) {
            clearTimeout(timer);
            resolve(session);
          }
        });
      });
    },
    async close() {
      for (const client of wss.clients) client.terminate();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
  server.on('upgrade', (req, socket, head) => {
    if (fake.refuseWith) {
      socket.end(`HTTP/1.1 ${fake.refuseWith} Refused\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`);
      return;
    }
    wss.handleUpgrade(req, socket, head, (ws) => {
      const model = new URL(req.url ?? '/', 'http://fake').searchParams.get('model');
      const session = new FakeRealtimeSession(ws, req.headers, model, () => fake.script.shift());
      fake.sessions.push(session);
      for (const notify of pending.splice(0)) notify(session);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  fake.url = `ws://127.0.0.1:${(server.address() as AddressInfo).port}/v1/realtime`;
  return fake;
}
