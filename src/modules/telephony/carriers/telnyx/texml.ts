import { withPromptIds, type VoiceAction } from '../../../voice/voice-actions.js';
import type { CallControlContext } from '../carrier-module.js';
import { callStreamUrl } from '../stream-url.js';
import { twilioVoice } from '../twilio/twiml.js';

// TeXML, Telnyx's TwiML-compatible markup (developers.telnyx.com/docs/voice/programmable-voice/
// texml-verbs, read 2026-12-02): the same document per step of a call as Twilio's, so flows,
// gathers and replies keep their routes. Written here rather than with Twilio's builder: the two
// differ where it matters (<Stream bidirectionalMode="rtp">, no <Connect action>).

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
      case 'dial':
        verbs.push(`<Dial>${escape(action.number)}</Dial>`);
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
