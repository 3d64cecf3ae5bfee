import express, { type Router } from 'express';
import type { Logger } from 'pino';
import { carrierFormBody, formFields, type CarrierRequestGuard } from '../../telephony/carrier-webhooks.rest.js';
import type { VoiceAction } from '../voice-actions.js';
import type { CallTransfers } from './call-transfers.js';

export interface TransferWebhookOptions {
  guard: CarrierRequestGuard;
  transfers: Pick<CallTransfers, 'dialed' | 'legEnded'>;
  /**
   * What a caller given back to the agent does next (voice-session.ts backFromTransfer): its media
   * stream again (a new single-use nonce), or on a batch call the agent's line and a gather.
   */
  backToAgent: (callId: string) => Promise<VoiceAction[]>;
  /** PUBLIC_URL, read per request: where a call-control document points back to. */
  publicUrl: () => string | undefined;
  logger: Logger;
}

/**
 * `POST /telephony/{kind}/{connectionId}/dial?callId=…`: the carrier's report of a transfer's dial
 * (Twilio's `<Dial action>` request: CallSid, DialCallStatus, DialCallDuration). Signed like every
 * carrier callback (403 otherwise). The outcome is recorded on the call's transfer once; a report
 * for a call of another connection, an unknown one, one ended, one not transferred or naming another
 * carrier call is answered and changes nothing. A dial that reached no one (busy, no-answer, failed,
 * canceled) while the caller is on the line is answered with the call's media stream again (Twilio:
 * `<Connect><Stream>`, a new single-use nonce), or on a batch call with the agent saying so and a
 * `<Gather>`, so the agent is back with the caller and told why;
 * any other answer hangs up: the person had the call, and the agent left it when it transferred.
 */
export function transferWebhookRouter(options: TransferWebhookOptions): Router {
  const { guard, transfers, logger } = options;
  const router = express.Router();
  router.use(carrierFormBody());

  router.post('/:kind/:connectionId/dial', async (req, res, next) => {
    try {
      const signed = await guard.verified(req, res);
      if (!signed) return;
      const { account, carrier } = signed;
      const fields = formFields(req.body);
      const outcome = carrier.webhooks.dialOutcome?.(fields) ?? null;
      const callId = outcome ? await guard.callOf(req, account) : null;
      const result = outcome && callId ? await transfers.dialed(callId, outcome) : 'ignored';
      if (result === 'ignored')
        logger.warn({ callSid: fields.CallSid, dialStatus: fields.DialCallStatus }, 'a transfer’s dial report for no transfer we know; ignored');
      else logger.info({ callId, dialStatus: outcome!.status }, 'transfer dial reported');
      const actions: VoiceAction[] = result === 'returned' && callId ? await options.backToAgent(callId) : [{ kind: 'hangup' }];
      if (result === 'returned') logger.info({ callId, dialStatus: outcome!.status }, 'the transfer reached no one: the caller goes back to the agent');
      const document = carrier.callControl.render(actions, {
        publicUrl: options.publicUrl() ?? '',
        connectionId: account.connectionId ?? '',
        callId: callId ?? '',
      });
      res.status(200).type(document.contentType).send(document.body);
    } catch (error) {
      next(error);
    }
  });

  /**
   * `POST /telephony/{kind}/{connectionId}/transfer-leg?callId=…`: a warm transfer's leg to the person
   * ended (Twilio: its status callback, CallStatus and CallDuration), signed like every callback. Recorded
   * once, for the leg the call's transfer placed; a leg that reached no one (busy, no-answer, failed,
   * canceled) gives the caller back to the agent: the caller's call, waiting in the room, is updated
   * with its media stream again (a batch call: the agent's line and a gather). Anything else is answered and changes nothing.
   */
  router.post('/:kind/:connectionId/transfer-leg', async (req, res, next) => {
    try {
      const signed = await guard.verified(req, res);
      if (!signed) return;
      const { account, carrier } = signed;
      const fields = formFields(req.body);
      const outcome = carrier.webhooks.legOutcome?.(fields) ?? null;
      const callId = outcome ? await guard.callOf(req, account) : null;
      const ended = outcome && callId ? await transfers.legEnded(callId, outcome) : { result: 'ignored' as const, callerCallId: null };
      res.status(204).end();
      if (ended.result !== 'returned' || !callId || !ended.callerCallId) {
        if (outcome) logger.info({ callId, legStatus: outcome.status, result: ended.result }, 'a warm transfer’s leg ended');
        return;
      }
      logger.info({ callId, legStatus: outcome!.status }, 'the warm transfer reached no one: the caller goes back to the agent');
      const actions = await options.backToAgent(callId);
      const document = carrier.callControl.render(actions, { publicUrl: options.publicUrl() ?? '', connectionId: account.connectionId ?? '', callId });
      await carrier.adapter
        .updateCall?.(account, ended.callerCallId, document)
        .catch((error: unknown) =>
          logger.warn({ callId, err: error instanceof Error ? error.message : String(error) }, 'the caller could not be given back to the agent (gone?)'),
        );
    } catch (error) {
      if (res.headersSent) logger.error({ err: error instanceof Error ? error.message : String(error) }, 'a warm transfer’s leg report failed');
      else next(error);
    }
  });

  return router;
}
