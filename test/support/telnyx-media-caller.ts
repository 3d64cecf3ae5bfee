import { performance } from 'node:perf_hooks';
import WebSocket from 'ws';
import { openSocket } from './open-socket.js';
import { eventually } from '../helpers/eventually.js';

// Telnyx's side of a TeXML <Connect><Stream bidirectionalMode="rtp">, as Telnyx's Media Streaming
// AsyncAPI describes the socket (developers.telnyx.com, api-reference/websockets/
// stream-call-media-over-websocket, read 2026-12-02): Telnyx opens the stream URL with no
// credentials of its own, sends `connected` {version}, then `start` {sequence_number, stream_id,
// start: {call_control_id, custom_parameters, media_format}}, then `media` {stream_id, media: {track,
// chunk, timestamp, payload}} of 20 ms of μ-law. The application sends back the page's Client Media
// Frame `media` {media: {payload}} ("RTP media chunks sent back to Telnyx can contain 20 milliseconds
// to 30 seconds of audio"), Mark Frame `mark` {mark: {name}} and Clear Frame `clear`. This caller
// plays what it receives in real time, as Telnyx does: a mark comes back once the media before it
// was played ("immediately if no audio is queued"), and a clear drops what was not played and
// returns the queued marks. Anything sent otherwise than the page says is kept in `problems`.

const FRAME_BYTES = 160;
const SAMPLE_RATE = 8000;
/** PCMU at 8 kHz: 20 ms to 30 s of audio per media frame sent back. */
const MIN_PAYLOAD_BYTES = 160;
const MAX_PAYLOAD_BYTES = 30 * SAMPLE_RATE;
const FRAME_KEYS: Record<string, { keys: string[]; inner?: string[] }> = {
  media: { keys: ['event', 'media'], inner: ['payload'] },
  mark: { keys: ['event', 'mark'], inner: ['name'] },
  clear: { keys: ['event'] },
};

export interface TelnyxPlayedFrame {
  payload: Buffer;
  /** When it starts playing, in ms since the epoch. */
  startsAt: number;
  cleared: boolean;
}

export class TelnyxMediaCaller {
  readonly streamId = `${crypto.randomUUID().toUpperCase()}`;
  readonly received: Record<string, any>[] = [];
  readonly frames: TelnyxPlayedFrame[] = [];
  /** When each `media` frame arrived (performance.now()), in order: a benchmark's relay times (test/bench/voice.ts). */
  readonly mediaArrivals: number[] = [];
  /** The marks returned to the application, in order: the audio before each was played (or cleared). */
  readonly returnedMarks: string[] = [];
  /** What the application sent otherwise than Telnyx's page describes. */
  readonly problems: string[] = [];
  readonly closed: Promise<{ code: number }>;
  private sequence = 0;
  private chunk = 0;
  private cursor = 0;
  private readonly markTimers = new Map<NodeJS.Timeout, string>();

  private constructor(private readonly socket: WebSocket) {
    this.closed = new Promise((resolve) => socket.once('close', (code) => resolve({ code })));
    socket.on('close', () => this.markTimers.forEach((_name, timer) => clearTimeout(timer)));
    socket.on('message', (data, isBinary) => {
      const arrivedAt = performance.now();
      if (isBinary) {
        this.problems.push('a binary message (Telnyx takes JSON text frames)');
        return;
      }
      this.onMessage(JSON.parse(data.toString()) as Record<string, any>, arrivedAt);
    });
  }

  /** Opens the stream URL as Telnyx does (no signature header): the caller, or the HTTP status it was refused with. */
  static open(url: string): Promise<TelnyxMediaCaller | { refused: number }> {
    return openSocket(url, []).then((socket) => ('refused' in socket ? socket : new TelnyxMediaCaller(socket)));
  }

  /** `connected`, then `start` naming the call (its call_control_id, TeXML's CallSid) and our call id as a custom parameter. */
  start(callControlId: string, callId: string): void {
    this.send({ event: 'connected', version: '1.0.0' });
    this.send({
      event: 'start',
      sequence_number: String(++this.sequence),
      stream_id: this.streamId,
      start: {
        call_control_id: callControlId,
        custom_parameters: { callId },
        media_format: { encoding: 'PCMU', sample_rate: 8000, channels: 1 },
      },
    });
  }

  /** The caller's audio as 20 ms frames of the inbound track, `pauseMs` apart (0: as fast as the socket takes them). */
  async sendAudio(ulaw: Buffer, pauseMs = 0): Promise<void> {
    for (let offset = 0; offset < ulaw.length; offset += FRAME_BYTES) {
      this.send({
        event: 'media',
        sequence_number: String(++this.sequence),
        stream_id: this.streamId,
        media: {
          track: 'inbound',
          chunk: String(++this.chunk),
          timestamp: String(this.chunk * 20),
          payload: ulaw.subarray(offset, offset + FRAME_BYTES).toString('base64'),
        },
      });
      if (pauseMs > 0) await new Promise((resolve) => setTimeout(resolve, pauseMs));
    }
  }

  /** A key pressed on the caller's phone: the page's DTMF Frame. */
  sendDigit(digit: string): void {
    this.send({ event: 'dtmf', sequence_number: String(++this.sequence), stream_id: this.streamId, dtmf: { digit } });
  }

  stop(): void {
    this.send({ event: 'stop', sequence_number: String(++this.sequence), stream_id: this.streamId, stop: { call_control_id: '', reason: 'hangup' } });
    this.socket.close(1000);
  }

  /** The audio the caller heard: every frame received that was not cleared before it played. */
  heard(): TelnyxPlayedFrame[] {
    return this.frames.filter((frame) => !frame.cleared);
  }

  events(name: string): Record<string, any>[] {
    return this.received.filter((message) => message.event === name);
  }

  waitFor(test: () => boolean, what: string): Promise<void> {
    return eventually(test, (held) => held, { what: `the Telnyx stream to see ${what}` }).then(() => undefined);
  }

  private check(message: Record<string, any>): void {
    const shape = FRAME_KEYS[String(message.event)];
    if (!shape) {
      this.problems.push(`an event Telnyx does not take: ${JSON.stringify(message).slice(0, 80)}`);
      return;
    }
    const extra = Object.keys(message).filter((key) => !shape.keys.includes(key));
    if (extra.length > 0) this.problems.push(`${message.event} with fields Telnyx does not name: ${extra.join(', ')}`);
    if (shape.inner) {
      const inner = message[shape.keys[1]!] as Record<string, unknown> | undefined;
      for (const key of shape.inner) if (typeof inner?.[key] !== 'string') this.problems.push(`${message.event} without ${shape.keys[1]}.${key}`);
    }
    if (message.event === 'media') {
      const payload = String(message.media?.payload ?? '');
      const bytes = Buffer.from(payload, 'base64');
      if (bytes.toString('base64') !== payload) this.problems.push('media whose payload is not base64');
      if (bytes.length < MIN_PAYLOAD_BYTES || bytes.length > MAX_PAYLOAD_BYTES) {
        this.problems.push(`media of ${bytes.length} bytes (${bytes.length / 8} ms): Telnyx takes 20 ms to 30 s`);
      }
    }
  }

  private onMessage(message: Record<string, any>, arrivedAt: number): void {
    this.received.push(message);
    this.check(message);
    const now = Date.now();
    if (message.event === 'media') {
      this.mediaArrivals.push(arrivedAt);
      const payload = Buffer.from(String(message.media?.payload ?? ''), 'base64');
      const startsAt = Math.max(now, this.cursor);
      this.cursor = startsAt + (payload.length / SAMPLE_RATE) * 1000;
      this.frames.push({ payload, startsAt, cleared: false });
    } else if (message.event === 'clear') {
      for (const frame of this.frames) if (frame.startsAt >= now) frame.cleared = true;
      this.cursor = now;
      // "A clear frame also returns queued marks."
      for (const [timer, name] of [...this.markTimers]) {
        clearTimeout(timer);
        this.markTimers.delete(timer);
        this.sendMark(name);
      }
    } else if (message.event === 'mark') {
      const name = String(message.mark?.name);
      const timer = setTimeout(
        () => {
          this.markTimers.delete(timer);
          this.sendMark(name);
        },
        Math.max(0, this.cursor - now),
      );
      this.markTimers.set(timer, name);
    }
  }

  private sendMark(name: string): void {
    this.returnedMarks.push(name);
    this.send({ event: 'mark', sequence_number: String(++this.sequence), stream_id: this.streamId, mark: { name } });
  }

  private send(message: Record<string, unknown>): void {
    if (this.socket.readyState === WebSocket.OPEN) this.socket.send(JSON.stringify(message));
  }
}
