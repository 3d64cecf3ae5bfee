import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';

export interface Received {
  id: string;
  timestamp: string;
  signature: string;
  body: string;
  parsed: { type: string; timestamp: string; data: Record<string, any> };
  /** The secrets (by index in `secrets`) this request verified with, by the package's own Webhook.verify. */
  verifiedWith: number[];
}

/** What the receiver answers the n-th request (0-based): a status, or 'hang' (never answers). */
export type Answer = number | 'hang';

/**
 * A webhook receiver on loopback that verifies every request with standardwebhooks' Webhook.verify
 * against each secret it is told, and answers as `answer` says.
 */
export class WebhookReceiver {
  readonly received: Received[] = [];
  secrets: string[] = [];
  answer: (n: number, request: Received) => Answer = () => 204;
  private server!: Server;
  private hanging: ServerResponse[] = [];
  private waiting: ((request: Received) => void)[] = [];
  url = '';

  /** The next request to arrive (an event, not a poll). */
  next(): Promise<Received> {
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
    const headers = {
      'webhook-id': String(req.headers['webhook-id']),
      'webhook-timestamp': String(req.headers['webhook-timestamp']),
      'webhook-signature': String(req.headers['webhook-signature']),
    };
    const verifiedWith = this.secrets.flatMap((secret, index) => {
      try {
        new Webhook(secret).verify(body, headers);
        return [index];
      } catch {
        return [];
      }
    });
    const request: Received = {
      id: headers['webhook-id'],
      timestamp: headers['webhook-timestamp'],
      signature: headers['webhook-signature'],
      body,
      parsed: JSON.parse(body),
      verifiedWith,
    };
    const n = this.received.length;
    this.received.push(request);
    for (const resolve of this.waiting.splice(0)) resolve(request);
    const answer = this.answer(n, request);
    if (answer === 'hang') {
      this.hanging.push(res);
      return;
    }
    res.writeHead(answer).end();
  }

  /** How many times each webhook-id arrived. */
  counts(): Map<string, number> {
    const counts = new Map<string, number>();
    for (const request of this.received) counts.set(request.id, (counts.get(request.id) ?? 0) + 1);
    return counts;
  }

  async close(): Promise<void> {
    for (const res of this.hanging) res.destroy();
    this.server.closeAllConnections();
    await new Promise((resolve) => this.server.close(resolve));
  }
}
