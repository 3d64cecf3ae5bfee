import WebSocket from 'ws';
import type { MediaEvent, MediaLink } from '../telephony/carriers/media-link.js';
import { MEDIA_LIMITS, type MediaLimits } from '../voice/realtime/media-limits.js';

// The browser's side of a web call, and the one place that knows its framing. The live sessions
// (CallBridge, StreamingCall) speak the carrier-neutral media link (telephony/carriers/media-link.ts:
// audio, mark, clear out; MediaEvents in); this adapter is the browser's framing of it, as
// twilio-media.ts is Twilio's.
//
// The browser's framing (docs/voice.md, Web calls from the browser):
//   audio    binary frames of G.711 μ-law, 8 kHz, mono, both ways: the telephone's own audio, so a web
//            call goes through the pipelines unchanged (no transcoding here) and sounds like a phone call.
//            The browser resamples its microphone to 8 kHz in an AudioWorklet; a frame is 20 ms (160
//            bytes) and never more than WEB_FRAME_MAX_BYTES.
//   control  text frames of JSON: {"type":"mark","name"} both ways (the browser echoes a mark once the
//            audio before it has played, or at once on a clear), {"type":"clear"} (drop the audio not
//            played yet), {"type":"dtmf","digit"} and {"type":"hangup"} from the browser,
//            {"type":"ready","callId"} and {"type":"transcript","role":"caller"|"agent","text"} to it.

/** The subprotocol a talk socket speaks (the token travels as a second subprotocol, never in the URL). */
export const TALK_PROTOCOL = 'gateway-talk.v1';
/** The largest frame the browser may send: 200 ms of audio (1,600 bytes); a larger one closes the socket (1009). */
export const WEB_FRAME_MAX_BYTES = 1600;

/**
 * The browser's inbound rate. Its audio is 8,000 bytes a second in 50 frames; a browser may send at
 * most twice that for longer than the burst (a busy tab delivers frames in bunches), then it is cut,
 * as a Twilio stream is cut past MEDIA_LIMITS.
 */
export const WEB_MEDIA_LIMITS: MediaLimits = {
  ...MEDIA_LIMITS,
  messagesPerSecond: 60,
  bytesPerSecond: 16 * 1024,
};

const DIGIT = /^[0-9*#]$/;

/** One browser frame as the session's media event; null for a frame that means nothing. */
export function fromBrowser(data: Buffer, isBinary: boolean): MediaEvent | null {
  if (isBinary) return data.length > 0 ? { kind: 'audio', payload: data.toString('base64') } : null;
  let message: unknown;
  try {
    message = JSON.parse(data.toString('utf8'));
  } catch {
    return null;
  }
  if (!message || typeof message !== 'object') return null;
  const { type, name, digit } = message as Record<string, unknown>;
  if (type === 'mark' && typeof name === 'string' && name.length <= 128) return { kind: 'mark', name };
  if (type === 'dtmf' && typeof digit === 'string' && DIGIT.test(digit)) return { kind: 'dtmf', digit };
  if (type === 'hangup') return { kind: 'stop' };
  return null;
}

/** The browser's socket as a session's media link: what the session says becomes the browser's frames. */
export class WebMediaLink implements MediaLink {
  constructor(
    private readonly socket: WebSocket,
    private readonly maxBufferedBytes = MEDIA_LIMITS.maxBufferedBytes,
    private readonly slow: (buffered: number) => void = () => undefined,
  ) {}

  audio(payload: string): void {
    this.write(Buffer.from(payload, 'base64'));
  }

  mark(name: string): void {
    this.control({ type: 'mark', name });
  }

  clear(): void {
    this.control({ type: 'clear' });
  }

  /** A message of the gateway's own to the page (ready, transcript). */
  control(message: Record<string, unknown>): void {
    this.write(JSON.stringify(message));
  }

  close(code: number, reason: string): void {
    if (this.socket.readyState === WebSocket.OPEN) this.socket.close(code, reason);
  }

  get open(): boolean {
    return this.socket.readyState === WebSocket.OPEN;
  }

  /** A page that leaves more than maxBufferedBytes unread (it does not read, or reads slower than the audio comes) is cut at once. */
  private write(frame: Buffer | string): void {
    if (this.socket.readyState !== WebSocket.OPEN) return;
    this.socket.send(frame, { binary: typeof frame !== 'string' });
    if (this.socket.bufferedAmount > this.maxBufferedBytes) {
      this.slow(this.socket.bufferedAmount);
      this.socket.terminate();
    }
  }
}
