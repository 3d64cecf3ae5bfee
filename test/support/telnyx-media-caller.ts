import WebSocket from 'ws';
import { eventually } from '../helpers/eventually.js';

// Telnyx's side of a TeXML <Connect><Stream bidirectionalMode="rtp">, as Telnyx's Media Streaming
// AsyncAPI describes the socket (developers.telnyx.com, api-reference/websockets/
// stream-call-media-over-websocket, read 2026-12-02): Telnyx opens the stream URL with no
// credentials of its own, sends `connected` {version}, then `start` {sequence_number, stream_id,
// start: {call_control_id, custom_parameters, media_format}}, then `media` {stream_id, media: {track,
// chunk, timestamp, payload}} of 20 ms of μ-law; the application sends back `media` {media:
// {payload}}, `mark` {mark: {name}} and `clear`, and Telnyx answers a mark with its own once played
// (here at once: this caller plays nothing).

const FRAME_BYTES = 160;

export class TelnyxMediaCaller {
  readonly streamId = `${crypto.randomUUID().toUpperCase()}`;
  readonly received: Record<string, any>[] = [];
  readonly closed: Promise<{ code: number }>;
  private sequence = 0;
  private chunk = 0;

  private constructor(private readonly socket: WebSocket) {
    this.closed = new Promise((resolve) => socket.once('close', (code) => resolve({ code })));
    socket.on('message', (data) => {
      const message = JSON.parse(data.toString()) as Record<string, any>;
      this.received.push(message);
      if (message.event === 'mark') this.send({ event: 'mark', stream_id: this.streamId, mark: { name: message.mark?.name } });
    });
  }

  /** Opens the stream URL as Telnyx does (no signature header): the caller, or the HTTP status it was refused with. */
  static open(url: string): Promise<TelnyxMediaCaller | { refused: number }> {
    return new Promise((resolve, reject) => {
      const socket = new WebSocket(url);
      socket.once('unexpected-response', (_req, res) => {
        resolve({ refused: res.statusCode ?? 0 });
        socket.terminate();
      });
      socket.once('error', reject);
      socket.once('open', () => {
        socket.removeAllListeners('error');
        socket.on('error', () => undefined);
        resolve(new TelnyxMediaCaller(socket));
      });
    });
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

  /** The caller's audio as 20 ms frames of the inbound track. */
  sendAudio(ulaw: Buffer): void {
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
    }
  }

  stop(): void {
    this.send({ event: 'stop', sequence_number: String(++this.sequence), stream_id: this.streamId, stop: { call_control_id: '', reason: 'hangup' } });
    this.socket.close(1000);
  }

  events(name: string): Record<string, any>[] {
    return this.received.filter((message) => message.event === name);
  }

  waitFor(test: () => boolean, what: string): Promise<void> {
    return eventually(test, (held) => held, { what: `the Telnyx stream to see ${what}` }).then(() => undefined);
  }

  private send(message: Record<string, unknown>): void {
    if (this.socket.readyState === WebSocket.OPEN) this.socket.send(JSON.stringify(message));
  }
}
