import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, connect, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { jest } from '@jest/globals';
import { RestClient } from '../helpers/clients.js';
import { freePort } from '../support/pg-cluster.js';
import { ROOT, operatorEnvironment, startServer, type OperatorEnvironment, type ServerProcess } from '../support/entry-points.js';

// The resumable subscription of docs/events.md, run as written (its port rewritten) under a gateway
// that is killed outright and started again: it reconnects by itself and prints every event of the
// organization exactly once, in order — those committed while it could not connect included.

jest.setTimeout(120_000);

const API_KEY = `sub_${randomBytes(24).toString('hex')}`;
const MARKER = '<!-- snippet: resumable-subscription';

/** The ```js block after the marker in docs/events.md. */
function snippet(): string {
  const markdown = readFileSync(join(ROOT, 'docs/events.md'), 'utf8');
  const at = markdown.indexOf(MARKER);
  expect(at).toBeGreaterThan(0);
  const block = /```js\n([\s\S]*?)\n```/.exec(markdown.slice(at))!;
  return block[1]!;
}

/** A TCP relay the test opens and shuts: while shut, every connection is refused at once (reset), as a stopped gateway's port is. */
class Relay {
  private server!: Server;
  private readonly sockets = new Set<Socket>();
  open = true;
  port = 0;
  private refusals = 0;
  private refusalWaiters: (() => void)[] = [];

  constructor(private readonly target: () => number) {}

  async start(): Promise<this> {
    this.server = createServer((client) => {
      if (!this.open) {
        client.resetAndDestroy();
        this.refusals++;
        for (const resolve of this.refusalWaiters.splice(0)) resolve();
        return;
      }
      const upstream = connect(this.target(), '127.0.0.1');
      for (const socket of [client, upstream]) {
        this.sockets.add(socket);
        socket.on('close', () => this.sockets.delete(socket));
        socket.on('error', () => socket.destroy());
      }
      client.pipe(upstream).pipe(client);
      upstream.on('close', () => client.destroy());
      client.on('close', () => upstream.destroy());
    });
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.port = (this.server.address() as { port: number }).port;
    return this;
  }

  /** Resolves once a connection has been refused while shut: the client's own retry, not the clock, tells when it tried. */
  refused(): Promise<void> {
    if (this.refusals > 0) return Promise.resolve();
    return new Promise((resolve) => this.refusalWaiters.push(resolve));
  }

  async close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise((resolve) => this.server.close(resolve));
  }
}

/** The snippet's process: what it printed, line by line, and a wait for a count of lines (an event of its output, not a poll). */
class SnippetProcess {
  readonly lines: string[] = [];
  stderr = '';
  private readonly child: ChildProcess;
  private waiters: { count: number; resolve: () => void }[] = [];

  constructor(file: string, env: Record<string, string>) {
    this.child = spawn(process.execPath, [file], { cwd: ROOT, env: { ...process.env, ...env } });
    let pending = '';
    this.child.stdout!.on('data', (chunk: Buffer) => {
      pending += chunk.toString();
      const lines = pending.split('\n');
      pending = lines.pop()!;
      this.lines.push(...lines);
      this.waiters = this.waiters.filter((waiter) => (this.lines.length >= waiter.count ? (waiter.resolve(), false) : true));
    });
    this.child.stderr!.on('data', (chunk: Buffer) => (this.stderr += chunk.toString()));
  }

  printed(count: number): Promise<void> {
    if (this.lines.length >= count) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push({ count, resolve }));
  }

  kill(): void {
    this.child.kill('SIGKILL');
  }
}

let operator: OperatorEnvironment;
let work: string;
beforeAll(async () => {
  operator = await operatorEnvironment('subscription-restart');
  work = mkdtempSync(join(tmpdir(), 'gateway-snippet-'));
});
afterAll(async () => {
  rmSync(work, { recursive: true, force: true });
  await operator?.drop();
});

it('the documented subscription reconnects after the gateway is killed and started again, and resumes after its last event: none lost, none twice', async () => {
  const port = await freePort();
  const env = { ...operator.env, BOOTSTRAP_API_KEY: API_KEY, RUNNER_ENABLED: 'false' };
  let server: ServerProcess = await startServer(env, { port });
  const relay = await new Relay(() => port).start();
  // The snippet as written; only its address (the relay's) and the modules' location (this checkout's) differ.
  const code = snippet()
    .replace('ws://localhost:4000/graphql', `ws://127.0.0.1:${relay.port}/graphql`)
    .replaceAll(/from '(graphql-ws|ws)'/g, (_, name: string) => `from '${import.meta.resolve(name)}'`);
  const file = join(work, 'follow.mjs');
  writeFileSync(file, code);

  let client: SnippetProcess | undefined;
  try {
    const rest = () => new RestClient(server.url, { 'x-api-key': API_KEY });
    const activateAgents = async (count: number) => {
      for (let i = 0; i < count; i++) {
        const agent = await rest().post('/api/agents', { name: `Agent ${i}`, instructions: 'Hi.', modelConfig: { model: 'builtin/echo' } });
        expect((await rest().post(`/api/agents/${agent.body.id}/activate`)).status).toBe(200);
      }
    };
    // One event before the client starts, which it starts after (AFTER), so none of the next can come before it subscribed.
    await activateAgents(1);
    const [first] = (await rest().get('/api/events?limit=1')).body.data as { id: string }[];
    client = new SnippetProcess(file, { KEY: API_KEY, AFTER: first!.id });

    await activateAgents(3);
    await client.printed(3);

    // The gateway dies (SIGKILL: no close frame) and cannot be reached while it starts again and three more events commit.
    relay.open = false;
    server.child.kill('SIGKILL');
    await server.exited;
    server = await startServer(env, { port });
    await activateAgents(3);
    // The client has tried while the gateway was unreachable (its first retry may come after a quick restart).
    await relay.refused();
    relay.open = true;
    // And two live ones once it is reachable again.
    await activateAgents(2);
    await client.printed(8);

    const events = (await rest().get('/api/events?limit=100&sortOrder=asc')).body.data as { id: string; type: string }[];
    const expected = events.filter((event) => event.id !== first!.id).map((event) => `${event.type} ${event.id}`);
    expect(expected).toHaveLength(8);
    expect(client.lines).toEqual(expected);
    // It saw the restart and said so in a line, with no stack.
    expect(client.stderr).toMatch(/gateway unreachable, retrying/);
    expect(client.stderr).not.toMatch(/\n\s+at /);
  } finally {
    client?.kill();
    await relay.close();
    server.child.kill('SIGTERM');
    await server.exited;
  }
});
