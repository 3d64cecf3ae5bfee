import { withPromptIds, type VoiceAction } from '../../../voice/voice-actions.js';
import type { CallControlContext } from '../carrier-module.js';
import { callStreamUrl } from '../stream-url.js';
import { twilioVoice } from '../twilio/twiml.js';

// TeXML, Telnyx's TwiML-compatible markup (developers.telnyx.com/docs/voice/programmable-voice/
// texml-verbs, read 2026-12-02): the same document per step of a call as Twilio's, so flows,
// gathers and replies keep their routes. Written here rather than with Twilio's builder: the two
// differ where it matters (<Stream bidirectionalMode="rtp">, no <Connect action>). A transfer's <Dial action>
// and a warm transfer's <Conference> are TeXML's as the TwiML compatibility page lists them
// (docs/voice/programmable-voice/texml-twiml-compatibility, read 2026-12-03: <Dial>, <Number>, <Sip>, <Conference>).

const escape = (value: string) => value.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&apos;');
const attributes = (values: Record<string, string | number>) =>
  Object.entries(values)
    .map(([name, value]) => ` ${name}="${escape(String(value))}"`)
    .join('');

/** The TeXML document of a step of the call. */
export function renderTexml(actions: VoiceAction[], context: CallControlContext): string {
  const base = `${context.publicUrl.replace(/\/+$/, '')}/telephony/telnyx/${context.connectionId}`;
  const query = `callId=${encodeURIComponent(context.callId)}`;
  const verbs: string[] = [];
  const record = actions.find((action) => action.kind === 'record');
  // <Start><Recording> (developers.telnyx.com texml-verbs/recording, read 2026-12-02): the call from here on, in WAV (its default is MP3).
  const startRecording =
    record?.kind === 'record'
      ? `<Start><Recording${attributes({
          channels: record.channels,
          format: 'wav',
          recordingStatusCallback: `${base}/recording?${query}`,
          recordingStatusCallbackMethod: 'POST',
          recordingStatusCallbackEvent: 'in-progress completed absent',
        })}/></Start>`
      : null;
  const stream = actions.find((action) => action.kind === 'stream');
  if (stream) {
    // A stream without its nonce (never armed) renders a URL the media route refuses.
    const url = callStreamUrl(context.publicUrl, context.connectionId, context.callId, stream.nonce ?? '', 'telnyx');
    if (startRecording) verbs.push(startRecording);
    verbs.push(
      `<Connect><Stream${attributes({ url, track: 'inbound_track', bidirectionalMode: 'rtp', bidirectionalCodec: 'PCMU' })}><Parameter${attributes({ name: 'callId', value: context.callId })}/></Stream></Connect>`,
      // TeXML goes on past <Connect> once the stream ends: ask what next, as Twilio's <Connect action> does.
      `<Redirect method="POST">${escape(`${base}/stream-ended?${query}`)}</Redirect>`,
    );
    return document(verbs);
  }
  for (const action of withPromptIds(actions)) {
    switch (action.kind) {
      case 'say':
        verbs.push(`<Say${attributes({ voice: twilioVoice(action.voice) })}>${escape(action.text)}</Say>`);
        break;
      case 'gather': {
        const prompt = action.promptId!;
        const say = action.prompt ? `<Say${attributes({ voice: twilioVoice(action.voice) })}>${escape(action.prompt)}</Say>` : '';
        verbs.push(
          `<Gather${attributes({ input: 'speech dtmf', action: `${base}/gather?${query}&prompt=${prompt}`, method: 'POST', timeout: 5 })}>${say}</Gather>`,
        );
        verbs.push(`<Redirect method="POST">${escape(`${base}/gather?${query}&prompt=${prompt}&silence=1`)}</Redirect>`);
        break;
      }
      case 'redirect':
        verbs.push(`<Redirect method="POST">${escape(`${base}/reply?${query}&reply=${action.replyId!}`)}</Redirect>`);
        break;
      case 'dial': {
        if (!action.reportTo) {
          verbs.push(`<Dial>${escape(action.number)}</Dial>`);
          break;
        }
        // A transfer's dial reports how it ended to its action (docs/voice/programmable-voice/texml-verbs/dial, read
        // 2026-12-03: `action`, `method`; the <Number> and <Sip> nouns): a sip: URI is a <Sip>, a number a <Number>.
        const noun = /^sips?:/i.test(action.number) ? 'Sip' : 'Number';
        verbs.push(`<Dial${attributes({ action: `${base}/${action.reportTo}?${query}`, method: 'POST' })}><${noun}>${escape(action.number)}</${noun}></Dial>`);
        break;
      }
      case 'conference': {
        // A warm transfer's room (texml-verbs/conference, read 2026-12-03): the caller, not starting it, waits with
        // background music until the person, who starts it, joins; endConferenceOnExit on both, so either leaving ends
        // it. The caller's <Dial> reports to /dial as a cold transfer's does; the person's has no action (its own leg's
        // status callback tells its end). beep="false": the page names `beep` (notification beeps on join and leave); "false" is
        // TwiML's word for none, which the compatibility page implies TeXML takes.
        const room = `<Conference${attributes({ startConferenceOnEnter: String(action.role === 'person'), endConferenceOnExit: 'true', beep: 'false' })}>${escape(action.room)}</Conference>`;
        verbs.push(
          action.role === 'caller' ? `<Dial${attributes({ action: `${base}/dial?${query}`, method: 'POST' })}>${room}</Dial>` : `<Dial>${room}</Dial>`,
        );
        break;
      }
      case 'digits':
        // <Play digits> (texml-verbs/play, read 2026-12-04): "DTMF tones to play ... 0-9, *, #, and w (for a 0.5 second pause)".
        verbs.push(`<Play${attributes({ digits: action.digits })}/>`);
        break;
      case 'hangup':
        verbs.push('<Hangup/>');
        break;
      case 'record':
        if (startRecording) verbs.push(startRecording);
        break;
      default:
        break;
    }
  }
  return document(verbs);
}

function document(verbs: string[]): string {
  return `<?xml version="1.0" encoding="UTF-8"?><Response>${verbs.join('')}</Response>`;
}
