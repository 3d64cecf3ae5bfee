import express, { type Request, type Response, type Router } from 'express';
import type { Logger } from 'pino';
import { formBody, textBody } from '../../rest/body-parsers.js';
import { isUuid } from '../../db/base.entity.js';
import type { AnsweredBy, CarrierAccount } from './carrier.js';
import type { CarrierModule } from './carriers/carrier-module.js';
import { carrierModuleOf, type CarrierModules } from './carriers/index.js';
import type { CallTracker } from './call-tracker.js';
import { isFinalCallStatus } from './call-state.js';
import { CallStatus } from './telephony.enums.js';
import { vouchFor } from '../../platform/rate-limit.js';

export interface CarrierWebhookOptions {
  /** The carriers by kind: each route's `:kind` names one, whose webhooks check and read the request. */
  carriers: CarrierModules;
  /** A connection's account (its auth token opened), or null when there is no such connection. */
  account: (connectionId: string) => Promise<CarrierAccount | null>;
  tracker: CallTracker;
  /** PUBLIC_URL, read per request: what the carrier signed is this plus the request's path and query. */
  publicUrl: () => string | undefined;
  logger: Logger;
  /** The voice engine's call-control document for an answered call (its flow or agent, spoken), in the carrier's rendering. */
  answer: (carrier: CarrierModule, account: CarrierAccount, callId: string, answeredBy: AnsweredBy | null) => Promise<{ contentType: string; body: string }>;
  /** Told once a report ended a call (its conversation is closed). */
  onEnded?: (callId: string) => Promise<void>;
}

/** A request signed by the connection its path names, at the carrier its path names. */
export interface VerifiedRequest {
  account: CarrierAccount;
  carrier: CarrierModule;
}

export interface CarrierRequestGuard {
  /** The connection's account and carrier when the request is signed with its key, else null (and the 403 or 404 is sent). */
  verified(req: Request, res: Response): Promise<VerifiedRequest | null>;
  /** Our call id, when the request's callId names a call of this connection. */
  callOf(req: Request, account: CarrierAccount): Promise<string | null>;
}

/** A carrier's form body, parsed, with its text kept as it came (`rawBody`): Telnyx signs the bytes, not the fields. */
export function carrierFormBody(): express.RequestHandler {
  return formBody({
    extended: false,
    limit: '64kb',
    parameterLimit: 200,
    verify: (req, _res, buffer) => {
      (req as { rawBody?: string }).rawBody = buffer.toString('utf8');
    },
  });
}

/** The body's text as it came, for a signature over it. */
export function rawBodyOf(req: Request): string | undefined {
  return typeof req.body === 'string' ? req.body : (req as { rawBody?: string }).rawBody;
}

export function formFields(body: unknown): Record<string, string> {
  // Without a prototype: a field the form does not carry is undefined, whatever its name (`constructor`, `toString`).
  const fields: Record<string, string> = Object.create(null) as Record<string, string>;
  if (body && typeof body === 'object') {
    for (const [key, value] of Object.entries(body)) if (typeof value === 'string') fields[key] = value;
  }
  return fields;
}

/**
 * Carrier-facing routes, outside /api, at `/telephony/{kind}/{connectionId}/…`: the carrier posts
 * each call's progress to `/status` and asks `/answer` what to say once it is answered. Every
 * request must carry a valid signature as its carrier signs (Twilio: `X-Twilio-Signature` over
 * PUBLIC_URL + path + query and its form fields), made with the key of the connection the path
 * names, at the carrier the path names: otherwise 403 and nothing changes. A kind no carrier module
 * serves is 404. A report for a call we do not know is answered 200 (so the carrier stops
 * retrying) and logged once.
 */
export function carrierRequestGuard(options: Pick<CarrierWebhookOptions, 'carriers' | 'account' | 'tracker' | 'publicUrl' | 'logger'>): CarrierRequestGuard {
  const { logger, tracker } = options;
  /** The connection's account when the request is signed with its key, else null (and the 403 is sent). */
  async function verified(req: Request, res: Response): Promise<VerifiedRequest | null> {
    const carrier = carrierModuleOf(options.carriers, String(req.params.kind));
    if (!carrier) {
      res.status(404).type('text/plain').send('Not Found: no carrier of this kind');
      return null;
    }
    const connectionId = String(req.params.connectionId);
    const account = isUuid(connectionId) ? await options.account(connectionId) : null;
    const publicUrl = options.publicUrl();
    if (!account || (account.kind ?? carrier.kind) !== carrier.kind || !publicUrl || !signedBy(carrier, account, publicUrl, req)) {
      logger.warn(
        { path: req.path, connectionId, carrier: carrier.kind, publicUrl: Boolean(publicUrl) },
        'carrier webhook refused: no valid signature for this connection',
      );
      res.status(403).type('text/plain').send('Forbidden: the request is not signed with this connection’s key');
      return null;
    }
    // Signed with the connection's key: not a stranger's request, never counted on the anonymous limit.
    vouchFor(res);
    return { account, carrier };
  }

  /**
   * What the carrier signed covers PUBLIC_URL + the path + the raw query, exactly as they came: the
   * request target is not parsed. Carriers send their target in origin form (`/telephony/...`); any
   * other form (absolute `http://host/...`, `*`) is not signed, nor is anything the check throws on.
   */
  function signedBy(carrier: CarrierModule, account: CarrierAccount, publicUrl: string, req: Request): boolean {
    const target = req.originalUrl;
    if (!target.startsWith('/') || target.startsWith('//')) return false;
    // The body's text as it came (a carrier signs it so: Telnyx always, Twilio for a JSON body).
    const rawBody = rawBodyOf(req);
    return carrier.webhooks.verify(
      { url: `${publicUrl}${target}`, header: (name) => req.get(name), fields: formFields(req.body), ...(rawBody !== undefined ? { rawBody } : {}) },
      account,
    );
  }

  /** Our call id, when it names a call of this connection. */
  async function callOf(req: Request, account: CarrierAccount): Promise<string | null> {
    const callId = typeof req.query.callId === 'string' ? req.query.callId : '';
    if (!isUuid(callId)) {
      // An inbound call's reports come through the number's status callback, without our id: the carrier's call id names it.
      const carrierCallId = carrierModuleOf(options.carriers, String(req.params.kind))?.webhooks.carrierCallIdOf(formFields(req.body));
      if (callId || !carrierCallId || !account.connectionId) return null;
      return tracker.findInbound(account.connectionId, carrierCallId);
    }
    const call = await tracker.get(callId);
    return call && call.carrierConnectionId === account.connectionId ? callId : null;
  }

  return { verified, callOf };
}

export function carrierWebhookRouter(options: CarrierWebhookOptions): Router {
  const { logger, tracker } = options;
  const { verified, callOf } = carrierRequestGuard(options);
  const router = express.Router();
  router.use(carrierFormBody());
  router.use(textBody({ type: 'application/json', limit: '64kb' }));

  router.post('/:kind/:connectionId/status', async (req, res, next) => {
    try {
      const signed = await verified(req, res);
      if (!signed) return;
      const { account, carrier } = signed;
      const fields = formFields(req.body);
      const event = carrier.webhooks.status(fields);
      if (!event) {
        logger.warn({ carrierCallId: carrier.webhooks.carrierCallIdOf(fields) }, 'carrier status callback without a status we know; ignored');
        res.status(200).end();
        return;
      }
      const callId = await callOf(req, account);
      const result = callId ? await tracker.apply(callId, event) : 'unknown';
      if (result === 'unknown')
        logger.warn({ callSid: event.carrierCallId, query: req.query.callId }, 'carrier status callback for a call we do not know; nothing changed');
      res.status(200).end();
      if (result === 'applied' && callId && isFinalCallStatus(event.status)) await options.onEnded?.(callId);
    } catch (error) {
      next(error);
    }
  });

  router.post('/:kind/:connectionId/answer', async (req, res, next) => {
    try {
      const signed = await verified(req, res);
      if (!signed) return;
      const { account, carrier } = signed;
      const fields = formFields(req.body);
      const callId = await callOf(req, account);
      if (callId) {
        // The carrier asks this once the call is answered (Twilio: CallStatus in-progress): that is recorded first, as
        // its status callback would be, so the call is in progress before a media stream it opens arrives.
        const event = carrier.webhooks.status(fields);
        if (event?.status === CallStatus.in_progress && event.carrierCallId) await tracker.apply(callId, event);
        const answer = await options.answer(carrier, account, callId, carrier.webhooks.answeredBy(fields));
        res.status(200).type(answer.contentType).send(answer.body);
        return;
      }
      logger.warn({ carrierCallId: carrier.webhooks.carrierCallIdOf(fields) }, 'the carrier asked what to say on a call we do not know; hanging up');
      const hangUp = carrier.callControl.render([{ kind: 'hangup' }], {
        publicUrl: options.publicUrl() ?? '',
        connectionId: account.connectionId ?? '',
        callId: '',
      });
      res.status(200).type(hangUp.contentType).send(hangUp.body);
    } catch (error) {
      next(error);
    }
  });

  return router;
}
