import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';

/** One request the business endpoint got, and whether its signature verified (standardwebhooks' own Webhook.verify). */
export interface ToolRequest {
  path: string;
  method: string;
  headers: Record<string, string | string[] | undefined>;
  body: string;
  parsed: Record<string, any>;
  /** The secrets (by index in `secrets`) it verified with. */
  verifiedWith: number[];
}

/** What the endpoint does with a request: answer it (status, body, type), or misbehave on purpose. */
export type Behaviour =
  | { json: unknown; status?: number }
  | { text: string; status?: number }
  | { status: number; location?: string }
  /** An answer of `bytes` bytes, written in 1 MiB chunks as fast as the socket takes them; `written` counts what went. */
  | { huge: number }
  /** Headers at once, then one byte every `everyMs`, for ever: a slow-loris answer. */
  | { drip: number }
  /** Never answers. */
  | 'hang';

/**
 * A business's endpoint on loopback, as an integrator writes one: every request is verified with the
 * `standardwebhooks` package against the secrets it is told, recorded, and answered as `behave` says.
 */
export class BusinessEndpoint {
  readonly received: ToolRequest[] = [];
  secrets: string[] = [];
  behave: (request: ToolRequest) => Behaviour = () => ({ json: { ok: true } });
  /** Bytes written of the last huge answer before the gateway closed the connection. */
  written = 0;
  private server!: Server;
  private readonly open = new Set<ServerResponse>();
  private waiting: ((request: ToolRequest) => void)[] = [];
  url = '';

  next(): Promise<ToolRequest> {
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  async start(): Promise<this> {
    this.server = createServer((req, res) => void this.handle(req, res));
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks).toString('utf8');
    const signed = {
      'webhook-id': String(req.headers['webhook-id']),
      'webhook-timestamp': String(req.headers['webhook-timestamp']),
      'webhook-signature': String(req.headers['webhook-signature']),
    };
    const verifiedWith = this.secrets.flatMap((secret, index) => {
      try {
        new Webhook(secret).verify(body, signed);
        return [index];
      } catch {
        return [];
      }
    });
    let parsed: Record<string, any> = {};
    try {
      parsed = JSON.parse(body);
    } catch {
      // recorded as sent
    }
    const request: ToolRequest = { path: req.url ?? '', method: req.method ?? '', headers: req.headers, body, parsed, verifiedWith };
    this.received.push(request);
    for (const resolve of this.waiting.splice(0)) resolve(request);
    const behaviour = this.behave(request);
    this.open.add(res);
    res.on('close', () => this.open.delete(res));
    if (behaviour === 'hang') return;
    if ('json' in behaviour) {
      res.writeHead(behaviour.status ?? 200, { 'content-type': 'application/json' }).end(JSON.stringify(behaviour.json));
    } else if ('text' in behaviour) {
      res.writeHead(behaviour.status ?? 200, { 'content-type': 'text/plain' }).end(behaviour.text);
    } else if ('huge' in behaviour) {
      this.written = 0;
      res.writeHead(200, { 'content-type': 'text/plain' });
      const chunk = Buffer.alloc(1 << 20, 'x');
      const pump = () => {
        while (this.written < behaviour.huge && !res.destroyed) {
          this.written += chunk.length;
          if (!res.write(chunk)) {
            res.once('drain', pump);
            return;
          }
        }
        if (!res.destroyed) res.end();
      };
      pump();
    } else if ('drip' in behaviour) {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{');
      const timer = setInterval(() => (res.destroyed ? clearInterval(timer) : res.write(' ')), behaviour.drip);
      res.on('close', () => clearInterval(timer));
    } else {
      res.writeHead(behaviour.status, behaviour.location ? { location: behaviour.location } : {}).end();
    }
  }

  async close(): Promise<void> {
    for (const res of this.open) res.destroy();
    this.server.closeAllConnections();
    await new Promise((resolve) => this.server.close(resolve));
  }
}
