import type { CallControl, CarrierWebhooks } from '../carrier-module.js';
import { telnyxAnsweredByOf, type TelnyxCarrier } from './telnyx.carrier.js';
import { telnyxPublicKey, telnyxSigned } from './telnyx-signature.js';
import { renderTexml } from './texml.js';
import { machineVerdictOfForm } from '../../machine-verdict.js';
import { twimlDialOutcome, twimlGathered, twimlInbound, twimlLegOutcome } from '../twilio/twilio-form.js';

/**
 * Telnyx's TeXML webhooks as a carrier module reads them: signed by the account's Ed25519 key over
 * `telnyx-timestamp|raw body` (a request without its raw body, a media upgrade, is never signed
 * so), form fields in TeXML's (Twilio's) words. TeXML sends no idempotency key: a repeat is known
 * by what was signed (webhook-replays.ts).
 */
export function telnyxWebhooks(adapter: TelnyxCarrier, now: () => number = () => Math.floor(Date.now() / 1000)): CarrierWebhooks {
  return {
    verify(request, account) {
      if (request.rawBody === undefined || !account.publicKey) return false;
      const signature = { timestamp: request.header('telnyx-timestamp'), signature: request.header('telnyx-signature-ed25519') };
      return telnyxSigned(telnyxPublicKey(account.publicKey), signature, request.rawBody, now());
    },
    status: (fields) => adapter.parseStatusCallback(fields),
    // TeXML's <Gather> and its call requests carry TwiML's words.
    gathered: twimlGathered,
    inbound: twimlInbound,
    carrierCallIdOf: (fields) => fields.CallSid ?? null,
    answeredBy: (fields) => telnyxAnsweredByOf(fields.AnsweredBy),
    // TexmlCallAmdWebhook (developers.telnyx.com api-reference/callbacks/texml-call-amd): Twilio's fields and AnsweredBy values.
    machineVerdict: machineVerdictOfForm,
    // A transfer's <Dial action> request and a warm transfer leg's final status callback, in TwiML's words. TexmlCallCompletedWebhook
    // (api-reference/callbacks/texml-call-completed, read 2026-12-03) publishes DialCallStatus, DialCallDuration and DialCallSid beside
    // CallSid, CallStatus and CallDuration (the hangup verb's page: CallStatus completed, no-answer, busy, failed or canceled); the
    // <Dial> page (texml-verbs/dial) does not list the action request's fields: TeXML's TwiML compatibility implies Twilio's, read so.
    dialOutcome: twimlDialOutcome,
    legOutcome: twimlLegOutcome,
    idempotencyKey: () => null,
  };
}

export const texmlCallControl: CallControl = {
  render: (actions, context) => ({ contentType: 'text/xml', body: renderTexml(actions, context) }),
  // <Play digits> (developers.telnyx.com texml-verbs/play, read 2026-12-04).
  playsDigits: true,
};
