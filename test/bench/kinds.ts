// The five requests the bench drives, the same bytes at the gateway and the baseline; PostGraphile
// gets its own query for three of them (peer.ts).
import { GRAPHQL_AGENTS, GRAPHQL_PROGRAMS } from './baseline.js';
import type { Kind } from './options.js';
import { peerRequests, type PeerRequest } from './peer.js';

export interface BenchRequest {
  kind: Kind;
  label: string;
  method: 'GET' | 'POST';
  path: string;
  body?: string;
  /** What the issue asks of the gateway's max req/s as a share of the baseline's; null = no target. */
  target: number | null;
  /** The same data asked of PostGraphile, for the kinds it answers (its own query, mapped back). */
  peer?: PeerRequest;
}

export const TEST_MESSAGE = 'Hello, can I move my appointment to Friday morning?';

export function benchRequests(ids: { programId: string; agentId: string; organizationId: string }): Record<Kind, BenchRequest> {
  const peers = peerRequests(ids.organizationId);
  const requests: Record<Kind, BenchRequest> = {
    'rest-agents': { kind: 'rest-agents', label: 'REST GET /api/agents?limit=20', method: 'GET', path: '/api/agents?limit=20', target: 0.6 },
    'rest-executions': {
      kind: 'rest-executions',
      label: 'REST GET /api/programs/{id}/executions',
      method: 'GET',
      path: `/api/programs/${ids.programId}/executions`,
      target: 0.6,
    },
    'graphql-programs': {
      kind: 'graphql-programs',
      label: 'GraphQL programs → executions → audience',
      method: 'POST',
      path: '/graphql',
      body: JSON.stringify({ query: GRAPHQL_PROGRAMS }),
      target: 0.5,
    },
    'graphql-agents': {
      kind: 'graphql-agents',
      label: 'GraphQL agents → conversations(limit: 5)',
      method: 'POST',
      path: '/graphql',
      body: JSON.stringify({ query: GRAPHQL_AGENTS }),
      target: 0.5,
    },
    'rest-agent-test': {
      kind: 'rest-agent-test',
      label: 'REST POST /api/agents/{id}/test (builtin/echo)',
      method: 'POST',
      path: `/api/agents/${ids.agentId}/test`,
      body: JSON.stringify({ message: TEST_MESSAGE }),
      target: null,
    },
  };
  for (const kind of Object.keys(peers) as Kind[]) requests[kind].peer = peers[kind];
  return requests;
}
