import express, { type Router } from 'express';
import type { Logger } from 'pino';
import { carrierFormBody, formFields, type CarrierRequestGuard } from '../../telephony/carrier-webhooks.rest.js';
import type { CallTransfers } from './call-transfers.js';

export interface TransferWebhookOptions {
  guard: CarrierRequestGuard;
  transfers: Pick<CallTransfers, 'dialed'>;
  /** PUBLIC_URL, read per request: where a call-control document points back to. */
  publicUrl: () => string | undefined;
  logger: Logger;
}

/**
 * `POST /telephony/{kind}/{connectionId}/dial?callId=…`: the carrier's report of a transfer's dial
 * (Twilio's `<Dial action>` request: CallSid, DialCallStatus, DialCallDuration). Signed like every
 * carrier callback (403 otherwise). The outcome is recorded on the call's transfer once; a report
 * for a call of another connection, an unknown one, one ended, one not transferred or naming another
 * carrier call is answered and changes nothing. The answer hangs up: the agent left the call when
 * it transferred it, so nothing is left to do once the dial is over.
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
      const hangUp = carrier.callControl.render([{ kind: 'hangup' }], {
        publicUrl: options.publicUrl() ?? '',
        connectionId: account.connectionId ?? '',
        callId: callId ?? '',
      });
      res.status(200).type(hangUp.contentType).send(hangUp.body);
    } catch (error) {
      next(error);
    }
  });

  return router;
}
