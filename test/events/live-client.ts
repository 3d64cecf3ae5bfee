import type { TypedDocumentNode } from '@graphql-typed-document-node/core';
import { print } from 'graphql';
import { createClient, type Client } from 'graphql-ws';
import WebSocket from 'ws';

export interface LiveError {
  message: string;
  extensions?: { code?: string; [key: string]: unknown };
}

/** One subscription: what it received, its errors, and whether it completed. */
export class Received<T> {
  readonly values: T[] = [];
  errors: LiveError[] = [];
  completed = false;
  private waiters: (() => void)[] = [];

  constructor(readonly dispose: () => void) {}

  push(value: T): void {
    this.values.push(value);
    this.wake();
  }

  fail(errors: LiveError[]): void {
    this.errors = errors;
    this.wake();
  }

  complete(): void {
    this.completed = true;
    this.wake();
  }

  /** Waits until `done` holds of what was received (or errors/completion end it), at most `ms`. */
  async until(done: (values: T[]) => boolean, ms = 5000): Promise<T[]> {
    const deadline = Date.now() + ms;
    while (!done(this.values)) {
      if (this.errors.length > 0) throw new Error(`subscription failed: ${JSON.stringify(this.errors)}`);
      if (this.completed) throw new Error(`subscription completed with ${JSON.stringify(this.values)}`);
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`timed out with ${JSON.stringify(this.values)}`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
    return this.values;
  }

  /** Waits for the subscription to end with errors or complete; answers its errors. */
  async ended(ms = 5000): Promise<LiveError[]> {
    const deadline = Date.now() + ms;
    while (this.errors.length === 0 && !this.completed) {
      if (Date.now() > deadline) throw new Error(`still open with ${JSON.stringify(this.values)}`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, 50);
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
    return this.errors;
  }

  private wake(): void {
    for (const waiter of this.waiters.splice(0)) waiter();
  }
}

export interface LiveClient {
  client: Client;
  /** The close event of the socket, once it closed. */
  closed: Promise<{ code: number; reason: string }>;
  subscribe<T, V extends Record<string, unknown>>(document: TypedDocumentNode<T, V>, variables?: V): Received<T>;
  /** Resolves once the connection is acknowledged, or rejects with the close. */
  connected: Promise<void>;
  close(): Promise<void>;
}

/** A graphql-ws client on the server's /graphql, authenticated in connection_init with `params`. */
export function liveClient(baseUrl: string, params: Record<string, unknown>): LiveClient {
  let onClosed!: (event: { code: number; reason: string }) => void;
  const closed = new Promise<{ code: number; reason: string }>((resolve) => (onClosed = resolve));
  let onConnected!: () => void;
  let onRefused!: (error: Error) => void;
  const connected = new Promise<void>((resolve, reject) => {
    onConnected = resolve;
    onRefused = reject;
  });
  connected.catch(() => undefined);
  const client = createClient({
    url: `${baseUrl.replace(/^http/, 'ws')}/graphql`,
    webSocketImpl: WebSocket,
    connectionParams: params,
    lazy: false,
    retryAttempts: 0,
    shouldRetry: () => false,
    on: {
      connected: () => onConnected(),
      closed: (event) => {
        const { code, reason } = event as { code: number; reason: string };
        onClosed({ code, reason: String(reason) });
        onRefused(new Error(`closed ${code} ${reason}`));
      },
    },
    onNonLazyError: () => undefined,
  });
  return {
    client,
    closed,
    connected,
    subscribe<T, V extends Record<string, unknown>>(document: TypedDocumentNode<T, V>, variables?: V) {
      let received!: Received<T>;
      const dispose = client.subscribe<T>(
        { query: print(document), variables: variables as Record<string, unknown> | undefined },
        {
          next: (result) => {
            if (result.errors?.length) received.fail(result.errors as unknown as LiveError[]);
            else received.push(result.data as T);
          },
          error: (error) => received.fail(Array.isArray(error) ? (error as LiveError[]) : [{ message: String((error as { reason?: string }).reason ?? error) }]),
          complete: () => received.complete(),
        },
      );
      received = new Received<T>(dispose);
      return received;
    },
    async close() {
      await client.dispose();
    },
  };
}

/** The sockets a describe block opens (`connect`), all closed at its end (`closeAll`). */
export function liveClients(baseUrl: () => string) {
  const open: LiveClient[] = [];
  return {
    connect(params: Record<string, unknown>): LiveClient {
      const client = liveClient(baseUrl(), params);
      open.push(client);
      return client;
    },
    async closeAll(): Promise<void> {
      await Promise.all(open.splice(0).map((client) => client.close()));
    },
  };
}

/** Waits until `check` holds, polling. */
export async function eventually(check: () => boolean | Promise<boolean>, ms = 5000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}
