import WebSocket from 'ws';

export const DEFAULT_OPENAI_REALTIME_URL = 'wss://api.openai.com/v1/realtime';
export const DEFAULT_REALTIME_MODEL = 'gpt-realtime';

/** One event of the Realtime protocol, in either direction. */
export type RealtimeEvent = { type: string } & Record<string, unknown>;

/** The realtime model an agent talks with: its own `openai/…realtime…` model, else gpt-realtime. */
export function realtimeModel(model: string): string {
  const [provider, name] = model.split('/', 2);
  return provider === 'openai' && name && /realtime/i.test(name) ? name : DEFAULT_REALTIME_MODEL;
}

/**
 * One OpenAI Realtime session over WebSocket (`ws`): JSON events both ways. `ws` rather than the
 * `openai` SDK's realtime client: the bridge only relays a few events between two sockets, the
 * SDK's client is a thin wrapper over the same socket, and `ws` is what serves the carrier's side.
 */
export class RealtimeConnection {
  private closedByUs = false;

  private constructor(private readonly socket: WebSocket) {}

  /** Opens the session; rejects with a message fit for the call record when it cannot. */
  static open(options: { url: string; apiKey: string; model: string; timeoutMs?: number }): Promise<RealtimeConnection> {
    const url = new URL(options.url);
    url.searchParams.set('model', options.model);
    return new Promise((resolve, reject) => {
      const socket = new WebSocket(url, {
        headers: { Authorization: `Bearer ${options.apiKey}`, 'OpenAI-Beta': 'realtime=v1' },
        handshakeTimeout: options.timeoutMs ?? 10_000,
        maxPayload: 4 * 1024 * 1024,
      });
      const fail = (message: string) => {
        socket.removeAllListeners();
        socket.on('error', () => undefined);
        socket.terminate();
        reject(new Error(message));
      };
      socket.once('unexpected-response', (_req, res) => fail(`The realtime provider refused the session (HTTP ${res.statusCode})`));
      socket.once('error', (error) => fail(`The realtime provider could not be reached (${error.message})`));
      socket.once('open', () => {
        socket.removeAllListeners();
        resolve(new RealtimeConnection(socket));
      });
    });
  }

  send(event: RealtimeEvent): void {
    if (this.socket.readyState === WebSocket.OPEN) this.socket.send(JSON.stringify(event));
  }

  onEvent(listener: (event: RealtimeEvent) => void): void {
    this.socket.on('message', (data) => {
      let event: unknown;
      try {
        event = JSON.parse(data.toString());
      } catch {
        return;
      }
      if (event && typeof event === 'object' && typeof (event as RealtimeEvent).type === 'string') listener(event as RealtimeEvent);
    });
  }

  /** Called once when the session ends without us closing it (the provider dropped it, or the network did). */
  onLost(listener: (reason: string) => void): void {
    let told = false;
    const tell = (reason: string) => {
      if (told || this.closedByUs) return;
      told = true;
      listener(reason);
    };
    this.socket.on('error', (error) => tell(`The realtime provider's connection failed (${error.message})`));
    this.socket.on('close', (code, reason) => tell(`The realtime provider closed the session (code ${code}${reason.length ? `: ${reason.toString().slice(0, 200)}` : ''})`));
  }

  close(): void {
    this.closedByUs = true;
    if (this.socket.readyState === WebSocket.OPEN || this.socket.readyState === WebSocket.CONNECTING) this.socket.close(1000);
  }
}
