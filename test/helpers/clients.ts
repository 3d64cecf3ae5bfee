import { GraphQLClient } from 'graphql-request';
import type { TypedDocumentNode } from '@graphql-typed-document-node/core';
import { print } from 'graphql';
import { contractOf } from '../support/openapi-contract.js';

/** Every answer of a documented REST operation is checked against /api/openapi.json (OPENAPI_CHECK=0 turns it off). */
const CHECK_CONTRACT = process.env.OPENAPI_CHECK !== '0';

export interface RestResponse<T = any> {
  status: number;
  headers: Headers;
  body: T;
}

/** fetch with JSON in and out; never throws on an error status. */
export class RestClient {
  constructor(
    private readonly baseUrl: string,
    private readonly headers: Record<string, string>,
  ) {}

  with(headers: Record<string, string>): RestClient {
    return new RestClient(this.baseUrl, { ...this.headers, ...headers });
  }

  async request<T = any>(method: string, path: string, body?: unknown, raw?: string): Promise<RestResponse<T>> {
    const response = await fetch(`${this.baseUrl}${path}`, {
      method,
      headers: { ...this.headers, ...(body !== undefined || raw !== undefined ? { 'content-type': 'application/json' } : {}) },
      body: raw ?? (body === undefined ? undefined : JSON.stringify(body)),
    });
    const text = await response.text();
    let parsed: unknown = text;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      // not JSON (the landing page, say): keep the text
    }
    if (CHECK_CONTRACT && path.startsWith('/api/') && !path.startsWith('/api/openapi.json')) {
      const contract = await contractOf(this.baseUrl);
      const violations = contract.check(method, path, response.status, response.headers.get('content-type'), parsed);
      if (violations.length > 0) {
        throw new Error(`The answer breaks /api/openapi.json: ${violations.map((v) => `${v.method} ${v.path} → ${v.status}: ${v.problem}`).join('\n')}`);
      }
    }
    return { status: response.status, headers: response.headers, body: parsed as T };
  }

  get<T = any>(path: string) {
    return this.request<T>('GET', path);
  }
  post<T = any>(path: string, body?: unknown) {
    return this.request<T>('POST', path, body);
  }
  put<T = any>(path: string, body?: unknown) {
    return this.request<T>('PUT', path, body);
  }
  delete<T = any>(path: string) {
    return this.request<T>('DELETE', path);
  }
}

export interface GraphQLTestError {
  message: string;
  extensions: { code: string; errors?: { field: string; message: string }[]; requestId?: string };
}

export interface GraphQLResult<T> {
  data: T | null | undefined;
  errors: GraphQLTestError[] | undefined;
  status: number;
}

/** graphql-request with the typed documents codegen makes; errors are returned, not thrown. */
export class GraphQLTestClient {
  private readonly client: GraphQLClient;

  constructor(
    readonly url: string,
    private readonly headers: Record<string, string>,
  ) {
    this.client = new GraphQLClient(url, { headers, errorPolicy: 'all' });
  }

  with(headers: Record<string, string>): GraphQLTestClient {
    return new GraphQLTestClient(this.url, { ...this.headers, ...headers });
  }

  async run<T, V extends Record<string, unknown>>(document: TypedDocumentNode<T, V>, variables?: V): Promise<GraphQLResult<T>> {
    try {
      const result = await this.client.rawRequest<T>(print(document), variables as Record<string, unknown>);
      return { data: result.data, errors: result.errors as GraphQLTestError[] | undefined, status: result.status };
    } catch (error) {
      const response = (error as { response?: { data?: T; errors?: GraphQLTestError[]; status: number } }).response;
      if (!response) throw error;
      return { data: response.data, errors: response.errors, status: response.status };
    }
  }

  /** The data of an operation that must succeed. */
  async ok<T, V extends Record<string, unknown>>(document: TypedDocumentNode<T, V>, variables?: V): Promise<T> {
    const result = await this.run(document, variables);
    if (result.errors?.length) throw new Error(`GraphQL errors: ${JSON.stringify(result.errors)}`);
    return result.data as T;
  }
}
