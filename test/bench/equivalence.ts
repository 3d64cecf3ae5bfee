// Before any load: every request is sent to both servers and the answers must be the same JSON (deep
// equality; nothing here varies between calls, not even for /test, which stores nothing). This is what
// shows the baseline does the gateway's work and not less. The data's shape is checked too, so the
// nested queries really are nested (20 programs × 20 executions with counted audiences, 5 conversations
// per agent). PostGraphile answers in its own schema's names: its answer is mapped to the gateway's
// shape (peer.ts) and must then be deep-equal to the gateway's, the same test as the baseline's.
import { isDeepStrictEqual } from 'node:util';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ServerProcess } from './servers.js';
import type { BenchRequest } from './kinds.js';
import { sentTo } from './measure.js';

export interface Equivalence {
  kind: string;
  bytes: number;
  /** The same bytes, not only the same JSON (key order, number and date formats). */
  identical: boolean;
  shape: string;
  /** PostGraphile's answer, mapped to the gateway's shape, deep-equals the gateway's (null: it does not answer this kind). */
  postgraphile: { bytes: number; sameData: true } | null;
}

async function fetchRaw(server: ServerProcess, key: string, request: BenchRequest): Promise<{ status: number; text: string }> {
  const sent = sentTo(server, request);
  const response = await fetch(`${server.base}${sent.path}`, {
    method: sent.method,
    headers: { 'x-api-key': key, ...(sent.body ? { 'content-type': 'application/json' } : {}) },
    body: sent.body,
  });
  return { status: response.status, text: await response.text() };
}

/** The first place where two JSON values differ, as a path and both values. */
export function firstDifference(a: unknown, b: unknown, path = '$', other = 'baseline'): string | null {
  if (isDeepStrictEqual(a, b)) return null;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null || Array.isArray(a) !== Array.isArray(b)) {
    return `${path}: gateway ${JSON.stringify(a)?.slice(0, 200)} ≠ ${other} ${JSON.stringify(b)?.slice(0, 200)}`;
  }
  if (Array.isArray(a) && Array.isArray(b) && a.length !== b.length) return `${path}: gateway has ${a.length} items, ${other} ${b.length}`;
  const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
  for (const key of keys) {
    const difference = firstDifference((a as Record<string, unknown>)[key], (b as Record<string, unknown>)[key], `${path}.${key}`, other);
    if (difference) return difference;
  }
  return `${path}: differs`;
}

type Json = any;

/** What the answer holds, checked against what the bench means to measure; throws when the data is too thin. */
function shapeOf(kind: string, body: Json): string {
  const fail = (why: string) => {
    throw new Error(`the seeded data does not fit ${kind}: ${why}`);
  };
  switch (kind) {
    case 'rest-agents': {
      if (body.data.length !== 20) fail(`${body.data.length} agents on the page`);
      return `20 agents of ${body.meta.total}`;
    }
    case 'rest-executions': {
      if (body.length !== 20) fail(`${body.length} executions`);
      const running = body.filter((execution: Json) => execution.status === 'running').length;
      if (running > 0) fail(`${running} running executions`);
      return `20 executions (${[...new Set(body.map((execution: Json) => execution.status))].join(', ')})`;
    }
    case 'graphql-programs': {
      const programs = body.data.programs.data;
      const executions = programs.flatMap((program: Json) => program.executions);
      if (programs.length !== 20 || executions.length !== 400) fail(`${programs.length} programs, ${executions.length} executions`);
      if (executions.some((execution: Json) => !execution.audience || execution.audience.contactCount === 0)) fail('an audience without members');
      const audiences = new Set(executions.map((execution: Json) => execution.audience.name)).size;
      return `20 programs × 20 executions, ${audiences} distinct audiences`;
    }
    case 'graphql-agents': {
      const agents = body.data.agents.data;
      const short = agents.filter((agent: Json) => agent.conversations.data.length < 5).length;
      if (agents.length !== 20 || short > 0) fail(`${agents.length} agents, ${short} with fewer than 5 conversations`);
      return '20 agents × 5 conversations';
    }
    default:
      return `response ${JSON.stringify(body.response).slice(0, 60)}`;
  }
}

export async function checkEquivalence(
  gateway: ServerProcess,
  baseline: ServerProcess,
  postgraphile: ServerProcess | null,
  key: string,
  requests: BenchRequest[],
  resultsDir: string,
): Promise<Equivalence[]> {
  const checked: Equivalence[] = [];
  const failures: string[] = [];
  for (const request of requests) {
    const ours = await fetchRaw(gateway, key, request);
    const theirs = await fetchRaw(baseline, key, request);
    if (ours.status !== 200 || theirs.status !== 200) {
      failures.push(`${request.kind}: status gateway ${ours.status}, baseline ${theirs.status}: ${ours.text.slice(0, 300)} | ${theirs.text.slice(0, 300)}`);
      continue;
    }
    const a: unknown = JSON.parse(ours.text);
    const b: unknown = JSON.parse(theirs.text);
    const difference = firstDifference(a, b);
    if (difference) {
      for (const [name, text] of [
        ['gateway', ours.text],
        ['baseline', theirs.text],
      ]) {
        writeFileSync(join(resultsDir, `mismatch-${request.kind}-${name}.json`), JSON.stringify(JSON.parse(text!), null, 2));
      }
      failures.push(`${request.kind}: ${difference} (both answers are in ${join(resultsDir, `mismatch-${request.kind}-*.json`)})`);
      continue;
    }
    let peer: Equivalence['postgraphile'] = null;
    if (postgraphile && request.peer) {
      const answer = await fetchRaw(postgraphile, key, request);
      const parsed = answer.status === 200 ? (JSON.parse(answer.text) as { errors?: unknown }) : null;
      if (!parsed || parsed.errors) {
        failures.push(`${request.kind}: PostGraphile answered ${answer.status}: ${answer.text.slice(0, 300)}`);
        continue;
      }
      const mapped = request.peer.map(parsed);
      const peerDifference = firstDifference(a, mapped, '$', 'PostGraphile (mapped)');
      if (peerDifference) {
        writeFileSync(join(resultsDir, `mismatch-${request.kind}-gateway.json`), JSON.stringify(a, null, 2));
        writeFileSync(join(resultsDir, `mismatch-${request.kind}-postgraphile.json`), JSON.stringify(mapped, null, 2));
        failures.push(`${request.kind}: ${peerDifference} (both answers are in ${join(resultsDir, `mismatch-${request.kind}-*.json`)})`);
        continue;
      }
      peer = { bytes: Buffer.byteLength(answer.text), sameData: true };
    }
    checked.push({
      kind: request.kind,
      bytes: Buffer.byteLength(ours.text),
      identical: ours.text === theirs.text,
      shape: shapeOf(request.kind, a),
      postgraphile: peer,
    });
  }
  if (failures.length > 0) throw new EquivalenceError(failures);
  return checked;
}

export class EquivalenceError extends Error {
  constructor(failures: string[]) {
    super(`the baseline or PostGraphile does not answer what the gateway answers:\n  ${failures.join('\n  ')}`);
  }
}
