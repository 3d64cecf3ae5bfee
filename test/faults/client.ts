// The requests the fault scenarios send, and what came back for each: status, error code,
// Retry-After, transport error, and the id of a row a write says it stored.
import { API_KEY } from './server.js';

export type Door = 'rest' | 'graphql';

export interface Operation {
  name: string;
  door: Door;
  /** The table a successful write stored its row in, checked afterwards. */
  writes?: 'contacts' | 'agents';
  request(n: number): { path: string; method: string; body?: unknown };
  /** The id of the stored row in a successful answer. */
  createdId?(body: any): string | undefined;
}

export interface Outcome {
  op: string;
  door: Door;
  writes?: 'contacts' | 'agents';
  sentAt: number;
  doneAt: number;
  status?: number;
  /** problem+json `code` on REST, the first error's `extensions.code` on GraphQL. */
  code?: string;
  contentType?: string;
  retryAfter?: string;
  /** Set when no HTTP answer came: ECONNREFUSED, ECONNRESET, UND_ERR_SOCKET, TIMEOUT, … */
  transportError?: string;
  /** A 2xx on REST, a 200 without errors on GraphQL. */
  ok: boolean;
  id?: string;
  body?: unknown;
}

let counter = 0;
const RUN = Date.now() % 100_000;

/** A phone number no other request of this run uses: E.164, 12 digits. */
function uniquePhone(n: number): string {
  return `+1${String(RUN).padStart(5, '0')}${String(n).padStart(6, '0')}`;
}

export const OPERATIONS = {
  restCreateContact: {
    name: 'POST /api/contacts',
    door: 'rest',
    writes: 'contacts',
    request: (n) => ({ method: 'POST', path: '/api/contacts', body: { name: `fault contact ${n}`, phone: uniquePhone(n) } }),
    createdId: (body) => body?.id,
  },
  restCreateAgent: {
    name: 'POST /api/agents',
    door: 'rest',
    writes: 'agents',
    request: (n) => ({
      method: 'POST',
      path: '/api/agents',
      body: { name: `fault agent ${n}`, instructions: 'Answer briefly.', modelConfig: { model: 'builtin/echo' } },
    }),
    createdId: (body) => body?.id,
  },
  restListContacts: { name: 'GET /api/contacts', door: 'rest', request: () => ({ method: 'GET', path: '/api/contacts?limit=20' }) },
  restListAgents: { name: 'GET /api/agents', door: 'rest', request: () => ({ method: 'GET', path: '/api/agents?limit=20' }) },
  graphqlCreateContact: {
    name: 'mutation createContact',
    door: 'graphql',
    writes: 'contacts',
    request: (n) => ({
      method: 'POST',
      path: '/graphql',
      body: {
        query: 'mutation Create($input: CreateContactInput!) { createContact(input: $input) { id } }',
        variables: { input: { name: `fault gql contact ${n}`, phone: uniquePhone(n) } },
      },
    }),
    createdId: (body) => body?.data?.createContact?.id,
  },
  graphqlLists: {
    name: 'query contacts+agents',
    door: 'graphql',
    request: () => ({
      method: 'POST',
      path: '/graphql',
      body: { query: '{ contacts(limit: 20) { data { id name phone } meta { total } } agents(limit: 5) { data { id name } } }' },
    }),
  },
  graphqlMe: { name: 'query me', door: 'graphql', request: () => ({ method: 'POST', path: '/graphql', body: { query: '{ me { id } }' } }) },
} satisfies Record<string, Operation>;

/** A 503 in the door's own shape: problem+json with code on REST, extensions.code on GraphQL; Retry-After on both. */
export function isProperRefusal(outcome: Outcome): boolean {
  if (outcome.status !== 503 || outcome.code !== 'UNAVAILABLE' || !outcome.retryAfter) return false;
  if (outcome.door === 'rest') return outcome.contentType?.startsWith('application/problem+json') ?? false;
  const errors = (outcome.body as { errors?: { extensions?: { code?: string } }[] })?.errors;
  return Array.isArray(errors) && errors.length > 0 && errors.every((error) => typeof error.extensions?.code === 'string');
}

/** Sends one operation and records what came back; never throws. */
export async function send(baseUrl: string, op: Operation, timeoutMs = 20_000): Promise<Outcome> {
  const n = ++counter;
  const { method, path, body } = op.request(n);
  const sentAt = Date.now();
  const outcome: Outcome = { op: op.name, door: op.door, writes: op.writes, sentAt, doneAt: sentAt, ok: false };
  try {
    const res = await fetch(baseUrl + path, {
      method,
      headers: { 'x-api-key': API_KEY, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(timeoutMs),
    });
    const text = await res.text();
    outcome.doneAt = Date.now();
    outcome.status = res.status;
    outcome.contentType = res.headers.get('content-type') ?? undefined;
    outcome.retryAfter = res.headers.get('retry-after') ?? undefined;
    let parsed: any;
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = text.slice(0, 200);
    }
    outcome.body = parsed;
    if (op.door === 'rest') {
      outcome.ok = res.status >= 200 && res.status < 300;
      if (!outcome.ok) outcome.code = parsed?.code;
    } else {
      const errors = parsed?.errors as { extensions?: { code?: string } }[] | undefined;
      outcome.code = errors?.[0]?.extensions?.code ?? (res.status >= 400 ? parsed?.code : undefined);
      outcome.ok = res.status === 200 && !errors?.length && parsed?.data != null;
    }
    if (outcome.ok && op.createdId) outcome.id = op.createdId(parsed);
  } catch (error) {
    outcome.doneAt = Date.now();
    outcome.transportError = transportCode(error);
  }
  return outcome;
}

function transportCode(error: unknown): string {
  const err = error as { name?: string; code?: string; cause?: { code?: string; name?: string; message?: string } };
  if (err.name === 'TimeoutError') return 'TIMEOUT';
  return err.cause?.code ?? err.code ?? err.cause?.message ?? String(error);
}

/** `n` workers sending the operations in turn until `stop()` is called; resolves with every outcome. */
export function startLoad(baseUrl: string, ops: Operation[], workers: number, pauseMs = 0) {
  const outcomes: Outcome[] = [];
  let running = true;
  const loops = Array.from({ length: workers }, async (_, worker) => {
    for (let i = worker; running; i++) {
      outcomes.push(await send(baseUrl, ops[i % ops.length]!));
      if (pauseMs) await new Promise((resolve) => setTimeout(resolve, pauseMs));
    }
  });
  return {
    outcomes,
    async stop(): Promise<Outcome[]> {
      running = false;
      await Promise.all(loops);
      return outcomes;
    },
  };
}

/** Polls GET /readyz every `everyMs` until stopped; each answer with its time. */
export function pollReadiness(baseUrl: string, everyMs: number) {
  const answers: { at: number; sentAt: number; status?: number; transportError?: string }[] = [];
  let running = true;
  const loop = (async () => {
    while (running) {
      const sentAt = Date.now();
      try {
        const res = await fetch(`${baseUrl}/readyz`, { signal: AbortSignal.timeout(10_000) });
        await res.arrayBuffer();
        answers.push({ sentAt, at: Date.now(), status: res.status });
      } catch (error) {
        answers.push({ sentAt, at: Date.now(), transportError: transportCode(error) });
      }
      await new Promise((resolve) => setTimeout(resolve, everyMs));
    }
  })();
  return {
    answers,
    async stop() {
      running = false;
      await loop;
      return answers;
    },
  };
}
