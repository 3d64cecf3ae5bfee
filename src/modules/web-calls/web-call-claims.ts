import { randomUUID } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import { at, query } from '../../db/sql.js';
import { EventWriter } from '../events/event-writer.js';
import { CreditEntryKind } from '../organizations/credit-ledger.entity.js';
import { CREDIT_BALANCE_SQL } from '../organizations/organization.entity.js';
import { recordLedgerEntry } from '../organizations/credit.service.js';
import { Call } from '../telephony/call.entity.js';
import { callJson } from '../telephony/call.types.js';
import { webCallRefusal, webCallTokenHash } from './web-call.service.js';

/** A web call let in: its call row (in progress, channel web) and what its session needs. */
export interface ClaimedWebCall {
  callId: string;
  organizationId: string;
  agentId: string;
  apiKeyId: string | null;
  variables: Record<string, string>;
  pipelineMode: 'streaming' | 'sts';
  /** Gives back the live-connection place the call holds (once, however often called). */
  release: () => void;
}

/** A web call not let in: why (logged, never the token) and the HTTP status of the refusal. */
export interface RefusedWebCall {
  reason: string;
  status: 403 | 429;
}

/** Takes a live-connection place for the call's organization and key, or throws (RATE_LIMITED). */
export type AdmitWebCall = (organizationId: string, apiKeyId: string | null) => () => void;

interface TokenRow {
  id: string;
  organization_id: string;
  agent_id: string;
  api_key_id: string | null;
  variables: Record<string, string> | string;
  expires_at: Date | string;
  used_at: Date | string | null;
  web_call_origins: string[] | string | null;
  agent_status: string | null;
  voice_config: { pipelineMode?: string } | string | null;
}

function json<T>(value: T | string | null): T | null {
  return typeof value === 'string' ? (JSON.parse(value) as T) : value;
}

/**
 * Lets a web call in, or says why not: the token must be one we issued, unused, unexpired, for an
 * agent of its organization that still speaks live; the page's Origin the gateway's own or one the
 * organization lists; and the organization must have a credit. One transaction consumes the token
 * (a second presentation, at this replica or another, finds it used), takes the credit, creates the
 * call (in progress, carrier and channel `web`) and writes call.started.
 */
export async function claimWebCall(
  em: EntityManager,
  request: { token: string; origin: string | null; ownOrigins: readonly string[] },
  admit: AdmitWebCall,
  now = new Date(),
): Promise<ClaimedWebCall | RefusedWebCall> {
  const refusal = (reason: string): RefusedWebCall => ({ reason, status: 403 });
  const { token, origin, ownOrigins } = request;
  const [row] = await query<TokenRow>(
    em.fork(),
    `select t.id, t.organization_id, t.agent_id, t.api_key_id, t.variables, t.expires_at, t.used_at, o.web_call_origins, a.status as agent_status, a.voice_config
       from web_call_tokens t
       join organizations o on o.id = t.organization_id
       left join agents a on a.id = t.agent_id and a.organization_id = t.organization_id
      where t.token_hash = ?`,
    [webCallTokenHash(token)],
  );
  if (!row) return refusal('not a token we issued');
  if (row.used_at) return refusal('the token was already used');
  if (new Date(row.expires_at).getTime() <= now.getTime()) return refusal('the token expired');
  if (!origin) return refusal('no Origin header');
  const allowed = json<string[]>(row.web_call_origins) ?? [];
  if (!ownOrigins.includes(origin) && !allowed.includes(origin))
    return refusal(`the origin ${origin.slice(0, 100)} is not in the organization's webCallOrigins`);
  if (!row.agent_status || webCallRefusal({ status: row.agent_status, voiceConfig: json(row.voice_config) })) return refusal('the agent no longer speaks live');
  let release: () => void;
  try {
    release = admit(row.organization_id, row.api_key_id);
  } catch (error) {
    return { reason: error instanceof Error ? error.message : String(error), status: 429 };
  }
  try {
    return { ...(await inTransaction(em, row, now)), release };
  } catch (error) {
    release();
    if (error instanceof Refused) return refusal(error.message);
    throw error;
  }
}

/** A refusal found inside the claim's transaction: thrown so that nothing of it is kept (the token stays unused). */
class Refused extends Error {}

async function inTransaction(em: EntityManager, row: TokenRow, now: Date): Promise<Omit<ClaimedWebCall, 'release'>> {
  return em.fork().transactional(async (tx) => {
    const callId = randomUUID();
    const stamp = at(now);
    const [used] = await query<{ id: string }>(
      tx as EntityManager,
      `update web_call_tokens set used_at = ?::timestamptz, call_id = ?, updated_at = ?::timestamptz where id = ? and used_at is null and expires_at > ?::timestamptz returning id`,
      [stamp, callId, stamp, row.id, stamp],
    );
    if (!used) throw new Refused('the token was already used');
    const [paid] = await query<{ credit_balance: number }>(
      tx as EntityManager,
      `update organizations set credit_balance = credit_balance - 1 where id = ? and credit_balance >= 1 returning ${CREDIT_BALANCE_SQL('organizations')} as credit_balance`,
      [row.organization_id],
    );
    if (!paid) throw new Refused('the organization has no credits left');
    await recordLedgerEntry(tx as EntityManager, {
      organizationId: row.organization_id,
      kind: CreditEntryKind.spend,
      amount: -1,
      balanceAfter: Number(paid.credit_balance),
      reason: 'web call',
    });
    await query(
      tx as EntityManager,
      `insert into calls (id, organization_id, direction, from_number, to_number, status, carrier, channel, agent_id, attempt, queued_at, answered_at, answered_by,
                          reached_node_ids, credits_charged, webhook_replies, created_at, updated_at)
       values (?, ?, 'inbound', null, 'web', 'in_progress', 'web', 'web', ?, 1, ?::timestamptz, ?::timestamptz, 'human', '[]'::jsonb, 1, '{}'::jsonb, ?::timestamptz, ?::timestamptz)`,
      [callId, row.organization_id, row.agent_id, stamp, stamp, stamp, stamp],
    );
    const call = await (tx as EntityManager).findOneOrFail(Call, callId, { refresh: true });
    await EventWriter.write(tx as EntityManager, { organizationId: row.organization_id, type: 'call.started', payload: callJson(call) });
    return {
      callId,
      organizationId: row.organization_id,
      agentId: row.agent_id,
      apiKeyId: row.api_key_id,
      variables: json<Record<string, string>>(row.variables) ?? {},
      pipelineMode: json<{ pipelineMode?: string }>(row.voice_config)?.pipelineMode === 'sts' ? 'sts' : 'streaming',
    };
  });
}
