import { randomUUID } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Actor } from '../../common/actor.js';
import { AppError } from '../../common/errors.js';
import { at, query } from '../../db/sql.js';
import { Agent } from '../agents/agent.entity.js';
import type { AgentVariable } from '../agents/templates/agent-variable.types.js';
import { resolveVariables } from '../agents/templates/call-context.js';
import { givenValues } from '../agents/templates/template-values.js';
import { phoneKey } from '../contacts/phone-key.js';
import { CreditEntryKind } from '../organizations/credit-ledger.entity.js';
import { CREDITS_RESERVED_SQL } from '../organizations/organization.entity.js';
import { CallFlow } from '../programs/call-flow.entity.js';
import type { ProgramReadiness } from '../programs/program-readiness.js';
import { Call } from './call.entity.js';
import type { PlaceCallInput } from './direct-call.inputs.js';
import { PhoneNumber } from './phone-number.entity.js';
import { ProgramCarrier } from './telephony.enums.js';

/** The live statuses of a call: it holds its number and a place under DIRECT_CALLS_MAX. */
const LIVE = `('queued', 'ringing', 'in_progress')`;

export interface DirectCallSettings {
  /** DIRECT_CALLS_MAX: single calls one organization may have live at once. */
  maxLive: () => number;
}

/**
 * One call in one request: the checks a campaign's call gets (the agents' readiness and the carrier,
 * the do-not-call list and the contact's opt-out, the variables' values, one credit), then a queued
 * call record without an execution, which the runners place (runner/direct-calls.ts) and whose
 * progress, events and refund go as any call's do.
 */
export class DirectCallService {
  /** Told after each queued call; the composition root points it at the runner (main.ts). */
  onQueued: (() => void) | null = null;

  constructor(
    private readonly em: EntityManager,
    private readonly readiness: ProgramReadiness,
    private readonly settings: DirectCallSettings,
  ) {}

  /** Queues the call and answers its record (status queued, one credit charged). */
  async place(actor: Actor, input: PlaceCallInput): Promise<Call> {
    if (Boolean(input.agentId) === Boolean(input.flowId)) {
      throw AppError.badInput([{ field: 'agentId', message: 'Give exactly one of agentId and flowId' }]);
    }
    // The carriers are the gateway's modules: GraphQL's enum refuses another in these words, REST here.
    const carrierError = this.readiness.carrierError(input.carrier, { web: true });
    if (carrierError) throw AppError.badInput([carrierError]);
    const to = phoneKey(input.to);
    const callId = await this.em.transactional(async (tx) => {
      const agent = input.agentId ? await tx.findOne(Agent, { id: input.agentId, organization: actor.organizationId }) : null;
      if (input.agentId && !agent) throw AppError.notFound('Agent');
      const flow = input.flowId ? await tx.findOne(CallFlow, { id: input.flowId, organization: actor.organizationId }) : null;
      if (input.flowId && !flow) throw AppError.notFound('Call flow');
      const number = input.from
        ? await tx.findOne(PhoneNumber, { number: phoneKey(input.from), organization: actor.organizationId }, { populate: ['carrierConnection'] })
        : null;
      if (input.from && !number) throw AppError.notFound('Phone number');
      const carrier = input.carrier ?? (number?.carrierConnection ? number.carrierConnection.carrier : ProgramCarrier.simulator);
      await this.readiness.assert(tx, actor, { carrier, fromNumber: number, agent, flow }, 'The call cannot be placed');
      const connectionId =
        carrier === ProgramCarrier.simulator
          ? null
          : (number?.carrierConnection?.carrier as string | undefined) === carrier
            ? number!.carrierConnection!.id
            : null;
      if (carrier !== ProgramCarrier.simulator && !connectionId) {
        throw new AppError(
          'CONFLICT',
          `The call cannot be placed on ${carrier}: the number ${number?.number ?? '(none)'} has no ${carrier} carrier connection`,
        );
      }
      const contact = await this.callee(tx, actor, to);
      await this.assertVariables(tx, actor, agent, flow, givenValues(input.variables), contact?.attributes ?? {});
      return this.queue(tx, actor, {
        to,
        from: number?.number ?? null,
        carrier,
        connectionId,
        contactId: contact?.id ?? null,
        agentId: agent?.id ?? null,
        flowId: flow?.id ?? null,
        variables: givenValues(input.variables),
      });
    });
    // The runner of this process places it now rather than at its next tick (if the request's transaction has committed by then).
    this.onQueued?.();
    return this.em.findOneOrFail(Call, callId);
  }

  /** The contact the number is, when there is one; 409 when the number is on the do-not-call list or the contact opted out. */
  private async callee(tx: EntityManager, actor: Actor, phone: string): Promise<{ id: string; attributes: Record<string, unknown> } | null> {
    const [row] = await query<{ dnc: boolean; id: string | null; opted_out: boolean | null; attributes: Record<string, unknown> | string | null }>(
      tx,
      `select exists (select 1 from do_not_call_entries d where d.organization_id = ? and d.phone = ?) as dnc, c.id, c.opted_out, c.attributes
         from (select 1) one left join lateral (select id, opted_out, attributes from contacts where organization_id = ? and phone = ? order by created_at limit 1) c on true`,
      [actor.organizationId, phone, actor.organizationId, phone],
    );
    if (row?.dnc) throw new AppError('CONFLICT', `The call cannot be placed: ${phone} is on the organization’s do-not-call list`);
    if (row?.opted_out) throw new AppError('CONFLICT', `The call cannot be placed: the contact ${row.id} with ${phone} has opted out`);
    if (!row?.id) return null;
    return { id: row.id, attributes: (typeof row.attributes === 'string' ? JSON.parse(row.attributes) : row.attributes) ?? {} };
  }

  /** Every variable the call's agents use has a value (given, the contact's attribute, or a default): else 409 naming each, as an execution's start does. */
  private async assertVariables(
    tx: EntityManager,
    actor: Actor,
    agent: Agent | null,
    flow: CallFlow | null,
    given: Record<string, string>,
    attributes: Record<string, unknown>,
  ): Promise<void> {
    const ids = flow ? [...new Set(flow.nodes.map((node) => node.agentId).filter((id): id is string => Boolean(id)))] : [];
    const agents = agent ? [agent] : ids.length ? await tx.find(Agent, { id: { $in: ids }, organization: actor.organizationId }) : [];
    const errors = agents.flatMap((each) => {
      const templates = {
        instructions: each.instructions,
        policy: each.policy ?? null,
        firstMessage: each.firstMessage ?? null,
        variables: (each.variables ?? []) as AgentVariable[],
      };
      return resolveVariables(templates, { given, attributes }).missing.map((name) => ({
        field: `variables.${name}`,
        message: `{{${name}}} (used by ${each.name}) has no value: it is not in the call's variables, has no default, and the callee has no attribute "${name}"`,
      }));
    });
    if (errors.length > 0)
      throw new AppError(
        'CONFLICT',
        `${errors.length === 1 ? 'A variable' : `${errors.length} variables`} of the agents would have no value on this call: ${errors.map((error) => error.message).join('; ')}`,
        errors,
      );
  }

  /**
   * The record, queued and paid, in one transaction under the organization's row lock (the lock every
   * credit spend takes), so DIRECT_CALLS_MAX and the one-call-per-number rule hold under a burst.
   */
  private async queue(
    tx: EntityManager,
    actor: Actor,
    call: {
      to: string;
      from: string | null;
      carrier: ProgramCarrier;
      connectionId: string | null;
      contactId: string | null;
      agentId: string | null;
      flowId: string | null;
      variables: Record<string, string>;
    },
  ): Promise<string> {
    const [org] = await query<{ credit_balance: number; reserved: number }>(
      tx,
      `select credit_balance, ${CREDITS_RESERVED_SQL('o')} as reserved from organizations o where id = ? for no key update`,
      [actor.organizationId],
    );
    const [live] = await query<{ live: number; same: number }>(
      tx,
      `select count(*)::int as live, count(*) filter (where to_number = ?)::int as same from calls
        where organization_id = ? and execution_id is null and direction = 'outbound' and status in ${LIVE}`,
      [call.to, actor.organizationId],
    );
    if (Number(live?.same ?? 0) > 0)
      throw new AppError('CONFLICT', `The call cannot be placed: ${call.to} is already on a call placed with POST /api/calls; one number, one call`);
    const max = this.settings.maxLive();
    if (Number(live?.live ?? 0) >= max)
      throw new AppError(
        'CONFLICT',
        `The call cannot be placed: the organization already has ${max} single calls live (DIRECT_CALLS_MAX); try again when one ends`,
      );
    const balance = Number(org?.credit_balance ?? 0);
    if (balance < 1) {
      const held = Number(org?.reserved ?? 0);
      throw new AppError(
        'CONFLICT',
        held > 0
          ? `The call cannot be placed: the organization’s ${held} credits are held by running campaigns until they give back what they do not spend`
          : `The call cannot be placed: the organization has 0 credits and each call costs 1. Credits are granted by the operator: npm run cli -- credits:add --org ${actor.organizationId} --amount <n>`,
      );
    }
    const id = randomUUID();
    const now = at(new Date());
    const voiceState = { flowId: call.flowId, agentId: call.agentId, nodeId: null, machine: false, reprompts: 0, turns: 0, pending: null };
    await query(
      tx,
      `with spent as (update organizations o set credit_balance = o.credit_balance - 1 where o.id = ? returning o.credit_balance + ${CREDITS_RESERVED_SQL('o')} as balance),
            ledger as (insert into credit_ledger (id, organization_id, kind, amount, balance_after, reason, execution_id, created_at)
                       select ?, ?, ?, -1, balance, 'single call', null, ?::timestamptz from spent)
       insert into calls (id, created_at, updated_at, organization_id, contact_id, agent_id, direction, from_number, to_number, status, attempt,
                          carrier, carrier_connection_id, queued_at, reached_node_ids, credits_charged, voice_state, variables)
       values (?, ?::timestamptz, ?::timestamptz, ?, ?, ?, 'outbound', ?, ?, 'queued', 1, ?, ?, ?::timestamptz, '[]'::jsonb, 1, ?::jsonb, ?::jsonb)`,
      [
        actor.organizationId,
        randomUUID(),
        actor.organizationId,
        CreditEntryKind.spend,
        now,
        id,
        now,
        now,
        actor.organizationId,
        call.contactId,
        call.agentId,
        call.from,
        call.to,
        call.carrier,
        call.connectionId,
        now,
        JSON.stringify(voiceState),
        JSON.stringify(call.variables),
      ],
    );
    return id;
  }
}
