import { own } from '../../../../common/own.js';
import type { AnsweredBy } from '../../carrier.js';
import type { CarrierModule } from '../carrier-module.js';
import { twilioMedia } from './twilio-media.js';
import { twimlDialOutcome, twimlGathered, twimlInbound, twimlLegOutcome } from './twilio-form.js';
import { renderTwiml } from './twiml.js';
import { machineVerdictOfForm } from '../../machine-verdict.js';
import type { TwilioCarrier } from './twilio.carrier.js';
import { twilioCredentials } from './twilio-credentials.js';

const ANSWERED_BY: Record<string, AnsweredBy> = {
  human: 'human',
  machine_start: 'machine',
  machine_end_beep: 'machine',
  machine_end_silence: 'machine',
  machine_end_other: 'machine',
  fax: 'machine',
  unknown: 'unknown',
};

/** Twilio Programmable Voice: REST through the official SDK, HMAC-signed form webhooks, TwiML, Media Streams. */
export function twilioModule(adapter: TwilioCarrier): CarrierModule {
  return {
    kind: 'twilio',
    label: 'Twilio Programmable Voice',
    credentials: twilioCredentials,
    adapter,
    webhooks: {
      verify(request, account) {
        try {
          const settings = request.header('x-twilio-webhooks-signature-settings');
          return adapter.checkSignature(account, request.url, request.fields, request.header('x-twilio-signature'), {
            ...(settings ? { settings } : {}),
            // A JSON body is signed through its SHA-256 in the URL (bodySHA256); a form, by its fields.
            ...(request.rawBody !== undefined && /json/i.test(request.header('content-type') ?? '') ? { rawBody: request.rawBody } : {}),
          });
        } catch {
          return false;
        }
      },
      status: (fields) => adapter.parseStatusCallback(fields),
      gathered: twimlGathered,
      inbound: twimlInbound,
      carrierCallIdOf: (fields) => fields.CallSid ?? null,
      answeredBy: (fields) => own(ANSWERED_BY, fields.AnsweredBy ?? '') ?? null,
      machineVerdict: machineVerdictOfForm,
      dialOutcome: twimlDialOutcome,
      legOutcome: twimlLegOutcome,
      // The same on each retry of one request; not signed, so a key beside what was signed, never instead of it.
      idempotencyKey: (request) => request.header('i-twilio-idempotency-token') || null,
    },
    // <Play digits> (twilio.com/docs/voice/twiml/play, read 2026-12-04): DTMF tones, `w` a half-second pause.
    callControl: { render: (actions, context) => ({ contentType: 'text/xml', body: renderTwiml(actions, context) }), playsDigits: true },
    media: twilioMedia,
  };
}
