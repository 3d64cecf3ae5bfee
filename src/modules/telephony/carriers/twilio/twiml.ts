// TwiML's builder alone, on first use (carriers/twilio/voice-response.ts): the whole SDK (its REST client, axios) loads only when a call is placed.
import type VoiceResponse from 'twilio/lib/twiml/VoiceResponse.js';
import { newVoiceResponse } from './voice-response.js';
import { renderStreamTwiml } from './stream-twiml.js';
import { withPromptIds, type VoiceAction } from '../../../voice/voice-actions.js';

/** Twilio's own voices pass as they are; anything else (e.g. a provider's voice name) speaks in the default. */
const TWILIO_VOICE = /^(?:man|woman|alice|(?:Polly|Google)\.[A-Za-z0-9_-]+)$/;
export const DEFAULT_TWILIO_VOICE = 'Polly.Joanna';

/** The Twilio `<Say voice>` for an agent's voiceConfig.voiceId. */
export function twilioVoice(voiceId: string | null | undefined): string {
  return voiceId && TWILIO_VOICE.test(voiceId) ? voiceId : DEFAULT_TWILIO_VOICE;
}

export interface TwimlContext {
  publicUrl: string;
  connectionId: string;
  callId: string;
}

/** The TwiML document of a step of the call. */
export function renderTwiml(actions: VoiceAction[], context: TwimlContext): string {
  const base = `${context.publicUrl}/telephony/twilio/${context.connectionId}`;
  const query = `callId=${encodeURIComponent(context.callId)}`;
  const record = actions.find((action) => action.kind === 'record');
  const startRecording = (response: VoiceResponse) => {
    if (record?.kind !== 'record') return;
    response.start().recording({
      channels: record.channels,
      recordingStatusCallback: `${base}/recording?${query}`,
      recordingStatusCallbackMethod: 'POST',
      recordingStatusCallbackEvent: ['in-progress', 'completed', 'absent'],
    });
  };
  const stream = actions.find((action) => action.kind === 'stream');
  // A stream without its nonce (never armed) renders a URL the media route refuses.
  if (stream) return renderStreamTwiml({ ...context, nonce: stream.nonce ?? '' }, startRecording);
  const response = newVoiceResponse();
  for (const action of withPromptIds(actions)) {
    switch (action.kind) {
      case 'record':
        startRecording(response);
        break;
      case 'say':
        response.say({ voice: twilioVoice(action.voice) as never }, action.text);
        break;
      case 'gather': {
        // Each prompt's requests get URLs of their own (`prompt`, signed with the rest): without Twilio's
        // I-Twilio-Idempotency-Token, a request is known as a repeat by its signed URL and form, and two
        // silences at two prompts must not look like one request sent twice (webhook-replays.ts).
        const prompt = action.promptId!;
        const gather = response.gather({
          input: ['speech', 'dtmf'],
          action: `${base}/gather?${query}&prompt=${prompt}`,
          method: 'POST',
          timeout: 5,
          speechTimeout: 'auto',
        });
        if (action.prompt) gather.say({ voice: twilioVoice(action.voice) as never }, action.prompt);
        // Twilio goes on past a Gather that heard nothing: tell the gather route so (it reprompts once).
        response.redirect({ method: 'POST' }, `${base}/gather?${query}&prompt=${prompt}&silence=1`);
        break;
      }
      case 'redirect':
        // Each turn's reply request has a URL of its own, as each prompt's gathers do.
        response.redirect({ method: 'POST' }, `${base}/reply?${query}&reply=${action.replyId!}`);
        break;
      case 'dial': {
        if (!action.reportTo) {
          response.dial(action.number);
          break;
        }
        // A transfer's dial reports its outcome (DialCallStatus) to its action; a sip: URI is a <Sip> noun, a number a <Number>.
        const dial = response.dial({ action: `${base}/${action.reportTo}?${query}`, method: 'POST' });
        if (/^sips?:/i.test(action.number)) dial.sip(action.number);
        else dial.number(action.number);
        break;
      }
      case 'conference': {
        // The caller waits (Twilio's hold music) until the person, who starts the room, joins; either leaving ends it.
        const dial = action.role === 'caller' ? response.dial({ action: `${base}/dial?${query}`, method: 'POST' }) : response.dial();
        dial.conference({ startConferenceOnEnter: action.role === 'person', endConferenceOnExit: true, beep: 'false' as never }, action.room);
        break;
      }
      case 'digits':
        response.play({ digits: action.digits });
        break;
      case 'hangup':
        response.hangup();
        break;
      default:
        break;
    }
  }
  return response.toString();
}
