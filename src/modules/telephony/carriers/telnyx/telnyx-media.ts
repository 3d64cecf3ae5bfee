import type { MediaEvent, MediaFraming } from '../media-link.js';
import { field, jsonFrame, text } from '../media-json.js';

// Telnyx Media Streaming's frames (developers.telnyx.com, api-reference/websockets/
// stream-call-media-over-websocket, the AsyncAPI of the socket; read 2026-12-02): `connected`, then
// `start` {stream_id, start: {call_control_id, custom_parameters, media_format}}, `media`
// {media: {track, chunk, timestamp, payload}}, `dtmf` {dtmf: {digit}}, `mark` {mark: {name}},
// `error`, `stop`. With bidirectionalMode="rtp" the application sends `media` {media: {payload}},
// `mark` {mark: {name}} and `clear`. A TeXML call's CallSid is its call_control_id.

function parse(data: string): MediaEvent | null {
  const message = jsonFrame(data);
  if (!message) return null;
  switch (message.event) {
    case 'start': {
      const start = field(message, 'start');
      const callId = field(start, 'custom_parameters').callId;
      return {
        kind: 'start',
        streamId: text(message.stream_id),
        carrierCallId: text(start.call_control_id),
        callId: typeof callId === 'string' ? callId : null,
      };
    }
    case 'media': {
      const media = field(message, 'media');
      // Only the caller's side: a stream of both tracks also carries what we sent.
      if (media.track !== undefined && media.track !== 'inbound') return null;
      const payload = text(media.payload);
      return payload ? { kind: 'audio', payload } : null;
    }
    case 'mark':
      return { kind: 'mark', name: text(field(message, 'mark').name) };
    case 'dtmf':
      return { kind: 'dtmf', digit: text(field(message, 'dtmf').digit) };
    case 'stop':
      return { kind: 'stop' };
    default:
      return null;
  }
}

/** "RTP media chunks sent back to Telnyx can contain 20 milliseconds to 30 seconds of audio": 160 bytes of PCMU at least. */
const MIN_CHUNK_BYTES = 160;
/** μ-law silence (the code of zero amplitude). */
const ULAW_SILENCE = 0xff;

/**
 * A chunk shorter than Telnyx takes (a synthesizer's last few bytes of a sentence, an sts delta) is
 * padded with silence to 20 ms: at most 20 ms more of quiet, where a shorter chunk is not played.
 */
function atLeastOneFrame(payload: string): string {
  const audio = Buffer.from(payload, 'base64');
  if (audio.length >= MIN_CHUNK_BYTES) return payload;
  return Buffer.concat([audio, Buffer.alloc(MIN_CHUNK_BYTES - audio.length, ULAW_SILENCE)]).toString('base64');
}

export const telnyxMedia: MediaFraming = {
  parse,
  writer: () => ({
    audio: (payload) => JSON.stringify({ event: 'media', media: { payload: atLeastOneFrame(payload) } }),
    clear: () => JSON.stringify({ event: 'clear' }),
    mark: (name) => JSON.stringify({ event: 'mark', mark: { name } }),
  }),
};
