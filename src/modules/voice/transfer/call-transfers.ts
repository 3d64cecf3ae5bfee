import type { EntityManager } from '@mikro-orm/postgresql';
import type { Logger } from 'pino';
import { at, query } from '../../../db/sql.js';
import type { Agent } from '../../agents/agent.entity.js';
import { phoneKey } from '../../contacts/phone-key.js';
import { EventWriter } from '../../events/event-writer.js';
import { Call } from '../../telephony/call.entity.js';
import { callJson } from '../../telephony/call.types.js';
import type { CarrierAccount } from '../../telephony/carrier.js';
import { carrierModuleOf, type CarrierModules } from '../../telephony/carriers/index.js';
import type { CarrierModule, DialOutcome } from '../../telephony/carriers/carrier-module.js';
import type { StoredTransfer } from '../../telephony/call-transfer.types.js';
import type { VoiceAction } from '../voice-actions.js';
import { holdLine, transferLine } from './transfer-tool.js';
import { renderedPrompt, templateView } from '../../agents/templates/call-context.js';
import { asSpokenWords, renderTemplate, type TemplateView } from '../../agents/templates/template-language.js';
import { CallConversations } from '../realtime/call-conversation.js';
import type { TransferDestination } from '../../agents/transfer-destination.types.js';
import type { RequestDeadline } from '../../../platform/request-timeout.js';
import { transferSummary, type SummaryModelPort } from './transfer-summary.js';

/** What the model is told of a transfer_call, and the destination when the carrier took it (the agent's stream then ends). */
export interface TransferOutcome {
  output: Record<string, unknown>;
  transferred: { name: string; line: string; briefing: string | null } | null;
  /** With `respond` (a batch call): what the call does now (the line and the dial, or the hold and the room), for the webhook's answer. */
  actions?: VoiceAction[];
}

/**
 * How the carrier is given the transfer: by updating the live call (a media-streamed call: sts,
 * streaming), or, with `respond`, in the answer to the carrier's webhook now being answered (a batch
 * call, whose TwiML/TeXML the gateway is writing anyway): the outcome then carries the actions.
 */
export interface TransferDelivery {
  respond?: boolean;
}

/** A transfer whose dial reached no one, the caller given back to the agent: whom it dialled and the carrier's word for how it ended. */
export interface ReturnedTransfer {
  destinationName: string;
  dialStatus: string;
}

/**
 * What the voice pipelines ask (bridge.ts, streaming-call.ts): one transfer of a live call to one of
 * its agent's destinations, and, as a session starts, whether the call is back from one that reached no one.
 */
export interface TransferPort {
  /** `sessionModel`: a speech-to-speech call's own session, which writes a warm transfer's summary where its provider answers text (sessionSummaryModel). */
  transfer(
    call: { id: string; organizationId: string },
    agent: Agent,
    args: Record<string, unknown>,
    sessionModel?: SummaryModelPort | null,
    delivery?: TransferDelivery,
  ): Promise<TransferOutcome>;
  returned(call: { id: string; organizationId: string }): Promise<ReturnedTransfer | null>;
}

/** How long a warm transfer's leg rings before it is no-answer (Twilio's CreateCall Timeout, Telnyx's InitiateCallRequest Timeout). */
export const WARM_RING_SECONDS = 30;

/** DialCallStatus values of a dial that reached no one: the caller is given back to the agent. */
export const UNREACHED_DIAL_STATUSES: ReadonlySet<string> = new Set(['busy', 'no-answer', 'failed', 'canceled']);

const storedOf = (value: StoredTransfer | string | null): StoredTransfer | null => (typeof value === 'string' ? (JSON.parse(value) as StoredTransfer) : value);

export interface CallTransfersOptions {
  em: EntityManager;
  carriers: CarrierModules;
  account: (connectionId: string) => Promise<CarrierAccount | null>;
  /** PUBLIC_URL, read per transfer: where the <Dial action> points back to. */
  publicUrl: () => string | undefined;
  logger: Logger;
  clock?: () => Date;
  /** The agent's text model, asked for a warm transfer's summary (transfer-summary.ts). */
  model: SummaryModelPort;
  /** The summary's deadline (SUMMARY_TIMEOUT_MS on a timer; a test's fires when it says). */
  summaryDeadline?: RequestDeadline;
}

interface TransferRow {
  status: string;
  from_number: string | null;
  conversation_id: string | null;
  carrier: string;
  carrier_connection_id: string | null;
  carrier_call_id: string | null;
  transfer: StoredTransfer | string | null;
  voice_id: string | null;
}

const refused = (error: string): TransferOutcome => ({ output: { transferred: false, error }, transferred: null });

/**
 * The cold transfer (the agent's transfer_call): the destination must be one of the agent's (by
 * name), not on the organization's do-not-call list, and the call in progress at a carrier that can
 * update a live call. The call is claimed (its `transfer` set, once), then the carrier is told to
 * replace what the call does with a line ("Connecting you to …") and a dial to the destination whose
 * outcome comes back to `/telephony/{kind}/{connectionId}/dial` (transfer-webhooks.rest.ts); the
 * caller's media stream then ends at the carrier. A refusal by the carrier releases the claim and the
 * model is told, so the call goes on with the agent. `call.transferred` is written with the claim's
 * confirmation, once the carrier took it. With `respond` (a batch call) no update is sent: the
 * actions come back in the outcome for the webhook being answered, and the event is written then.
 */
export class CallTransfers implements TransferPort {
  private readonly clock: () => Date;

  constructor(private readonly options: CallTransfersOptions) {
    this.clock = options.clock ?? (() => new Date());
  }

  async transfer(
    call: { id: string; organizationId: string },
    agent: Agent,
    args: Record<string, unknown>,
    sessionModel: SummaryModelPort | null = null,
    delivery: TransferDelivery = {},
  ): Promise<TransferOutcome> {
    const { logger } = this.options;
    const name = typeof args.destination === 'string' ? args.destination.trim() : '';
    const destination = agent.transferDestinations.find((each) => each.name === name);
    if (!destination) {
      const names = agent.transferDestinations.map((each) => each.name);
      return refused(names.length > 0 ? `destination must be one of: ${names.join(', ')}` : 'this agent has no transfer destinations');
    }
    if (await this.onDoNotCall(call.organizationId, destination.number)) {
      logger.info({ callId: call.id, destination: destination.name }, 'a transfer to a number on the do-not-call list was refused');
      return refused(`${destination.name} is on the organization’s do-not-call list: the call cannot be transferred there`);
    }
    const [row] = await query<TransferRow>(
      this.options.em.fork(),
      `select c.status, c.from_number, c.conversation_id, c.carrier, c.carrier_connection_id, c.carrier_call_id, c.transfer, a.voice_config->>'voiceId' as voice_id
         from calls c left join agents a on a.id = c.agent_id and a.organization_id = c.organization_id
        where c.id = ? and c.organization_id = ?`,
      [call.id, call.organizationId],
    );
    if (!row || row.status !== 'in_progress') return refused('the call is no longer in progress');
    // A transfer whose dial reached no one gave the caller back: another may be tried (the record is then the new one's).
    const before = storedOf(row.transfer);
    if (before && !before.returnedAt) return refused('the call was already transferred');
    const carrier = carrierModuleOf(this.options.carriers, row.carrier);
    const update = carrier?.adapter.updateCall?.bind(carrier.adapter);
    const account = row.carrier_connection_id ? await this.options.account(row.carrier_connection_id) : null;
    // A carrier transfers when it can update a live call (or, on a batch call, answer its webhook) and read the dial's report (Twilio and Telnyx both do; a web call has no carrier).
    if (!carrier || (!update && !delivery.respond) || !carrier.webhooks.dialOutcome || !account || !row.carrier_call_id)
      return refused(`transfer is not available on this carrier (${row.carrier})`);
    // A warm transfer also places the person's own leg and reads how it ended.
    const dialLeg = carrier.adapter.dialLeg?.bind(carrier.adapter);
    const warm = destination.mode === 'warm';
    if (warm && (!dialLeg || !carrier.webhooks.legOutcome || !row.from_number))
      return refused(`a warm transfer is not available on this ${row.from_number ? 'carrier' : 'call (it has no number to call from)'} (${row.carrier})`);

    const line = transferLine(destination.name);
    const transferredAt = this.clock();
    const stored: StoredTransfer = {
      destinationName: destination.name,
      destination: destination.number,
      mode: destination.mode,
      transferredAt: transferredAt.toISOString(),
      dialStatus: null,
      dialDurationSeconds: null,
      dialEndedAt: null,
      returnedAt: null,
      briefing: null,
      summary: null,
      summaryError: null,
    };
    if (!(await this.claim(call.id, stored))) return refused('the call is no longer in progress, or was already transferred');
    const context = { publicUrl: this.options.publicUrl() ?? '', connectionId: row.carrier_connection_id!, callId: call.id };
    const room = `transfer-${call.id}`;
    const actions: VoiceAction[] = warm
      ? [
          { kind: 'say', text: holdLine(destination.name), voice: row.voice_id },
          { kind: 'conference', room, role: 'caller' },
        ]
      : [
          { kind: 'say', text: line, voice: row.voice_id },
          { kind: 'dial', number: destination.number, reportTo: 'dial' },
        ];
    // The person's leg, once placed: ended again if the caller's own call then refuses the update, so nothing rings for no one.
    let legCallId: string | null = null;
    let briefing: string | null = null;
    try {
      if (warm) {
        // The person's leg first: it rings while the caller is moved to the room, hears the briefing once answered, then joins.
        const told = await this.briefing(call, agent, destination, row.conversation_id, sessionModel);
        briefing = told.briefing;
        const legDocument = carrier.callControl.render(
          [
            { kind: 'say', text: told.briefing, voice: row.voice_id },
            { kind: 'conference', room, role: 'person' },
          ],
          context,
        );
        const leg = await dialLeg!(account, {
          to: destination.number,
          from: row.from_number!,
          document: legDocument,
          timeoutSeconds: WARM_RING_SECONDS,
          statusCallbackUrl: `${context.publicUrl}/telephony/${carrier.kind}/${context.connectionId}/transfer-leg?callId=${encodeURIComponent(call.id)}`,
        });
        legCallId = leg.carrierCallId;
        await query(this.options.em.fork(), 'update calls set transfer = transfer || ?::jsonb where id = ?', [
          JSON.stringify({ legCallId: leg.carrierCallId, briefing: told.briefing, summary: told.summary, summaryError: told.summaryError }),
          call.id,
        ]);
      }
      if (!delivery.respond) await update!(account, row.carrier_call_id, carrier.callControl.render(actions, context));
    } catch (error) {
      await query(this.options.em.fork(), 'update calls set transfer = ?::jsonb, updated_at = ?::timestamptz where id = ?', [
        before ? JSON.stringify(before) : null,
        at(this.clock()),
        call.id,
      ]);
      const reason = error instanceof Error ? error.message : String(error);
      logger.warn({ callId: call.id, destination: destination.name, err: reason }, 'the carrier refused the transfer; the call goes on with the agent');
      if (legCallId) await this.endPlacedLeg(call.id, carrier, account, legCallId);
      return refused(`the carrier refused the transfer (${reason.slice(0, 200)}); the call goes on with you: tell the caller`);
    }
    // The carrier has the call now: a lost event is logged, never told to the model as a failed transfer.
    await this.written(call.id).catch((error: unknown) =>
      logger.error({ callId: call.id, err: error instanceof Error ? error.message : String(error) }, 'call.transferred could not be written'),
    );
    logger.info({ callId: call.id, destination: destination.name }, 'call transferred');
    return {
      output: { transferred: true, destination: destination.name },
      transferred: { name: destination.name, line, briefing },
      ...(delivery.respond ? { actions } : {}),
    };
  }

  /**
   * The carrier's report of the transfer's dial (its `<Dial action>`), for a call of that connection:
   * recorded once, on a call still in progress that was transferred, at the carrier call it names.
   * Anything else (another call, one ended, no transfer, a repeat) is ignored. A dial that reached no
   * one (busy, no-answer, failed, canceled) while the caller is still on the line gives the caller
   * back to the agent (`returned`): the same statement marks it `returnedAt` and lets the call open
   * one more media stream (its stream URL is issued again, with a new single-use nonce).
   */
  async dialed(callId: string, outcome: DialOutcome): Promise<'recorded' | 'returned' | 'ignored'> {
    const now = this.clock();
    const back = UNREACHED_DIAL_STATUSES.has(outcome.status) && (outcome.callStatus === null || outcome.callStatus === 'in-progress');
    const report = {
      dialStatus: outcome.status,
      dialDurationSeconds: outcome.durationSeconds,
      dialEndedAt: now.toISOString(),
      returnedAt: back ? now.toISOString() : null,
    };
    const rows = await this.reported(outcome, (tx) =>
      query<{ id: string }>(
        tx,
        `update calls set transfer = transfer || ?::jsonb, updated_at = ?::timestamptz,
              stream_opened_at = case when ?::boolean then null else stream_opened_at end,
              stream_nonce_hash = case when ?::boolean then null else stream_nonce_hash end
        where id = ? and status = 'in_progress' and transfer is not null and coalesce(transfer->>'dialStatus', '') = ''
          and carrier_call_id = ? returning id`,
        [JSON.stringify(report), at(now), back, back, callId, outcome.carrierCallId],
      ),
    );
    if (rows.length === 0) return 'ignored';
    return back ? 'returned' : 'recorded';
  }

  /**
   * A warm transfer's leg ended (its status callback): recorded once, on the call still in progress
   * whose transfer placed that leg. A leg that reached no one gives the caller back to the agent, as
   * `dialed` does: the caller's own call (`callerCallId`) is then to be updated with its media stream.
   */
  async legEnded(callId: string, outcome: DialOutcome): Promise<{ result: 'recorded' | 'returned' | 'ignored'; callerCallId: string | null }> {
    const now = this.clock();
    const back = UNREACHED_DIAL_STATUSES.has(outcome.status);
    const report = {
      dialStatus: outcome.status,
      dialDurationSeconds: outcome.durationSeconds,
      dialEndedAt: now.toISOString(),
      returnedAt: back ? now.toISOString() : null,
    };
    const rows = await this.reported(outcome, (tx) =>
      query<{ id: string; carrier_call_id: string | null }>(
        tx,
        `update calls set transfer = transfer || ?::jsonb, updated_at = ?::timestamptz,
              stream_opened_at = case when ?::boolean then null else stream_opened_at end,
              stream_nonce_hash = case when ?::boolean then null else stream_nonce_hash end
        where id = ? and status = 'in_progress' and transfer->>'legCallId' = ? and coalesce(transfer->>'dialStatus', '') = ''
        returning id, carrier_call_id`,
        [JSON.stringify(report), at(now), back, back, callId, outcome.carrierCallId],
      ),
    );
    if (rows.length === 0) return { result: 'ignored', callerCallId: null };
    return { result: back ? 'returned' : 'recorded', callerCallId: rows[0]!.carrier_call_id };
  }

  /**
   * What the person hears before the caller is joined: who transfers, the destination's briefing
   * (variables filled in), and the model's summary of the call so far (transfer-summary.ts) — at the
   * briefing's `{{summary}}` when it has one, else after it — or, without a summary (none asked of an
   * sts agent, the model failed, was late or said the policy), the caller's last two turns. The
   * summary and why there is none are kept with it.
   */
  private async briefing(
    call: { id: string; organizationId: string },
    agent: Agent,
    destination: TransferDestination,
    conversationId: string | null,
    sessionModel: SummaryModelPort | null,
  ): Promise<{ briefing: string; summary: string | null; summaryError: string | null }> {
    const conversations = new CallConversations(this.options.em);
    const { context } = await conversations.callContext(call.organizationId, call.id, agent);
    const transcript = conversationId ? await conversations.transcript(conversationId) : [];
    const { guardPolicy } = renderedPrompt(agent, context);
    const asked = await transferSummary({ model: this.options.model, sessionModel, deadline: this.options.summaryDeadline }, agent, transcript, guardPolicy);
    if (asked.error)
      this.options.logger.warn({ callId: call.id, destination: destination.name, reason: asked.error }, 'a warm transfer’s briefing has no summary');
    const summary = asked.summary;
    const template = destination.briefing ?? '';
    const placed = /\{\{\s*summary\s*\}\}/.test(template);
    // The summary is a value like the others (said as words); it takes the place of a variable named summary.
    const view = Object.assign(Object.create(null) as TemplateView, context ? templateView(context) : {}, { summary: summary ?? '' });
    const own = renderTemplate(template, view, asSpokenWords).replace(/\s+/g, ' ').trim();
    const said = transcript.filter((message) => message.role === 'user').slice(-2);
    const words = said.map((message) => message.content).join(' ');
    const after = summary ? (placed ? '' : `Summary: ${summary}`) : words ? `The caller said: ${words.slice(0, 400)}` : '';
    const briefing = [`This is ${agent.name}, with a caller for ${destination.name}.`, own, after, 'Connecting you now.'].filter(Boolean).join(' ');
    return { briefing, summary, summaryError: asked.error };
  }

  /**
   * The call ended (its carrier's final status): a warm transfer's leg still unreported (ringing, or the
   * person alone in the room) is ended at the carrier, so nothing is left ringing once the caller is gone.
   */
  async callEnded(callId: string): Promise<void> {
    const [row] = await query<{ carrier: string; carrier_connection_id: string | null; transfer: StoredTransfer | string | null }>(
      this.options.em.fork(),
      'select carrier, carrier_connection_id, transfer from calls where id = ?',
      [callId],
    );
    const stored = storedOf(row?.transfer ?? null);
    if (!row?.carrier_connection_id || !stored?.legCallId || stored.dialStatus) return;
    const carrier = carrierModuleOf(this.options.carriers, row.carrier);
    const account = await this.options.account(row.carrier_connection_id);
    if (!carrier?.adapter.endLeg || !account) return;
    try {
      await carrier.adapter.endLeg(account, stored.legCallId);
      this.options.logger.info({ callId }, 'the caller left during a warm transfer: the person’s leg was ended');
    } catch (error) {
      this.options.logger.warn({ callId, err: error instanceof Error ? error.message : String(error) }, 'a warm transfer’s leg could not be ended');
    }
  }

  /** A warm transfer's leg placed for a transfer that then failed: ended at the carrier (its later report matches no transfer and is ignored). */
  private async endPlacedLeg(callId: string, carrier: CarrierModule, account: CarrierAccount, legCallId: string): Promise<void> {
    try {
      await carrier.adapter.endLeg?.(account, legCallId);
      this.options.logger.info({ callId }, 'the transfer failed after the person’s leg was placed: the leg was ended');
    } catch (error) {
      this.options.logger.warn({ callId, err: error instanceof Error ? error.message : String(error) }, 'a failed warm transfer’s leg could not be ended');
    }
  }

  /** The call's transfer when its dial reached no one and the caller was given back to the agent; null otherwise. */
  async returned(call: { id: string; organizationId: string }): Promise<ReturnedTransfer | null> {
    const [row] = await query<{ transfer: StoredTransfer | string | null }>(
      this.options.em.fork(),
      'select transfer from calls where id = ? and organization_id = ?',
      [call.id, call.organizationId],
    );
    const stored = storedOf(row?.transfer ?? null);
    return stored?.returnedAt && stored.dialStatus ? { destinationName: stored.destinationName, dialStatus: stored.dialStatus } : null;
  }

  /** A destination's E.164 number on the organization's list; a SIP URI is never on it (the list holds numbers). */
  private async onDoNotCall(organizationId: string, number: string): Promise<boolean> {
    if (!number.startsWith('+')) return false;
    const rows = await query<{ id: string }>(this.options.em.fork(), 'select id from do_not_call_entries where organization_id = ? and phone = ? limit 1', [
      organizationId,
      phoneKey(number),
    ]);
    return rows.length > 0;
  }

  /** Sets the call's transfer, once, on a call still in progress (again after a transfer that gave the caller back). */
  private async claim(callId: string, stored: StoredTransfer): Promise<boolean> {
    const rows = await query<{ id: string }>(
      this.options.em.fork(),
      `update calls set transfer = ?::jsonb, updated_at = ?::timestamptz
        where id = ? and status = 'in_progress' and (transfer is null or coalesce(transfer->>'returnedAt', '') <> '') returning id`,
      [JSON.stringify(stored), at(this.clock()), callId],
    );
    return rows.length > 0;
  }

  /**
   * A dial's report recorded (`record`, the update of the call's transfer, once) and, when the dial
   * reached no one, `call.transfer_failed` written in the same transaction: the call as REST shows it,
   * its transfer with `dialStatus` and `returnedAt` (null when the caller had already gone). A report
   * that changes nothing (a repeat, another call) writes no event.
   */
  private async reported<Row extends { id: string }>(outcome: DialOutcome, record: (tx: EntityManager) => Promise<Row[]>): Promise<Row[]> {
    return this.options.em.fork().transactional(async (tx) => {
      const rows = await record(tx);
      if (rows.length > 0 && UNREACHED_DIAL_STATUSES.has(outcome.status)) {
        const call = await tx.findOneOrFail(Call, rows[0]!.id, { refresh: true });
        await EventWriter.write(tx, { organizationId: call.organizationId, type: 'call.transfer_failed', payload: callJson(call) });
      }
      return rows;
    });
  }

  /** call.transferred: the call as REST shows it, with its transfer. */
  private async written(callId: string): Promise<void> {
    await this.options.em.fork().transactional(async (tx) => {
      const call = await tx.findOneOrFail(Call, callId, { refresh: true });
      await EventWriter.write(tx, { organizationId: call.organizationId, type: 'call.transferred', payload: callJson(call) });
    });
  }
}
