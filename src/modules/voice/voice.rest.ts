import express, { type Router } from 'express';
import type { Logger } from 'pino';
import { formFields, type TwilioRequestGuard } from '../telephony/carrier-webhooks.rest.js';
import { renderTwiml } from './twiml.js';
import { WORDS, withPromptIds, type VoiceAction } from './voice-actions.js';
import type { VoiceEngine } from './voice-session.js';
import type { InboundCalls } from './inbound.js';
import { requestKey, type WebhookReplays } from './webhook-replays.js';

export interface VoiceWebhookOptions {
  guard: TwilioRequestGuard;
  engine: VoiceEngine;
  inbound: InboundCalls;
  replays: WebhookReplays;
  publicUrl: () => string | undefined;
  logger: Logger;
}

const HANG_UP: VoiceAction[] = [{ kind: 'hangup' }];

/**
 * The voice side of Twilio's webhooks, signed like the status and answer routes (403 and nothing
 * changed otherwise): `/gather` takes what the caller said or pressed, `/reply` speaks the agent's
 * answer, `/inbound` answers a call to one of the organization's numbers. A signed request that
 * repeats one already answered on the call (same I-Twilio-Idempotency-Token, or without one the
 * same signed URL and body) is answered as the first was, and adds no turn (`/gather`) and no call
 * or restart (`/inbound`). A stream in the TwiML sent gets its single-use nonce as it is sent.
 */
export function voiceWebhookRouter(options: VoiceWebhookOptions): Router {
  const { guard, engine, logger } = options;
  const router = express.Router();
  router.use(express.urlencoded({ extended: false, limit: '64kb', parameterLimit: 200 }));

  const render = (res: express.Response, connectionId: string, callId: string, actions: VoiceAction[]) =>
    res.status(200).type('text/xml').send(renderTwiml(actions, { publicUrl: options.publicUrl() ?? '', connectionId, callId }));
  const send = async (res: express.Response, connectionId: string, callId: string, actions: VoiceAction[]) =>
    render(res, connectionId, callId, callId ? await engine.armStreams(callId, actions) : actions);
  /** A repeat is answered as the first was, but a stream in it gets no new nonce: the first's stands, and the repeat's URL opens nothing. */
  const repeat = (res: express.Response, connectionId: string, callId: string, actions: VoiceAction[] | null) => render(res, connectionId, callId, actions ?? []);

  router.post('/twilio/:connectionId/gather', async (req, res, next) => {
    try {
      const account = await guard.verified(req, res);
      if (!account) return;
      const callId = await guard.callOf(req, account);
      const fields = formFields(req.body);
      if (!callId) {
        logger.warn({ callSid: fields.CallSid }, 'a gather for a call we do not know; hanging up');
        await send(res, account.connectionId!, '', HANG_UP);
        return;
      }
      const key = requestKey(req, 'gather', options.publicUrl() ?? '', fields);
      if (!(await options.replays.claim(callId, key))) {
        logger.warn({ callId }, 'a repeated gather (same idempotency token, or same signed request); answered as before, no turn added');
        repeat(res, account.connectionId!, callId, await options.replays.answered(callId, key));
        return;
      }
      let actions: VoiceAction[];
      try {
        actions = withPromptIds(await engine.gather(callId, { speech: fields.SpeechResult ?? null, digits: fields.Digits ?? null, silence: req.query.silence === '1' }));
      } catch (error) {
        await options.replays.release(callId, key);
        throw error;
      }
      await options.replays.keep(callId, key, actions);
      await send(res, account.connectionId!, callId, actions);
    } catch (error) {
      next(error);
    }
  });

  router.post('/twilio/:connectionId/reply', async (req, res, next) => {
    try {
      const account = await guard.verified(req, res);
      if (!account) return;
      const callId = await guard.callOf(req, account);
      await send(res, account.connectionId!, callId ?? '', callId ? await engine.reply(callId) : HANG_UP);
    } catch (error) {
      next(error);
    }
  });

  // A speech-to-speech call's stream ended: the caller hears an apology when our side failed the call (its provider dropped).
  router.post('/twilio/:connectionId/stream-ended', async (req, res, next) => {
    try {
      const account = await guard.verified(req, res);
      if (!account) return;
      const callId = await guard.callOf(req, account);
      const failed = callId ? await engine.failedOnOurSide(callId) : false;
      const actions: VoiceAction[] = failed ? [{ kind: 'say', text: WORDS.apology, voice: null }, ...HANG_UP] : HANG_UP;
      await send(res, account.connectionId!, callId ?? '', actions);
    } catch (error) {
      next(error);
    }
  });

  router.post('/twilio/:connectionId/inbound', async (req, res, next) => {
    try {
      const account = await guard.verified(req, res);
      if (!account) return;
      const fields = formFields(req.body);
      const answer = await options.inbound.answer(account.connectionId!, fields, requestKey(req, 'inbound', options.publicUrl() ?? '', fields));
      if (answer.repeated) repeat(res, account.connectionId!, answer.callId ?? '', answer.actions);
      else await send(res, account.connectionId!, answer.callId ?? '', answer.actions);
    } catch (error) {
      next(error);
    }
  });

  return router;
}
