// What PostGraphile is asked for each request kind it answers, and how its answer maps onto the
// gateway's shape: its schema names differ (allPrograms, executionsByProgramId, rowId, ...), its dates
// carry microseconds and an offset, and the REST agents page computes hasPolicy and the page meta
// from columns. The mapped answer must deep-equal the gateway's before any load (equivalence.ts).
import type { Kind } from './options.js';

type Json = any;

/** The programs page: 20 programs of the organization, their executions newest first, each audience with its member count. */
export const POSTGRAPHILE_PROGRAMS = `query ($org: UUID!) {
  allPrograms(first: 20, orderBy: [CREATED_AT_DESC, ROW_ID_DESC], condition: { organizationId: $org }) {
    nodes {
      rowId name
      executionsByProgramId(orderBy: [CREATED_AT_DESC, ROW_ID_DESC]) {
        nodes { rowId status totalContacts audienceByAudienceId { name audienceMembersByAudienceId { totalCount } } }
      }
    }
  }
}`;

/**
 * The agents page with 5 conversations each. "Not archived" is `deletedAt: null`: core conditions are
 * equalities, and an agent is archived only by DELETE, which sets deletedAt (the equivalence check
 * proves the two select the same agents on the bench's data).
 */
export const POSTGRAPHILE_AGENTS = `query ($org: UUID!) {
  allAgents(first: 20, orderBy: [CREATED_AT_DESC, ROW_ID_DESC], condition: { organizationId: $org, deletedAt: null }) {
    nodes {
      rowId name
      conversationsByAgentId(first: 5, orderBy: [CREATED_AT_DESC, ROW_ID_DESC]) { nodes { rowId status } }
    }
  }
}`;

/** REST GET /api/agents?limit=20 on the gateway: the page, every column the REST body is made of, and the total. */
export const POSTGRAPHILE_AGENTS_PAGE = `query ($org: UUID!) {
  allAgents(first: 20, orderBy: [CREATED_AT_DESC, ROW_ID_DESC], condition: { organizationId: $org, deletedAt: null }) {
    totalCount
    nodes {
      rowId createdAt updatedAt name description instructions firstMessage firstMessageMode variables status version modelConfig voiceConfig memoryConfig
      metadata knowledgeBaseConfig resolutionCriteria analysisPlan createdBy deletedAt organizationId policy
    }
  }
}`;

export interface PeerRequest {
  /** The POST /graphql body PostGraphile gets (organization A's id as a variable). */
  body: string;
  /** PostGraphile's answer in the gateway's shape. */
  map(answer: Json): unknown;
}

/** A timestamp as the gateway prints it (Date#toISOString, milliseconds, UTC). */
const iso = (value: string | null) => (value === null ? null : new Date(value).toISOString());
/** A timestamp with its microseconds (PostGraphile sends them), in UTC: the sort key a gateway cursor holds. */
function microsecondIso(value: string): string {
  const fraction = (/\.(\d+)/.exec(value)?.[1] ?? '').padEnd(6, '0').slice(0, 6);
  return `${new Date(value).toISOString().slice(0, 20)}${fraction}Z`;
}
/** The gateway's page cursor of the agents list (src/common/cursor.ts), newest first. */
const cursor = (direction: 'a' | 'l', key: [string, string] | null, page: number) =>
  Buffer.from(JSON.stringify([1, direction, 'createdAt', 'desc', key, page])).toString('base64url');
/** A JSON object's listed keys, null where absent: how the gateway presents an embedded config. */
const pick = (value: Json, keys: string[]) => (value === null ? null : Object.fromEntries(keys.map((key) => [key, value[key] ?? null])));

function agentOfPage(agent: Json): unknown {
  return {
    id: agent.rowId,
    createdAt: iso(agent.createdAt),
    updatedAt: iso(agent.updatedAt),
    name: agent.name,
    description: agent.description,
    instructions: agent.instructions,
    firstMessage: agent.firstMessage,
    firstMessageMode: agent.firstMessageMode,
    variables: (agent.variables as Json[]).map((variable) => pick(variable, ['name', 'default', 'description'])),
    status: agent.status,
    version: agent.version,
    modelConfig: pick(agent.modelConfig, ['model', 'modelSettings', 'providerOptions']),
    voiceConfig: pick(agent.voiceConfig, ['pipelineMode', 'voiceId', 'stsProvider', 'sttProvider', 'sttModel', 'ttsProvider', 'ttsModel', 'language']),
    memoryConfig: pick(agent.memoryConfig, ['enabled', 'lastMessages', 'semanticRecall']),
    metadata: agent.metadata,
    knowledgeBaseConfig: agent.knowledgeBaseConfig,
    resolutionCriteria: (agent.resolutionCriteria as Json[]).map((criterion) => pick(criterion, ['label', 'description'])),
    analysisPlan: pick(agent.analysisPlan, ['summary', 'structuredData']),
    createdBy: agent.createdBy,
    deletedAt: iso(agent.deletedAt),
    organizationId: agent.organizationId,
    // The policy itself is never shown by the gateway; PostGraphile sends it and the mapping drops it.
    hasPolicy: (agent.policy ?? '') !== '',
  };
}

export function peerRequests(organizationId: string): Partial<Record<Kind, PeerRequest>> {
  const body = (query: string) => JSON.stringify({ query, variables: { org: organizationId } });
  return {
    'rest-agents': {
      body: body(POSTGRAPHILE_AGENTS_PAGE),
      map: (answer) => {
        const { totalCount, nodes } = answer.data.allAgents;
        const totalPages = Math.ceil(totalCount / 20);
        const last = nodes.at(-1);
        return {
          data: nodes.map(agentOfPage),
          meta: {
            page: 1,
            limit: 20,
            total: totalCount,
            totalPages,
            hasNextPage: 1 < totalPages,
            hasPreviousPage: false,
            nextCursor: 1 < totalPages && last ? cursor('a', [microsecondIso(last.createdAt), last.rowId], 2) : null,
            prevCursor: null,
            lastCursor: cursor('l', null, Math.max(totalPages, 1)),
          },
        };
      },
    },
    'graphql-programs': {
      body: body(POSTGRAPHILE_PROGRAMS),
      map: (answer) => ({
        data: {
          programs: {
            data: answer.data.allPrograms.nodes.map((program: Json) => ({
              id: program.rowId,
              name: program.name,
              executions: program.executionsByProgramId.nodes.map((execution: Json) => ({
                id: execution.rowId,
                status: execution.status,
                totalContacts: execution.totalContacts,
                audience: execution.audienceByAudienceId && {
                  name: execution.audienceByAudienceId.name,
                  contactCount: execution.audienceByAudienceId.audienceMembersByAudienceId.totalCount,
                },
              })),
            })),
          },
        },
      }),
    },
    'graphql-agents': {
      body: body(POSTGRAPHILE_AGENTS),
      map: (answer) => ({
        data: {
          agents: {
            data: answer.data.allAgents.nodes.map((agent: Json) => ({
              id: agent.rowId,
              name: agent.name,
              conversations: {
                data: agent.conversationsByAgentId.nodes.map((conversation: Json) => ({ id: conversation.rowId, status: conversation.status })),
              },
            })),
          },
        },
      }),
    },
  };
}
