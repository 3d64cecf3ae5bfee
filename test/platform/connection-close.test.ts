import { request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { closeConnectionsWhen } from '../../src/platform/connection-close.js';

// Once shutdown has begun, answers close their keep-alive connection, including answers to
// requests that were already in flight when it began.
let stopping = false;
let server: Server;
let port: number;
beforeAll(async () => {
  const app = express();
  app.use(closeConnectionsWhen(() => stopping));
  app.get('/slow', (_req, res) => {
    setTimeout(() => res.json({ slow: true }), 300);
  });
  app.get('/fast', (_req, res) => {
    res.json({ fast: true });
  });
  server = app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  port = (server.address() as AddressInfo).port;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});
afterEach(() => {
  stopping = false;
});

function get(path: string): Promise<{ status: number; connection?: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, headers: { connection: 'keep-alive' } }, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode!, connection: res.headers.connection }));
    });
    req.on('error', reject);
    req.end();
  });
}

it('keeps connections alive while running', async () => {
  expect(await get('/fast')).toEqual({ status: 200, connection: 'keep-alive' });
});

it('answers with Connection: close once stopping', async () => {
  stopping = true;
  expect(await get('/fast')).toEqual({ status: 200, connection: 'close' });
});

it('a request in flight when stopping begins is answered normally, with Connection: close', async () => {
  const answer = get('/slow');
  await new Promise((resolve) => setTimeout(resolve, 100));
  stopping = true;
  expect(await answer).toEqual({ status: 200, connection: 'close' });
});
