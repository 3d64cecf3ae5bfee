import { eventually } from '../helpers/eventually.js';
import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import alawmulaw from 'alawmulaw';
import twilio from 'twilio';
import WebSocket from 'ws';
import { openSocket } from './open-socket.js';

// A Twilio Media Streams caller, as Twilio's side of a <Connect><Stream>: it opens the stream's
// WebSocket signed with X-Twilio-Signature over the wss URL, sends `connected` and `start` (with
// the callId custom parameter), sends the caller's audio as 20 ms μ-law `media` frames, and plays
// what it receives in real time: a `clear` drops what was not played yet, a `mark` is echoed back
// once the audio sent before it was played (or at once on a clear), as Twilio does.
// Twilio publishes no machine-readable description of Media Streams: the messages follow Twilio's
// docs page "Media Streams - WebSocket Messages" (https://www.twilio.com/docs/voice/media-streams/websocket-messages),
// looked up on 2026-11-26 (the stored copy searched showed its `connected` message; the `start`
// fields below are the ones that page names, not re-read in full that day): `connected` {event,
// protocol, version}; `start` {event, sequenceNumber, start: {streamSid, accountSid, callSid, tracks,
// customParameters, mediaFormat}, streamSid};
// `media`, `mark`, `clear`, `dtmf` and `stop` as below. The <Stream> URL takes no query string (custom
// values travel as <Parameter>s), and the upgrade is signed with X-Twilio-Signature over that URL.

const { mulaw } = alawmulaw;
const SAMPLE_RATE = 8000;
const FRAME_BYTES = 160;

export interface PlayedFrame {
  payload: Buffer;
  /** When it starts playing, in ms since the epoch. */
  startsAt: number;
  cleared: boolean;
}

/** Speech-like caller audio: syllables of a voiced tone under an envelope, then silence with a little noise. */
export function callerSpeech(speechMs: number, silenceMs: number, hz = 180): Buffer {
  const speech = new Int16Array(Math.round((SAMPLE_RATE * speechMs) / 1000));
  for (let i = 0; i < speech.length; i++) {
    const t = i / SAMPLE_RATE;
    const envelope = 0.6 + 0.4 * Math.sin(2 * Math.PI * 4 * t); // about four syllables a second
    const voiced = Math.sin(2 * Math.PI * hz * t) + 0.5 * Math.sin(2 * Math.PI * 2 * hz * t) + 0.25 * Math.sin(2 * Math.PI * 3 * hz * t);
    speech[i] = Math.round(9000 * envelope * voiced * 0.6);
  }
  const silence = new Int16Array(Math.round((SAMPLE_RATE * silenceMs) / 1000));
  for (let i = 0; i < silence.length; i++) silence[i] = Math.round((Math.random() - 0.5) * 60);
  return Buffer.concat([Buffer.from(mulaw.encode(speech)), Buffer.from(mulaw.encode(silence))]);
}

export class MediaStreamClient {
  readonly streamSid = `MZ${randomBytes(16).toString('hex')}`;
  readonly received: Record<string, any>[] = [];
  readonly frames: PlayedFrame[] = [];
  /** When each `media` message arrived (performance.now()), in order: a benchmark's relay times. */
  readonly mediaArrivals: number[] = [];
  readonly closed: Promise<{ code: number; reason: string }>;
  private cursor = 0;
  private readonly markTimers = new Map<NodeJS.Timeout, string>();

  constructor(private readonly socket: WebSocket) {
    this.closed = new Promise((resolve) => socket.once('close', (code, reason) => resolve({ code, reason: reason.toString() })));
    socket.on('close', () => this.markTimers.forEach((_name, timer) => clearTimeout(timer)));
    socket.on('message', (data) => {
      const arrivedAt = performance.now();
      this.onMessage(JSON.parse(data.toString()) as Record<string, any>, arrivedAt);
    });
  }

  /** Opens the stream as Twilio would; `authToken` signs it (a wrong one makes a forged signature). */
  static open(url: string, authToken: string | null, signedUrl = url): Promise<MediaStreamClient | { refused: number }> {
    const headers: Record<string, string> = {};
    if (authToken !== null) headers['X-Twilio-Signature'] = twilio.getExpectedTwilioSignature(authToken, signedUrl, {});
    return openSocket(url, [], { headers }).then((socket) => ('refused' in socket ? socket : new MediaStreamClient(socket)));
  }

  /** Twilio's `start`: `callSid` is the carrier's call (a random one unless given), `callId` our custom parameter (left out when null). */
  start(callId: string | null, callSid = `CA${randomBytes(16).toString('hex')}`): void {
    this.send({ event: 'connected', protocol: 'Call', version: '1.0.0' });
    this.send({
      event: 'start',
      sequenceNumber: '1',
      streamSid: this.streamSid,
      start: {
        streamSid: this.streamSid,
        accountSid: 'AC00000000000000000000000000000000',
        callSid,
        tracks: ['inbound'],
        customParameters: callId === null ? {} : { callId },
        mediaFormat: { encoding: 'audio/x-mulaw', sampleRate: 8000, channels: 1 },
      },
    });
  }

  /** Sends the audio as 20 ms frames, `pauseMs` apart (0: as fast as the socket takes them). */
  async sendAudio(ulaw: Buffer, pauseMs = 0): Promise<void> {
    for (let offset = 0; offset < ulaw.length; offset += FRAME_BYTES) {
      this.send({
        event: 'media',
        streamSid: this.streamSid,
        media: { track: 'inbound', payload: ulaw.subarray(offset, offset + FRAME_BYTES).toString('base64') },
      });
      if (pauseMs > 0) await new Promise((resolve) => setTimeout(resolve, pauseMs));
    }
  }

  /** A key pressed on the caller's phone: Twilio's `dtmf` message (the inbound track's). */
  sendDigit(digit: string): void {
    this.send({ event: 'dtmf', streamSid: this.streamSid, sequenceNumber: String(Date.now()), dtmf: { track: 'inbound_track', digit } });
  }

  stop(): void {
    this.send({ event: 'stop', streamSid: this.streamSid, stop: {} });
  }

  /** Stops reading what the gateway sends (a reader that never reads): it piles up in the sockets' buffers, then the gateway's. */
  stopReading(): void {
    this.socket.pause();
  }

  resumeReading(): void {
    this.socket.resume();
  }

  hangUp(): void {
    this.socket.close(1000);
  }

  /** The audio the caller heard: every frame received that was not cleared before it played. */
  heard(): PlayedFrame[] {
    return this.frames.filter((frame) => !frame.cleared);
  }

  events(name: string): Record<string, any>[] {
    return this.received.filter((message) => message.event === name);
  }

  /** Until `test` holds; no deadline of its own in a test (test/helpers/eventually.ts), `timeoutMs` in the bench. */
  async waitFor(test: () => boolean, what: string, timeoutMs?: number): Promise<void> {
    if (timeoutMs === undefined) {
      await eventually(test, (held) => held, { what: `the media stream to see ${what}` });
      return;
    }
    const until = Date.now() + timeoutMs;
    while (!test()) {
      if (Date.now() > until) throw new Error(`the media stream never saw ${what}`);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  }

  private send(message: Record<string, unknown>): void {
    if (this.socket.readyState === WebSocket.OPEN) this.socket.send(JSON.stringify(message));
  }

  private onMessage(message: Record<string, any>, arrivedAt: number): void {
    this.received.push(message);
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
      // Twilio answers the marks still waiting at once when its buffer is cleared.
      for (const [timer, name] of [...this.markTimers]) {
        clearTimeout(timer);
        this.markTimers.delete(timer);
        this.send({ event: 'mark', streamSid: this.streamSid, mark: { name } });
      }
    } else if (message.event === 'mark') {
      const timer = setTimeout(
        () => {
          this.markTimers.delete(timer);
          this.send({ event: 'mark', streamSid: this.streamSid, mark: { name: message.mark?.name } });
        },
        Math.max(0, this.cursor - now),
      );
      this.markTimers.set(timer, String(message.mark?.name));
    }
  }
}
