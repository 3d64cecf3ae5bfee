import express, { type Router } from 'express';
import type { Logger } from 'pino';
import { carrierFormBody, formFields, type CarrierRequestGuard } from '../telephony/carrier-webhooks.rest.js';
import type { CarrierModule } from '../telephony/carriers/carrier-module.js';
import { WORDS, type VoiceAction } from './voice-actions.js';
import type { VoiceEngine } from './voice-session.js';
import type { InboundCalls } from './inbound.js';
import { requestKey, requestKeys, type WebhookReplays } from './webhook-replays.js';

export interface VoiceWebhookOptions {
  guard: CarrierRequestGuard;
  engine: VoiceEngine;
  inbound: InboundCalls;
  replays: WebhookReplays;
  publicUrl: () => string | undefined;
  logger: Logger;
}

const HANG_UP: VoiceAction[] = [{ kind: 'hangup' }];
const signedHeaders = (req: express.Request) => ({ header: (name: string) => req.get(name) });

/**
 * The voice side of a carrier's webhooks (`/telephony/{kind}/{connectionId}/…`), signed like the status and answer routes (403 and nothing
 * changed otherwise): `/gather` takes what the caller said or pressed, `/reply` speaks the agent's
 * answer, `/inbound` answers a call to one of the organization's numbers. A signed request that
 * repeats one already answered on the call (the same signed URL and body, or the same
 * carrier's idempotency key, Twilio's I-Twilio-Idempotency-Token) is answered as the first was, and adds no turn (`/gather`), takes no
 * reply (`/reply`) and makes no call or restart (`/inbound`). A stream in the TwiML sent gets its single-use nonce as it is sent.
 */
export function voiceWebhookRouter(options: VoiceWebhookOptions): Router {
  const { guard, engine, logger } = options;
  const router = express.Router();
  router.use(carrierFormBody());

  const render = (res: express.Response, carrier: CarrierModule, connectionId: string, callId: string, actions: VoiceAction[]) => {
    const document = carrier.callControl.render(actions, { publicUrl: options.publicUrl() ?? '', connectionId, callId });
    res.status(200).type(document.contentType).send(document.body);
  };
  const send = async (res: express.Response, carrier: CarrierModule, connectionId: string, callId: string, actions: VoiceAction[]) =>
    render(res, carrier, connectionId, callId, callId ? await engine.armStreams(callId, actions) : actions);
  /** A repeat is answered as the first was, but a stream in it gets no new nonce: the first's stands, and the repeat's URL opens nothing. */
  const repeat = (res: express.Response, carrier: CarrierModule, connectionId: string, callId: string, actions: VoiceAction[] | null) =>
    render(res, carrier, connectionId, callId, actions ?? []);

  router.post('/:kind/:connectionId/gather', async (req, res, next) => {
    try {
      const signed = await guard.verified(req, res);
      if (!signed) return;
      const { account, carrier } = signed;
      const callId = await guard.callOf(req, account);
      const fields = formFields(req.body);
      if (!callId) {
        logger.warn({ carrierCallId: carrier.webhooks.carrierCallIdOf(fields) }, 'a gather for a call we do not know; hanging up');
        await send(res, carrier, account.connectionId!, '', HANG_UP);
        return;
      }
      const keys = requestKeys(req, 'gather', options.publicUrl() ?? '', fields, carrier.webhooks.idempotencyKey(signedHeaders(req)));
      const answer = await options.replays.once(callId, keys, () =>
        engine.gather(callId, { ...carrier.webhooks.gathered(fields), silence: req.query.silence === '1' }),
      );
      if (answer.repeated) {
        logger.warn({ callId }, 'a repeated gather (same idempotency token, or same signed request); answered as before, no turn added');
        repeat(res, carrier, account.connectionId!, callId, answer.actions);
        return;
      }
      await send(res, carrier, account.connectionId!, callId, answer.actions);
    } catch (error) {
      next(error);
    }
  });

  router.post('/:kind/:connectionId/reply', async (req, res, next) => {
    try {
      const signed = await guard.verified(req, res);
      if (!signed) return;
      const { account, carrier } = signed;
      const callId = await guard.callOf(req, account);
      if (!callId) {
        await send(res, carrier, account.connectionId!, '', HANG_UP);
        return;
      }
      // Each turn's reply is taken once: a repeat (a retry, a replay, with a new token or none) is answered what the first was and takes nothing.
      // A reply URL without its turn's id (TwiML sent before ids were given, to a call still live then) is answered as it was before.
      if (typeof req.query.reply !== 'string') {
        await send(res, carrier, account.connectionId!, callId, await engine.reply(callId));
        return;
      }
      const answer = await options.replays.once(
        callId,
        requestKeys(req, 'reply', options.publicUrl() ?? '', formFields(req.body), carrier.webhooks.idempotencyKey(signedHeaders(req))),
        () => engine.reply(callId),
      );
      if (answer.repeated) {
        logger.warn({ callId }, 'a repeated reply request; answered as before, nothing taken');
        repeat(res, carrier, account.connectionId!, callId, answer.actions);
        return;
      }
      await send(res, carrier, account.connectionId!, callId, answer.actions);
    } catch (error) {
      next(error);
    }
  });

  // A speech-to-speech call's stream ended: the caller hears an apology when our side failed the call (its provider dropped).
  router.post('/:kind/:connectionId/stream-ended', async (req, res, next) => {
    try {
      const signed = await guard.verified(req, res);
      if (!signed) return;
      const { account, carrier } = signed;
      const callId = await guard.callOf(req, account);
      const failed = callId ? await engine.failedOnOurSide(callId) : false;
      const actions: VoiceAction[] = failed ? [{ kind: 'say', text: WORDS.apology, voice: null }, ...HANG_UP] : HANG_UP;
      await send(res, carrier, account.connectionId!, callId ?? '', actions);
    } catch (error) {
      next(error);
    }
  });

  router.post('/:kind/:connectionId/inbound', async (req, res, next) => {
    try {
      const signed = await guard.verified(req, res);
      if (!signed) return;
      const { account, carrier } = signed;
      const fields = formFields(req.body);
      const answer = await options.inbound.answer(
        carrier.kind,
        account.connectionId!,
        carrier.webhooks.inbound(fields),
        requestKey(req, 'inbound', options.publicUrl() ?? '', fields, carrier.webhooks.idempotencyKey(signedHeaders(req))),
      );
      if (answer.repeated) repeat(res, carrier, account.connectionId!, answer.callId ?? '', answer.actions);
      else await send(res, carrier, account.connectionId!, answer.callId ?? '', answer.actions);
    } catch (error) {
      next(error);
    }
  });

  return router;
}
