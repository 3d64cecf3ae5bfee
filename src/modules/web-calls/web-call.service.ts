import { createHash, randomBytes, randomUUID } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Actor } from '../../common/actor.js';
import { AppError } from '../../common/errors.js';
import { at, query } from '../../db/sql.js';
import { Agent } from '../agents/agent.entity.js';
import { AgentStatus, PipelineMode } from '../agents/agent.enums.js';
import { givenValues } from '../agents/templates/template-values.js';
import { authorize } from '../organizations/roles.js';
import type { CreateWebCallInput } from './web-call.inputs.js';
import type { WebCallTicket } from './web-call.types.js';

/** How long a web-call token opens a call: long enough to click a button, short enough that a leaked one is soon worthless. */
export const WEB_CALL_TOKEN_TTL_MS = 5 * 60_000;
/** How long an expired token is kept (a day), before the organization's next web call removes it. */
const TOKEN_KEPT_MS = 24 * 60 * 60_000;
/** Where a web call's page is served, and its socket. */
export const TALK_PATH = '/talk';

export function webCallTokenHash(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

/** A token begins `wct_` and holds 32 random bytes (base64url): a WebSocket subprotocol token as RFC 6455 allows. */
export const WEB_CALL_TOKEN = /^wct_[A-Za-z0-9_-]{43}$/;

/** What a person opening a web call may use: agents that speak live (streaming or sts), not archived. */
export function webCallRefusal(agent: { status: string; voiceConfig?: { pipelineMode?: string | null } | null }): string | null {
  if (agent.status === AgentStatus.archived) return 'The agent is archived: a web call needs a draft or active agent';
  const mode = agent.voiceConfig?.pipelineMode ?? PipelineMode.batch;
  if (mode !== PipelineMode.streaming && mode !== PipelineMode.sts) {
    return `A web call speaks through the live pipelines (voiceConfig.pipelineMode streaming or sts); this agent's is ${mode}`;
  }
  return null;
}

/**
 * Issues web calls: a single-use token (kept only as its SHA-256) for one agent of the caller's
 * organization, and the URL of the gateway's /talk page that opens it. The call itself is created
 * when the token is presented on the talk socket (web-call-claims.ts).
 */
export class WebCallService {
  constructor(
    private readonly em: EntityManager,
    private readonly options: { publicUrl: () => string | undefined; ttlMs?: number },
  ) {}

  /** Members may open one, as they may test agents; another organization's agent is NOT_FOUND. */
  async create(actor: Actor, input: CreateWebCallInput): Promise<WebCallTicket> {
    authorize(actor, 'agents.talk');
    const agent = await this.em.findOne(Agent, { id: input.agentId, organization: actor.organizationId });
    if (!agent) throw AppError.notFound('Agent');
    const refusal = webCallRefusal(agent);
    if (refusal) throw new AppError('CONFLICT', refusal);
    const token = `wct_${randomBytes(32).toString('base64url')}`;
    const now = new Date();
    const expiresAt = new Date(now.getTime() + (this.options.ttlMs ?? WEB_CALL_TOKEN_TTL_MS));
    // The organization's tokens that expired a day ago are of no more use (the call they opened keeps its record): kept no longer.
    await query(this.em, 'delete from web_call_tokens where organization_id = ? and expires_at < ?::timestamptz', [
      actor.organizationId,
      at(new Date(now.getTime() - TOKEN_KEPT_MS)),
    ]);
    await query(
      this.em,
      `insert into web_call_tokens (id, created_at, updated_at, organization_id, agent_id, api_key_id, token_hash, variables, expires_at)
       values (?, ?::timestamptz, ?::timestamptz, ?, ?, ?, ?, ?::jsonb, ?::timestamptz)`,
      [
        randomUUID(),
        at(now),
        at(now),
        actor.organizationId,
        agent.id,
        actor.apiKeyId,
        webCallTokenHash(token),
        JSON.stringify(givenValues(input.variables)),
        at(expiresAt),
      ],
    );
    const base = (this.options.publicUrl() ?? '').replace(/\/+$/, '');
    return { agentId: agent.id, token, url: `${base}${TALK_PATH}#token=${token}`, expiresAt };
  }
}
