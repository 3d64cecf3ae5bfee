import express, { type Request, type Response, type Router } from 'express';
import type { Logger } from 'pino';
import { newVoiceResponse } from './voice-response.js';
import { isUuid } from '../../db/base.entity.js';
import type { AnsweredBy, CarrierAccount, CarrierAdapter } from './carrier.js';
import type { CallTracker } from './call-tracker.js';
import { isFinalCallStatus } from './call-state.js';
import { CallStatus } from './telephony.enums.js';

export interface CarrierWebhookOptions {
  /** The Twilio adapter: signatures and status callbacks in Twilio's words. */
  twilio: CarrierAdapter;
  /** A connection's account (its auth token opened), or null when there is no such connection. */
  account: (connectionId: string) => Promise<CarrierAccount | null>;
  tracker: CallTracker;
  /** PUBLIC_URL, read per request: what the carrier signed is this plus the request's path and query. */
  publicUrl: () => string | undefined;
  logger: Logger;
  /** The voice engine's TwiML for an answered call (its flow or agent, spoken); without it, the flow's words as a plan. */
  answerTwiml: (account: CarrierAccount, callId: string, answeredBy: AnsweredBy | null) => Promise<string>;
  /** Told once a report ended a call (its conversation is closed). */
  onEnded?: (callId: string) => Promise<void>;
}

export interface TwilioRequestGuard {
  /** The connection's account when the request is signed with its token, else null (and the 403 is sent). */
  verified(req: Request, res: Response): Promise<CarrierAccount | null>;
  /** Our call id, when the request's callId names a call of this connection. */
  callOf(req: Request, account: CarrierAccount): Promise<string | null>;
}

const TWILIO_ANSWERED_BY: Record<string, AnsweredBy> = {
  human: 'human',
  machine_start: 'machine',
  machine_end_beep: 'machine',
  machine_end_silence: 'machine',
  machine_end_other: 'machine',
  fax: 'machine',
  unknown: 'unknown',
};

export function formFields(body: unknown): Record<string, string> {
  const fields: Record<string, string> = {};
  if (body && typeof body === 'object') {
    for (const [key, value] of Object.entries(body)) if (typeof value === 'string') fields[key] = value;
  }
  return fields;
}

/**
 * Carrier-facing routes, outside /api: Twilio posts each call's progress to `/status` and asks
 * `/answer` what to say once it is answered. Every request must carry a valid
 * `X-Twilio-Signature` over PUBLIC_URL + path + query and its form fields, made with the auth
 * token of the connection the path names: otherwise 403 and nothing changes. A report for a call
 * we do not know is answered 200 (so the carrier stops retrying) and logged once.
 */
export function twilioRequestGuard(options: Pick<CarrierWebhookOptions, 'twilio' | 'account' | 'tracker' | 'publicUrl' | 'logger'>): TwilioRequestGuard {
  const { logger, tracker } = options;
  /** The connection's account when the request is signed with its token, else null (and the 403 is sent). */
  async function verified(req: Request, res: Response): Promise<CarrierAccount | null> {
    const connectionId = String(req.params.connectionId);
    const account = isUuid(connectionId) ? await options.account(connectionId) : null;
    const signature = req.get('x-twilio-signature');
    const publicUrl = options.publicUrl();
    if (!account || !publicUrl || !signedBy(account, publicUrl, req, signature)) {
      logger.warn({ path: req.path, connectionId, signed: Boolean(signature), publicUrl: Boolean(publicUrl) }, 'carrier webhook refused: no valid signature for this connection');
      res.status(403).type('text/plain').send('Forbidden: the request is not signed with this connection’s auth token');
      return null;
    }
    return account;
  }

  /**
   * What Twilio signed is PUBLIC_URL + the path + the raw query, exactly as they came: the request
   * target is not parsed. Twilio sends its target in origin form (`/telephony/...`); any other form
   * (absolute `http://host/...`, `*`) is not signed, nor is anything the check throws on.
   */
  function signedBy(account: CarrierAccount, publicUrl: string, req: Request, signature: string | undefined): boolean {
    const target = req.originalUrl;
    if (!target.startsWith('/') || target.startsWith('//')) return false;
    try {
      return options.twilio.checkSignature(account, `${publicUrl}${target}`, formFields(req.body), signature);
    } catch {
      return false;
    }
  }

  /** Our call id, when it names a call of this connection. */
  async function callOf(req: Request, account: CarrierAccount): Promise<string | null> {
    const callId = typeof req.query.callId === 'string' ? req.query.callId : '';
    if (!isUuid(callId)) {
      // An inbound call's reports come through the number's status callback, without our id: its CallSid names it.
      const callSid = formFields(req.body).CallSid;
      if (callId || !callSid || !account.connectionId) return null;
      return tracker.findInbound(account.connectionId, callSid);
    }
    const call = await tracker.get(callId);
    return call && call.carrierConnectionId === account.connectionId ? callId : null;
  }

  return { verified, callOf };
}

/** Twilio's AnsweredBy in the state machine's words. */
export function answeredByOf(fields: Record<string, string>): AnsweredBy | null {
  return TWILIO_ANSWERED_BY[fields.AnsweredBy ?? ''] ?? null;
}

export function carrierWebhookRouter(options: CarrierWebhookOptions): Router {
  const { logger, tracker } = options;
  const { verified, callOf } = twilioRequestGuard(options);
  const router = express.Router();
  router.use(express.urlencoded({ extended: false, limit: '64kb', parameterLimit: 200 }));

  router.post('/twilio/:connectionId/status', async (req, res, next) => {
    try {
      const account = await verified(req, res);
      if (!account) return;
      const fields = formFields(req.body);
      const event = options.twilio.parseStatusCallback(fields);
      if (!event) {
        logger.warn({ callSid: fields.CallSid, callStatus: fields.CallStatus }, 'carrier status callback without a status we know; ignored');
        res.status(200).end();
        return;
      }
      const callId = await callOf(req, account);
      const result = callId ? await tracker.apply(callId, event) : 'unknown';
      if (result === 'unknown') logger.warn({ callSid: event.carrierCallId, query: req.query.callId }, 'carrier status callback for a call we do not know; nothing changed');
      res.status(200).end();
      if (result === 'applied' && callId && isFinalCallStatus(event.status)) await options.onEnded?.(callId);
    } catch (error) {
      next(error);
    }
  });

  router.post('/twilio/:connectionId/answer', async (req, res, next) => {
    try {
      const account = await verified(req, res);
      if (!account) return;
      const fields = formFields(req.body);
      const callId = await callOf(req, account);
      if (callId) {
        // Twilio asks this once the call is answered (CallStatus in-progress): that is recorded first, as
        // its status callback would be, so the call is in progress before a media stream it opens arrives.
        const event = options.twilio.parseStatusCallback(fields);
        if (event?.status === CallStatus.in_progress && event.carrierCallId) await tracker.apply(callId, event);
        res.status(200).type('text/xml').send(await options.answerTwiml(account, callId, answeredByOf(fields)));
        return;
      }
      logger.warn({ callSid: fields.CallSid }, 'the carrier asked what to say on a call we do not know; hanging up');
      res.status(200).type('text/xml').send(newVoiceResponse().hangup().toString());
    } catch (error) {
      next(error);
    }
  });

  return router;
}
