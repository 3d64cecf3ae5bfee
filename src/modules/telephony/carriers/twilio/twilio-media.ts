import type { MediaEvent, MediaFraming } from '../media-link.js';
import { field, jsonFrame, text } from '../media-json.js';

// Twilio Media Streams' messages (twilio.com/docs/voice/media-streams/websocket-messages): each one
// names its `event`; `start` carries the call's sid and our custom parameters, `media` a base64
// μ-law frame, `mark` the name of a mark we sent once the audio before it was played, `dtmf` a key
// the caller pressed ({dtmf: {track: "inbound_track", digit}}, bidirectional streams only).

function parse(data: string): MediaEvent | null {
  const message = jsonFrame(data);
  if (!message) return null;
  switch (message.event) {
    case 'start': {
      const start = field(message, 'start');
      const callId = field(start, 'customParameters').callId;
      return {
        kind: 'start',
        streamId: text(message.streamSid) || text(start.streamSid),
        carrierCallId: text(start.callSid),
        callId: typeof callId === 'string' ? callId : null,
      };
    }
    case 'media': {
      const payload = text(field(message, 'media').payload);
      return payload ? { kind: 'audio', payload } : null;
    }
    case 'mark':
      return { kind: 'mark', name: text(field(message, 'mark').name) };
    case 'dtmf': {
      const dtmf = field(message, 'dtmf');
      // The caller's side is the inbound track; a key of any other track is not the caller's.
      if (dtmf.track !== undefined && dtmf.track !== 'inbound_track') return null;
      return { kind: 'dtmf', digit: text(dtmf.digit) };
    }
    case 'stop':
      return { kind: 'stop' };
    default:
      return null;
  }
}

export const twilioMedia: MediaFraming = {
  parse,
  writer: (streamSid) => ({
    audio: (payload) => JSON.stringify({ event: 'media', streamSid, media: { payload } }),
    clear: () => JSON.stringify({ event: 'clear', streamSid }),
    mark: (name) => JSON.stringify({ event: 'mark', streamSid, mark: { name } }),
  }),
};
