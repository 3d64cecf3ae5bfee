import { randomUUID } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Logger } from 'pino';
import { at, query } from '../../db/sql.js';
import type { CarrierKind } from '../telephony/telephony.enums.js';
import type { InboundCall } from '../telephony/carriers/carrier-module.js';
import { WORDS, withPromptIds, type VoiceAction } from './voice-actions.js';
import type { VoiceEngine } from './voice-session.js';
import type { WebhookReplays } from './webhook-replays.js';

/** The entry of calls.webhook_replies that holds what the call's first inbound request was answered. */
const FIRST_INBOUND = 'inbound';

interface NumberRow {
  id: string;
  organization_id: string;
  number: string;
  inbound_agent_id: string | null;
  inbound_flow_id: string | null;
}

/**
 * A call to one of the organization's numbers (Twilio's "A call comes in" webhook): recorded as an
 * inbound Call (organization from the number, `to` the number, `from` the caller, the carrier's
 * CallSid so the number's status callbacks find it), then answered by the number's agent or flow.
 * A number bound to neither, or one we do not know, hears a short refusal. Twilio asks once per
 * call: a second request for the same CallSid (a retry, or a replay, with its token or without) finds
 * the call, creates none and restarts nothing; it is answered what the first was (webhook-replays.ts).
 */
export class InboundCalls {
  constructor(
    private readonly em: EntityManager,
    private readonly engine: VoiceEngine,
    private readonly replays: WebhookReplays,
    private readonly logger: Logger,
  ) {}

  /** `carrier`: the module the call came through; `requestKey`: the request's key (requestKey in webhook-replays.ts), recorded on the call it creates. */
  async answer(
    carrier: CarrierKind,
    connectionId: string,
    inbound: InboundCall | null,
    requestKey: string,
  ): Promise<{ callId: string | null; actions: VoiceAction[]; repeated?: boolean }> {
    const refusal: VoiceAction[] = [{ kind: 'say', text: WORDS.unbound, voice: null }, { kind: 'hangup' }];
    const em = this.em.fork();
    const [number] = await query<NumberRow>(
      em,
      'select id, organization_id, number, inbound_agent_id, inbound_flow_id from phone_numbers where carrier_connection_id = ? and number = ?',
      [connectionId, inbound?.to ?? ''],
    );
    const carrierCallId = inbound?.carrierCallId ?? '';
    if (!number || !carrierCallId) {
      this.logger.warn({ connectionId, carrierCallId }, 'an inbound call to a number we do not know; refused');
      return { callId: null, actions: refusal };
    }
    const bound = number.inbound_agent_id || number.inbound_flow_id;
    const now = at(new Date());
    const voiceState = {
      flowId: number.inbound_flow_id,
      agentId: number.inbound_agent_id,
      nodeId: null,
      machine: false,
      reprompts: 0,
      turns: 0,
      pending: null,
    };
    // A carrier may ask twice for one call: the CallSid is unique per carrier, so the second finds the first and changes nothing.
    const created = await query<{ id: string }>(
      em,
      `insert into calls (id, organization_id, direction, from_number, to_number, status, carrier, carrier_connection_id, carrier_call_id,
                          agent_id, voice_state, attempt, queued_at, answered_at, answered_by, reached_node_ids, credits_charged, webhook_replies, created_at, updated_at)
       values (?, ?, 'inbound', ?, ?, 'in_progress', ?, ?, ?, ?, ?::jsonb, 1, ?::timestamptz, ?::timestamptz, 'human', '[]'::jsonb, 0,
               jsonb_build_object(?::text, null, ?::text, null), ?::timestamptz, ?::timestamptz)
       on conflict (carrier, carrier_call_id) do nothing returning id`,
      [
        randomUUID(),
        number.organization_id,
        inbound?.from ?? null,
        number.number,
        carrier,
        connectionId,
        carrierCallId,
        number.inbound_agent_id,
        JSON.stringify(voiceState),
        now,
        now,
        requestKey,
        FIRST_INBOUND,
        now,
        now,
      ],
    );
    const [call] = await query<{ id: string; organization_id: string }>(em, `select id, organization_id from calls where carrier = ? and carrier_call_id = ?`, [
      carrier,
      carrierCallId,
    ]);
    if (!call || call.organization_id !== number.organization_id) return { callId: null, actions: refusal };
    if (created.length === 0) {
      this.logger.warn({ connectionId, callId: call.id }, 'a repeated inbound webhook for a call we already answered; answered as before, nothing changed');
      return { callId: call.id, actions: (await this.replays.answered(call.id, FIRST_INBOUND)) ?? [], repeated: true };
    }
    const actions = withPromptIds(bound ? await this.engine.answer(call.id, 'human') : refusal);
    await this.replays.keep(call.id, FIRST_INBOUND, actions);
    await this.replays.keep(call.id, requestKey, actions);
    return { callId: call.id, actions };
  }
}
