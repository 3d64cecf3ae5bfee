import { spawn } from 'node:child_process';
import WebSocket from 'ws';
import { freePort } from '../support/pg-cluster.js';
import { MAIN, ROOT, operatorEnvironment, type OperatorEnvironment } from '../support/entry-points.js';

// The built server as `npm start` runs it (pretest builds dist/): main.ts attaches the media route
// to the server it listens with, so carrier media streams are checked there too.

let operator: OperatorEnvironment;

beforeAll(async () => {
  operator = await operatorEnvironment('sts-server');
});
afterAll(() => operator.drop());

function upgrade(url: string, headers: Record<string, string> = {}): Promise<number | 'open'> {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(url, { headers });
    socket.once('unexpected-response', (_req, res) => {
      resolve(res.statusCode ?? 0);
      socket.terminate();
    });
    socket.once('open', () => {
      resolve('open');
      socket.terminate();
    });
    socket.once('error', (error) => (error.message.includes('closed before') ? undefined : reject(error)));
  });
}

it('refuses an unsigned or forged media stream (403) and an upgrade elsewhere (404), leaves /graphql to subscriptions, then stops on SIGTERM', async () => {
  const port = await freePort();
  const child = spawn(process.execPath, [MAIN], {
    cwd: ROOT,
    env: { ...process.env, ...operator.env, PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'warn', RUNNER_ENABLED: 'false', PUBLIC_URL: `http://127.0.0.1:${port}` },
  });
  let output = '';
  child.stdout.on('data', (chunk) => (output += chunk));
  child.stderr.on('data', (chunk) => (output += chunk));
  const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
  try {
    for (let i = 0; ; i++) {
      if (child.exitCode !== null || i > 600) throw new Error(`server did not become ready: ${output}`);
      const ready = await fetch(`http://127.0.0.1:${port}/readyz`).then((res) => res.ok).catch(() => false);
      if (ready) break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const media = `ws://127.0.0.1:${port}/telephony/twilio/3f1c7c8e-0000-4000-8000-000000000000/media`;
    expect(await upgrade(media)).toBe(403);
    expect(await upgrade(media, { 'X-Twilio-Signature': 'forged' })).toBe(403);
    expect(await upgrade(`ws://127.0.0.1:${port}/elsewhere`)).toBe(404);
    // /graphql upgrades belong to GraphQL subscriptions (graphql-ws), served by the same server.
    expect(await upgrade(`ws://127.0.0.1:${port}/graphql`)).toBe('open');
    expect(output).toContain('media stream refused: no valid signature for this connection');
  } finally {
    child.kill('SIGTERM');
  }
  expect(await exited).toBe(0);
}, 120_000);
