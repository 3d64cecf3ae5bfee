// The gateway's client SDK: REST through openapi-fetch over the types generated from the OpenAPI
// document, GraphQL through the typed documents generated from sdk/graphql/*.graphql.
import createClient, { type Client } from 'openapi-fetch';
import type { components, paths } from './generated/openapi.js';
import type { TypedDocumentString } from './generated/graphql.js';

export * from './generated/graphql.js';
export type { components, operations, paths } from './generated/openapi.js';

/** The body of every REST error (RFC 9457 problem details, `application/problem+json`). */
export type ProblemDetails = components['schemas']['Problem'];

/** The error codes of both doors (REST `code`, GraphQL `extensions.code`). */
export type ErrorCode = ProblemDetails['code'];

export interface GatewayClientOptions {
  /** Where the gateway is served, e.g. `http://localhost:4000` (no `/api`: the paths carry it). */
  baseUrl: string;
  /** Sent as `x-api-key`. */
  apiKey?: string;
  /** A bearer token from `POST /api/auth/token`; sent as `Authorization: Bearer`. */
  token?: string;
  /** Other headers sent with every request (an `x-request-id`, say). */
  headers?: Record<string, string>;
  /** A fetch of your own (tests, proxies); the global fetch otherwise. */
  fetch?: typeof globalThis.fetch;
}

/** One GraphQL error as the gateway answers it. */
export interface GatewayGraphQLError {
  message: string;
  path?: (string | number)[];
  extensions: { code: ErrorCode; errors?: { field: string; message: string }[]; requestId?: string };
}

export interface GraphQLResult<T> {
  data: T | null | undefined;
  errors: GatewayGraphQLError[] | undefined;
  /** The HTTP status (400 for a refused operation, 503 when the gateway is unavailable). */
  status: number;
}

export interface GatewayClient {
  /** The REST door: `rest.GET('/api/agents', { params: { query: { limit: 5 } } })` answers `{ data, error, response }`. */
  rest: Client<paths>;
  /** Runs one typed document; errors are returned, not thrown. */
  graphql<TResult, TVariables>(document: TypedDocumentString<TResult, TVariables>, variables?: TVariables): Promise<GraphQLResult<TResult>>;
}

function credentials(options: GatewayClientOptions): Record<string, string> {
  return {
    ...(options.apiKey ? { 'x-api-key': options.apiKey } : {}),
    ...(options.token ? { authorization: `Bearer ${options.token}` } : {}),
    ...options.headers,
  };
}

/** A client for both doors of one gateway, with the same credentials. */
export function createGatewayClient(options: GatewayClientOptions): GatewayClient {
  const baseUrl = options.baseUrl.replace(/\/+$/, '');
  const headers = credentials(options);
  const fetcher = options.fetch ?? globalThis.fetch;
  const rest = createClient<paths>({ baseUrl, headers, fetch: options.fetch });
  return {
    rest,
    async graphql(document, variables) {
      const response = await fetcher(`${baseUrl}/graphql`, {
        method: 'POST',
        headers: { ...headers, 'content-type': 'application/json', accept: 'application/json' },
        body: JSON.stringify({ query: document.toString(), variables: variables ?? {} }),
      });
      const body = (await response.json()) as { data?: never; errors?: GatewayGraphQLError[] };
      return { data: body.data, errors: body.errors, status: response.status };
    },
  };
}
