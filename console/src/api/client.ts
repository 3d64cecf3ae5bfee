import { createClient, type Client } from 'graphql-ws';
import type { TypedDocumentString } from './generated';

/** One `{field, message}` of a validation failure, as the API names it (`extensions.errors`). */
export interface FieldError {
  field: string;
  message: string;
}

/** An error the API answered: its message and code as they came, and the fields it names. */
export class ApiError extends Error {
  constructor(
    message: string,
    readonly code: string,
    readonly fieldErrors: FieldError[] = [],
  ) {
    super(message);
    this.name = 'ApiError';
  }

  /** The API's own words for `field`, when it named it (every error it gave the field, in its order). */
  forField(field: string): string | undefined {
    const messages = this.fieldErrors.filter((error) => error.field === field).map((error) => error.message);
    return messages.length > 0 ? messages.join('; ') : undefined;
  }
}

/** A REST answer's problem+json as an ApiError: its detail, code and field errors, like a GraphQL error's. */
async function problemOf(response: Response, what: string): Promise<ApiError> {
  const problem = (await response.json().catch(() => null)) as { detail?: string; code?: string; errors?: FieldError[] } | null;
  return new ApiError(problem?.detail ?? `${what} (${response.status}).`, problem?.code ?? 'UNAVAILABLE', problem?.errors ?? []);
}

interface GraphQLErrorShape {
  message: string;
  extensions?: { code?: string; errors?: FieldError[] };
}

function toApiError(errors: readonly GraphQLErrorShape[]): ApiError {
  const first = errors[0]!;
  const fieldErrors = errors.flatMap((error) => error.extensions?.errors ?? []);
  return new ApiError(first.message, first.extensions?.code ?? 'INTERNAL_SERVER_ERROR', fieldErrors);
}

/**
 * The console's one connection to the gateway: GraphQL over HTTP (POST /graphql) and graphql-ws for
 * subscriptions, both with the API key the user signed in with. Nothing else is called but the
 * documented routes the API's answers point at: a recording's download (`recordingUrl`), an import's
 * upload (`uploadUrl`) and its refused rows (`refusedRowsUrl`).
 */
export class Gateway {
  private socket: Client | null = null;
  private acknowledged = false;
  private waiting: (() => void)[] = [];
  /** Set once signed in: a key that stops working (revoked, expired: 401) signs the console out, saying why. */
  onUnauthenticated: (message: string) => void = () => {};

  constructor(readonly apiKey: string) {}

  async request<Result, Variables>(document: TypedDocumentString<Result, Variables>, variables?: Variables): Promise<Result> {
    let response: Response;
    try {
      response = await fetch('/graphql', {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json', 'x-api-key': this.apiKey },
        body: JSON.stringify({ query: document.toString(), variables: variables ?? {} }),
      });
    } catch {
      throw new ApiError('The gateway cannot be reached; check that it is running.', 'UNAVAILABLE');
    }
    let body: { data?: Result | null; errors?: GraphQLErrorShape[] };
    try {
      body = (await response.json()) as typeof body;
    } catch {
      throw new ApiError(`The gateway answered ${response.status} without a GraphQL body.`, 'UNAVAILABLE');
    }
    if (body.errors && body.errors.length > 0) {
      const error = toApiError(body.errors);
      if (error.code === 'UNAUTHENTICATED') this.onUnauthenticated(error.message);
      throw error;
    }
    return body.data as Result;
  }

  /** Yields each event of a subscription until the returned function is called or the server completes it. */
  subscribe<Result, Variables>(
    document: TypedDocumentString<Result, Variables>,
    variables: Variables,
    handlers: { next: (data: Result) => void; error?: (error: ApiError) => void; complete?: () => void },
  ): () => void {
    const socket = this.ws();
    return socket.subscribe<Result>(
      { query: document.toString(), variables: variables as Record<string, unknown> },
      {
        next: (message) => {
          if (message.errors && message.errors.length > 0) handlers.error?.(toApiError(message.errors as GraphQLErrorShape[]));
          else if (message.data) handlers.next(message.data);
        },
        error: (error) => {
          const errors = Array.isArray(error) ? (error as GraphQLErrorShape[]) : [];
          if (errors.length > 0) handlers.error?.(toApiError(errors));
          else if (error instanceof CloseEvent) handlers.error?.(new ApiError(error.reason || `The live connection closed (${error.code}).`, 'UNAVAILABLE'));
          else handlers.error?.(new ApiError('The live connection failed.', 'UNAVAILABLE'));
        },
        complete: () => handlers.complete?.(),
      },
    );
  }

  /** The recording's audio, downloaded with the key (an <audio> element cannot send it) and played from a blob: URL. */
  async recordingUrl(callId: string): Promise<string> {
    const response = await fetch(`/api/calls/${encodeURIComponent(callId)}/recording`, { headers: { 'x-api-key': this.apiKey, accept: 'audio/wav' } });
    if (!response.ok) {
      const problem = (await response.json().catch(() => null)) as { detail?: string; code?: string } | null;
      throw new ApiError(problem?.detail ?? `The recording could not be downloaded (${response.status}).`, problem?.code ?? 'UNAVAILABLE');
    }
    return URL.createObjectURL(await response.blob());
  }

  /** An import's CSV sent to the `uploadUrl` createContactImport answered (PUT, text/csv), streamed from the file as it is read. */
  async uploadImport(uploadUrl: string, file: Blob): Promise<void> {
    const response = await this.send(uploadUrl, { method: 'PUT', body: file, headers: { 'content-type': 'text/csv' } });
    if (!response.ok) throw await problemOf(response, 'The file could not be sent');
  }

  /** An import's refused rows (its `refusedRowsUrl`, CSV): downloaded with the key, as a link cannot send it. */
  async refusedRows(refusedRowsUrl: string): Promise<Blob> {
    const response = await this.send(refusedRowsUrl, { headers: { accept: 'text/csv' } });
    if (!response.ok) throw await problemOf(response, 'The refused rows could not be downloaded');
    return response.blob();
  }

  /** Resolves once the live socket (opened by a subscription) is acknowledged, or has closed. */
  connected(): Promise<void> {
    if (this.acknowledged) return Promise.resolve();
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  private wake(): void {
    for (const resolve of this.waiting.splice(0)) resolve();
  }

  close(): void {
    void this.socket?.dispose();
    this.socket = null;
  }

  /** A documented REST route the GraphQL API points at (an upload or download URL), with the key. */
  private async send(path: string, init: RequestInit): Promise<Response> {
    try {
      return await fetch(path, { ...init, headers: { ...(init.headers as Record<string, string>), 'x-api-key': this.apiKey } });
    } catch {
      throw new ApiError('The gateway cannot be reached; check that it is running.', 'UNAVAILABLE');
    }
  }

  private ws(): Client {
    if (!this.socket) {
      const url = new URL('/graphql', location.href);
      url.protocol = url.protocol === 'https:' ? 'wss:' : 'ws:';
      this.socket = createClient({
        url: url.toString(),
        connectionParams: { 'x-api-key': this.apiKey },
        lazy: true,
        // A dropped socket is opened again and its subscriptions resumed (each answers its state first).
        retryAttempts: 5,
        on: {
          connected: () => {
            this.acknowledged = true;
            this.wake();
          },
          // A socket that closes (or never opens) ends a wait too: the subscription's error says why.
          closed: () => {
            this.acknowledged = false;
            this.wake();
          },
        },
      });
    }
    return this.socket;
  }
}
