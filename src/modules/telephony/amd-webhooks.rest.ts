import express, { type Router } from 'express';
import type { Logger } from 'pino';
import type { VoicemailDrop } from '../voice/voicemail-drop.js';
import { carrierFormBody, formFields, type CarrierRequestGuard } from './carrier-webhooks.rest.js';

export interface AmdWebhookOptions {
  guard: CarrierRequestGuard;
  drop: VoicemailDrop;
  /** PUBLIC_URL, read per request: where a call-control document points back to. */
  publicUrl: () => string | undefined;
  logger: Logger;
}

/**
 * `POST /telephony/{kind}/{connectionId}/amd?callId=…`: the carrier's asynchronous machine-detection
 * verdict (Twilio's AsyncAmdStatusCallback: AccountSid, CallSid, AnsweredBy, MachineDetectionDuration).
 * Signed like every carrier callback (403 otherwise). A verdict for a call of another connection, an
 * unknown one, one already ended or a late one is answered 200 and changes nothing. A machine whose
 * greeting ended has its call updated (voicemail-drop.ts) before the answer, so the carrier's retry
 * of a lost answer finds the message already left.
 */
export function amdWebhookRouter(options: AmdWebhookOptions): Router {
  const { guard, drop, logger } = options;
  const router = express.Router();
  router.use(carrierFormBody());

  router.post('/:kind/:connectionId/amd', async (req, res, next) => {
    try {
      const signed = await guard.verified(req, res);
      if (!signed) return;
      const { account, carrier } = signed;
      const fields = formFields(req.body);
      const verdict = carrier.webhooks.machineVerdict?.(fields) ?? null;
      const callId = verdict ? await guard.callOf(req, account) : null;
      if (!verdict || !callId) {
        logger.warn({ callSid: fields.CallSid, answeredBy: fields.AnsweredBy }, 'a machine-detection verdict for no call we know, or none we read; ignored');
        res.status(200).end();
        return;
      }
      const update = carrier.adapter.updateCall?.bind(carrier.adapter);
      const result = await drop.verdict(callId, verdict, {
        update: async (actions) => {
          if (!update) throw new Error(`the ${carrier.kind} carrier cannot update a live call`);
          const document = carrier.callControl.render(actions, { publicUrl: options.publicUrl() ?? '', connectionId: account.connectionId ?? '', callId });
          await update(account, verdict.carrierCallId, document);
        },
      });
      logger.info({ callId, verdict: verdict.kind, result }, 'machine-detection verdict');
      res.status(200).end();
    } catch (error) {
      next(error);
    }
  });

  return router;
}
