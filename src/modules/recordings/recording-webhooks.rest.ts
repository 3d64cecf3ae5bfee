import express, { type Router } from 'express';
import type { Logger } from 'pino';
import { carrierFormBody, formFields, type CarrierRequestGuard } from '../telephony/carrier-webhooks.rest.js';
import type { CallTracker } from '../telephony/call-tracker.js';
import type { RecordingLedger } from './recording-ledger.js';

export interface RecordingWebhookOptions {
  guard: CarrierRequestGuard;
  tracker: CallTracker;
  ledger: RecordingLedger;
  logger: Logger;
}

/**
 * A carrier's recording status callback (Twilio's RecordingStatusCallback): `/telephony/{kind}/{connectionId}/recording?callId=…`, signed
 * like every carrier webhook (403 and nothing changed otherwise). A report for a call we do not
 * know, of another connection, or whose CallSid is not the call's, is answered 200 (so Twilio stops
 * retrying), logged, and changes nothing; a replay changes nothing either (RecordingLedger).
 */
export function recordingWebhookRouter(options: RecordingWebhookOptions): Router {
  const { guard, logger } = options;
  const router = express.Router();
  router.use(carrierFormBody());

  router.post('/:kind/:connectionId/recording', async (req, res, next) => {
    try {
      const signed = await guard.verified(req, res);
      if (!signed) return;
      const { account, carrier } = signed;
      const fields = formFields(req.body);
      const event = carrier.adapter.parseRecordingCallback?.(fields) ?? null;
      if (!event) {
        logger.warn(
          { recordingSid: fields.RecordingSid, recordingStatus: fields.RecordingStatus },
          'recording status callback without a status we know; ignored',
        );
        res.status(200).end();
        return;
      }
      const callId = await guard.callOf(req, account);
      const call = callId ? await options.tracker.get(callId) : null;
      if (!call || (event.carrierCallId && call.carrierCallId && event.carrierCallId !== call.carrierCallId)) {
        logger.warn(
          { callSid: event.carrierCallId, recordingSid: event.carrierRecordingId, query: req.query.callId },
          'recording status callback for a call we do not know; nothing changed',
        );
        res.status(200).end();
        return;
      }
      const result = await options.ledger.apply(call.id, event);
      if (result === 'ignored')
        logger.info(
          { callId: call.id, recordingSid: event.carrierRecordingId, status: event.status },
          'recording status callback changed nothing (a replay, a late report or another recording)',
        );
      res.status(200).end();
    } catch (error) {
      next(error);
    }
  });

  return router;
}
