import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';
import WebSocket, { WebSocketServer } from 'ws';
import { BETA_SHAPE_DISABLED, rms, type RealtimeEvent, type RealtimeProblem } from './fake-openai-realtime.js';
import { closeLoopback, sessionWaiters } from './loopback-sessions.js';
import { clientEventProblem, serverEventProblem, type SpecProblem } from './openai-realtime-spec.js';

// An OpenAI Realtime *transcription* double on loopback (WebSocket, the GA interface), for the
// streaming pipeline's OpenAI recognizer. It shares the Realtime double's vendored GA schemas
// (openai-realtime.schemas.json, whose `session.update` takes either a realtime or a transcription
// session, picked by `type`): every event it receives is validated against them, closed to unknown
// keys, and one that fails is refused with the service's `error` event; every event it sends is
// checked too. As the service does, it makes a socket opened with `?intent=transcription` a
// transcription session, and refuses a session.update whose type is not the session's own (a
// realtime socket cannot be made a transcription one, nor the reverse). The key is checked at the
// handshake: a wrong one is refused with HTTP 401 and OpenAI's error JSON. It runs a small
// voice-activity detector over the appended μ-law (the session's own silence_duration_ms ends a
// turn) and answers each turn from a script with what the service sends: speech_started (its
// audio_start_ms less the prefix padding), speech_stopped (audio_end_ms, the silence included, as
// OpenAI documents), committed, the transcript as one delta per word, then completed (or failed).
// `input_audio_buffer.commit` commits what was heard so far, or is refused as empty. Faults: a
// refused handshake (any status, OpenAI's JSON), a handshake answered late, a session that never
// confirms its update (hang), a socket dropped mid-stream, an error then a close (session expired),
// a turn whose transcription fails, a turn whose transcript comes late (after the next turn began).

const SAMPLE_RATE = 8000;
const SPEECH_RMS = 1500;
const SILENCE_RMS = 300;
export const TRANSCRIPTION_TEST_KEY = 'sk-test-transcribe-00000000000000wxyz';

/** How the double transcribes one caller turn. */
export interface TranscribedTurn {
  /** What the transcription says the caller said. */
  caller: string;
  /** The transcription fails (`conversation.item.input_audio_transcription.failed`) instead. */
  fail?: boolean;
  /** Milliseconds from the turn's commit to its first delta (a later turn may begin meanwhile); default 0. */
  delayMs?: number;
}

type Json = Record<string, any>;

export class FakeTranscriptionSession {
  readonly received: RealtimeEvent[] = [];
  readonly audioChunks: Buffer[] = [];
  /** The effective session, as `session.updated` reports it. */
  config: Json;
  /** What the double sent, in order (after its own check). */
  readonly sent: RealtimeEvent[] = [];
  readonly closed: Promise<void>;
  private receivedBytes = 0;
  /** Bytes appended since the last commit: a commit of none is refused. */
  private bufferedBytes = 0;
  private speaking: { itemId: string } | null = null;
  private silentMs = 0;
  private previousItem: string | null = null;

  constructor(
    private readonly socket: WebSocket,
    readonly headers: IncomingHttpHeaders,
    /** `transcription` for a socket opened with `?intent=transcription`, else `realtime`. */
    readonly kind: 'transcription' | 'realtime',
    private readonly nextTurn: () => TranscribedTurn | undefined,
    private readonly problems: RealtimeProblem[],
    private readonly confirms: () => boolean,
  ) {
    this.closed = new Promise((resolve) => socket.once('close', () => resolve()));
    const id = `sess_${randomUUID().replace(/-/g, '')}`;
    this.config =
      kind === 'transcription'
        ? {
            type: 'transcription',
            object: 'realtime.transcription_session',
            id,
            expires_at: Math.floor(Date.now() / 1000) + 3600,
            audio: {
              input: {
                format: { type: 'audio/pcm', rate: 24000 },
                transcription: { model: 'gpt-4o-transcribe' },
                turn_detection: { type: 'server_vad', threshold: 0.5, prefix_padding_ms: 300, silence_duration_ms: 500 },
              },
            },
          }
        : { type: 'realtime', object: 'realtime.session', id, model: 'gpt-realtime', output_modalities: ['audio'], instructions: '' };
    if (betaHeader(headers)) {
      this.send({ type: 'error', error: { ...BETA_SHAPE_DISABLED } });
      socket.close(4000, 'beta_api_shape_disabled');
      return;
    }
    socket.on('message', (data) => this.onMessage(data.toString()));
    this.send({ type: 'session.created', session: this.config });
  }

  sessionUpdates(): RealtimeEvent[] {
    return this.received.filter((event) => event.type === 'session.update');
  }

  /** Milliseconds of audio appended so far (μ-law 8 kHz: 8 bytes a millisecond). */
  audioMs(): number {
    return this.receivedBytes / (SAMPLE_RATE / 1000);
  }

  /** The provider drops the socket without a closing handshake. */
  drop(): void {
    this.socket.terminate();
  }

  /** The service's `error`, then it closes the socket (a session past its time, a server fault). */
  fail(error: { type: string; code: string | null; message: string }, code = 1011): void {
    this.send({ type: 'error', error: { ...error, param: null, event_id: null } });
    this.socket.close(code, error.code ?? 'error');
  }

  private send(event: RealtimeEvent): void {
    const full = { event_id: `event_${randomUUID().replace(/-/g, '')}`, ...event };
    const problem = serverEventProblem(full);
    if (problem) this.problems.push({ kind: 'sent', event: full, problem });
    this.sent.push(full);
    if (this.socket.readyState === WebSocket.OPEN) this.socket.send(JSON.stringify(full));
  }

  private refuse(event: unknown, problem: SpecProblem): void {
    this.problems.push({ kind: 'refused', event, problem });
    const eventId = event && typeof event === 'object' && typeof (event as Json).event_id === 'string' ? (event as Json).event_id : null;
    this.send({
      type: 'error',
      error: { type: 'invalid_request_error', code: problem.code, message: problem.message, param: problem.param, event_id: eventId },
    });
  }

  private onMessage(data: string): void {
    let event: RealtimeEvent;
    try {
      event = JSON.parse(data) as RealtimeEvent;
    } catch {
      return this.refuse(data, { code: 'invalid_json', message: 'The event is not valid JSON.', param: null });
    }
    const problem = clientEventProblem(event);
    if (problem) return this.refuse(event, problem);
    if (event.type === 'session.update' && event.session.type !== this.kind) {
      return this.refuse(event, {
        code: 'invalid_request_error',
        message: `Passing a ${event.session.type} session update event to a ${this.kind} session is not allowed.`,
        param: 'session.type',
      });
    }
    const update = event.type === 'session.update' ? (event.session as Json) : null;
    const model = update?.audio?.input?.transcription?.model ?? this.config.audio?.input?.transcription?.model;
    const detection =
      update?.audio?.input && 'turn_detection' in update.audio.input ? update.audio.input.turn_detection : this.config.audio?.input?.turn_detection;
    if (this.kind === 'transcription' && update && model === 'gpt-realtime-whisper' && detection !== null) {
      // OpenAI's transcription session schema: "For gpt-realtime-whisper, this must be null; VAD is not supported."
      return this.refuse(event, {
        code: 'invalid_value',
        message: 'Invalid value for turn_detection: gpt-realtime-whisper does not support VAD; set turn_detection to null.',
        param: 'session.audio.input.turn_detection',
      });
    }
    this.received.push(event);
    switch (event.type) {
      case 'session.update':
        // Nested objects merge key by key; a tagged one (with a `type`) or a value replaces.
        this.config = merged(this.config, event.session);
        if (this.confirms()) this.send({ type: 'session.updated', session: this.config });
        return;
      case 'input_audio_buffer.append':
        return this.heard(Buffer.from(String(event.audio), 'base64'));
      case 'input_audio_buffer.commit': {
        if (this.bufferedBytes === 0) {
          return this.refuse(event, {
            code: 'input_audio_buffer_commit_empty',
            message: 'Error committing input audio buffer: buffer too small. Expected at least 100ms of audio, but buffer only has 0.00ms of audio.',
            param: null,
          });
        }
        const itemId = this.speaking?.itemId ?? `item_${randomUUID().replace(/-/g, '')}`;
        this.speaking = null;
        this.commit(itemId);
        return;
      }
    }
  }

  private turnDetection(): Json {
    return (this.config.audio?.input?.turn_detection ?? {}) as Json;
  }

  /** Server VAD, simulated on μ-law: loud frames start speech, silence_duration_ms of quiet ends it. */
  private heard(chunk: Buffer): void {
    const format = this.config.audio?.input?.format?.type;
    if (this.kind === 'transcription' && format !== 'audio/pcmu') {
      this.problems.push({
        kind: 'refused',
        event: { type: 'input_audio_buffer.append' },
        problem: {
          code: 'double',
          message: `The double hears audio/pcmu only; the session's format is ${String(format)}.`,
          param: 'session.audio.input.format',
        },
      });
    }
    const startMs = this.audioMs();
    this.audioChunks.push(chunk);
    this.receivedBytes += chunk.length;
    this.bufferedBytes += chunk.length;
    if (this.kind !== 'transcription' || this.turnDetection().type !== 'server_vad') return;
    const level = rms(chunk);
    const ms = (chunk.length / SAMPLE_RATE) * 1000;
    if (!this.speaking && level > SPEECH_RMS) {
      this.speaking = { itemId: `item_${randomUUID().replace(/-/g, '')}` };
      this.silentMs = 0;
      const padding = Number(this.turnDetection().prefix_padding_ms ?? 300);
      this.send({ type: 'input_audio_buffer.speech_started', audio_start_ms: Math.max(0, Math.round(startMs - padding)), item_id: this.speaking.itemId });
    } else if (this.speaking && level < SILENCE_RMS) {
      this.silentMs += ms;
      if (this.silentMs >= Number(this.turnDetection().silence_duration_ms ?? 500)) {
        const { itemId } = this.speaking;
        this.speaking = null;
        // OpenAI: audio_end_ms "will correspond to the end of audio sent to the model, and thus includes the min_silence_duration_ms".
        this.send({ type: 'input_audio_buffer.speech_stopped', audio_end_ms: Math.round(this.audioMs()), item_id: itemId });
        this.commit(itemId);
      }
    } else if (this.speaking) {
      this.silentMs = 0;
    }
  }

  private commit(itemId: string): void {
    this.bufferedBytes = 0;
    this.send({ type: 'input_audio_buffer.committed', previous_item_id: this.previousItem, item_id: itemId });
    this.previousItem = itemId;
    const turn = this.nextTurn();
    if (turn) void this.transcribe(itemId, turn);
  }

  private async transcribe(itemId: string, turn: TranscribedTurn): Promise<void> {
    if (turn.delayMs) await new Promise((resolve) => setTimeout(resolve, turn.delayMs));
    if (turn.fail) {
      this.send({
        type: 'conversation.item.input_audio_transcription.failed',
        item_id: itemId,
        content_index: 0,
        error: { type: 'transcription_error', code: 'audio_unintelligible', message: 'The audio could not be transcribed.' },
      });
      return;
    }
    const words = turn.caller.split(/\s+/).filter(Boolean);
    for (const [index, word] of words.entries()) {
      this.send({ type: 'conversation.item.input_audio_transcription.delta', item_id: itemId, content_index: 0, delta: index === 0 ? word : ` ${word}` });
      await new Promise((resolve) => setImmediate(resolve));
    }
    this.send({
      type: 'conversation.item.input_audio_transcription.completed',
      item_id: itemId,
      content_index: 0,
      transcript: turn.caller,
      usage: { type: 'duration', seconds: 1 },
    });
  }
}

function merged(into: Json, update: Json): Json {
  const out: Json = { ...into };
  for (const [key, value] of Object.entries(update)) {
    const mergeable = (entry: unknown) => entry && typeof entry === 'object' && !Array.isArray(entry) && !('type' in entry);
    out[key] = mergeable(value) && mergeable(out[key]) ? merged(out[key], value) : value;
  }
  return out;
}

function betaHeader(headers: IncomingHttpHeaders): boolean {
  const value = headers['openai-beta'];
  return (Array.isArray(value) ? value : [value ?? '']).some((entry) => /realtime/i.test(entry));
}

/** OpenAI's error JSON for a refused handshake. */
function refusal(status: number, key: string | null): { error: Json } {
  if (status === 401) {
    const message = key
      ? `Incorrect API key provided: ${key.slice(0, 3)}${'*'.repeat(Math.max(4, key.length - 7))}${key.slice(-4)}. You can find your API key at https://platform.openai.com/account/api-keys.`
      : "You didn't provide an API key. You need to provide your API key in an Authorization header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY).";
    return { error: { message, type: 'invalid_request_error', param: null, code: key ? 'invalid_api_key' : null } };
  }
  if (status === 429)
    return {
      error: { message: 'Rate limit reached for realtime sessions. Please try again later.', type: 'requests', param: null, code: 'rate_limit_exceeded' },
    };
  return { error: { message: 'The server had an error while processing your request. Sorry about that!', type: 'server_error', param: null, code: null } };
}

export interface FakeTranscription {
  url: string;
  sessions: FakeTranscriptionSession[];
  /** Turns transcribed in order, across sessions. */
  script: TranscribedTurn[];
  /** The key accepted in `Authorization: Bearer`; another is refused with 401. */
  apiKey: string;
  /** When set, every handshake is refused with this HTTP status and OpenAI's error JSON for it. */
  refuseWith: number | null;
  /** Milliseconds each handshake is answered late. */
  openDelayMs: number;
  /** When false, session.update is taken but never confirmed (a service that hangs after the handshake). */
  confirmsUpdates: boolean;
  /** The gateway's events the double refused, and events of its own that are not GA: a test requires none. */
  problems: RealtimeProblem[];
  /** Every handshake's URL (path and query), in order. */
  handshakes: string[];
  nextSession(timeoutMs?: number): Promise<FakeTranscriptionSession>;
  close(): Promise<void>;
}

export async function startFakeTranscription(): Promise<FakeTranscription> {
  const server: Server = createServer((_req, res) => res.writeHead(426).end());
  const wss = new WebSocketServer({ noServer: true });
  const fake: FakeTranscription = {
    url: '',
    sessions: [],
    script: [],
    apiKey: TRANSCRIPTION_TEST_KEY,
    refuseWith: null,
    openDelayMs: 0,
    confirmsUpdates: true,
    problems: [],
    handshakes: [],
    nextSession: (timeoutMs?: number) => waiters.next(timeoutMs),
    close: () => closeLoopback(server, wss),
  };
  const waiters = sessionWaiters<FakeTranscriptionSession>(fake.sessions, 'transcription');
  server.on('upgrade', (req, socket, head) => {
    fake.handshakes.push(req.url ?? '/');
    const key = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1] ?? null;
    const status = fake.refuseWith ?? (key === fake.apiKey ? null : 401);
    if (status) {
      const body = JSON.stringify(refusal(status, key));
      socket.end(
        `HTTP/1.1 ${status} Refused\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
      );
      return;
    }
    const accept = () =>
      wss.handleUpgrade(req, socket, head, (ws) => {
        const intent = new URL(req.url ?? '/', 'http://fake').searchParams.get('intent');
        const session = new FakeTranscriptionSession(
          ws,
          req.headers,
          intent === 'transcription' ? 'transcription' : 'realtime',
          () => fake.script.shift(),
          fake.problems,
          () => fake.confirmsUpdates,
        );
        fake.sessions.push(session);
        waiters.opened(session);
      });
    if (fake.openDelayMs > 0) setTimeout(accept, fake.openDelayMs);
    else accept();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  fake.url = `ws://127.0.0.1:${(server.address() as AddressInfo).port}/v1/realtime`;
  return fake;
}
