import type { Server } from 'node:http';
import type { WebSocketServer } from 'ws';
import { waiting } from '../helpers/eventually.js';

// What the providers' loopback doubles (OpenAI Realtime, Gemini Live) share: waiting for the next
// session a test expects the gateway to open, and closing the double's server with its sockets.

/** Waiters for the next session opened; `opened` is called once the session is in `sessions`. */
export function sessionWaiters<T>(sessions: readonly T[], what: string) {
  const pending: ((session: T) => void)[] = [];
  return {
    /** The first session opened after this call; in a test no deadline of its own, in the bench `timeoutMs` (test/helpers/eventually.ts). */
    next(timeoutMs?: number): Promise<T> {
      const index = sessions.length;
      const opened = new Promise<T>((resolve) => {
        pending.push((session) => {
          if (sessions.indexOf(session) >= index) resolve(session);
        });
      });
      return waiting(`a ${what} session opened`, opened, { timeoutMs, describe: () => `${sessions.length} sessions in all` });
    },
    opened(session: T): void {
      for (const notify of pending.splice(0)) notify(session);
    },
  };
}

/** Ends every socket of the double and its HTTP server. */
export async function closeLoopback(server: Server, wss: WebSocketServer): Promise<void> {
  for (const client of wss.clients) client.terminate();
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
}
