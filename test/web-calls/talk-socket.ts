import type WebSocket from 'ws';
import { openSocket } from '../support/open-socket.js';

/** A page's talk socket as the browser opens it (subprotocols, Origin), for the protocol-level tests. */
export class TalkSocket {
  readonly transcript: { role: string; text: string }[] = [];
  readonly controls: Record<string, unknown>[] = [];
  audioBytes = 0;
  private readonly waiters: { test: () => boolean; resolve: () => void }[] = [];

  readonly closed: Promise<{ code: number; reason: string }>;

  private constructor(readonly socket: WebSocket) {
    this.closed = new Promise((done) => socket.on('close', (code, reason) => done({ code, reason: reason.toString() })));
    socket.on('message', (data, isBinary) => {
      if (isBinary) this.audioBytes += (data as Buffer).length;
      else {
        const message = JSON.parse(data.toString()) as Record<string, unknown>;
        this.controls.push(message);
        if (message.type === 'transcript') this.transcript.push({ role: String(message.role), text: String(message.text) });
        // Played at once: every mark is echoed as it comes.
        if (message.type === 'mark') socket.send(JSON.stringify({ type: 'mark', name: message.name }));
      }
      this.check();
    });
  }

  /** Opens the socket; answers the HTTP status of a refused upgrade instead. */
  static open(baseUrl: string, token: string, origin: string | null = baseUrl): Promise<TalkSocket | number> {
    return openSocket(`${baseUrl.replace(/^http/, 'ws')}/talk/socket`, ['gateway-talk.v1', token], origin ? { origin } : {}).then((socket) =>
      'refused' in socket ? socket.refused : new TalkSocket(socket),
    );
  }

  /** Resolves once `test` holds for what was received (checked on every message). */
  until(test: () => boolean): Promise<void> {
    if (test()) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push({ test, resolve }));
  }

  sendAudio(ulaw: Buffer, frameBytes = 160): void {
    for (let offset = 0; offset < ulaw.length; offset += frameBytes) this.socket.send(ulaw.subarray(offset, offset + frameBytes), { binary: true });
  }

  close(): void {
    this.socket.close(1000);
  }

  private check(): void {
    for (const waiter of [...this.waiters]) {
      if (!waiter.test()) continue;
      this.waiters.splice(this.waiters.indexOf(waiter), 1);
      waiter.resolve();
    }
  }
}
