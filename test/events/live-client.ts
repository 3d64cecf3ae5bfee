import { eventually as waitUntil } from '../helpers/eventually.js';
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

  /** Waits until `done` holds of what was received (errors or completion end it); no deadline of its own unless given one (test/helpers/eventually.ts). */
  until(done: (values: T[]) => boolean, timeoutMs?: number): Promise<T[]> {
    return waitUntil(
      () => {
        if (done(this.values)) return this.values;
        if (this.errors.length > 0) throw new Error(`subscription failed: ${JSON.stringify(this.errors)}`);
        if (this.completed) throw new Error(`subscription completed with ${JSON.stringify(this.values)}`);
        return null;
      },
      (values) => values !== null,
      { what: 'subscription values', everyMs: 10, timeoutMs },
    ) as Promise<T[]>;
  }

  /** Waits for the subscription to end with errors or complete; answers its errors. */
  async ended(timeoutMs?: number): Promise<LiveError[]> {
    await waitUntil(
      () => this.errors.length > 0 || this.completed,
      (ended) => ended,
      { what: 'the subscription to end', everyMs: 10, timeoutMs },
    );
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
          error: (error) =>
            received.fail(Array.isArray(error) ? (error as LiveError[]) : [{ message: String((error as { reason?: string }).reason ?? error) }]),
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

/** Waits until `check` holds, polling; no deadline of its own (test/helpers/eventually.ts). */
export async function eventually(check: () => boolean | Promise<boolean>): Promise<void> {
  await waitUntil(check, (held) => held, { what: 'a live-connection state', everyMs: 25 });
}
