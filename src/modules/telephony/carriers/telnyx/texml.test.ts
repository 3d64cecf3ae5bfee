import { telnyxMedia } from './telnyx-media.js';
import { renderTexml } from './texml.js';

// TeXML and Telnyx Media Streaming frames (developers.telnyx.com: docs/voice/programmable-voice/
// texml-verbs, api-reference/websockets/stream-call-media-over-websocket, read 2026-12-02).

const context = { publicUrl: 'https://gw.example', connectionId: 'c1', callId: 'call-1' };

describe('TeXML', () => {
  it('renders a flow step: what is said (escaped), the gather with its own prompt URLs, and the silence redirect', () => {
    const texml = renderTexml(
      [
        { kind: 'say', text: 'Fish & chips <today>', voice: null },
        { kind: 'gather', prompt: 'Which day?', voice: null, promptId: 'p1' },
      ],
      context,
    );
    expect(texml).toBe(
      '<?xml version="1.0" encoding="UTF-8"?><Response>' +
        '<Say voice="Polly.Joanna">Fish &amp; chips &lt;today&gt;</Say>' +
        '<Gather input="speech dtmf" action="https://gw.example/telephony/telnyx/c1/gather?callId=call-1&amp;prompt=p1" method="POST" timeout="5"><Say voice="Polly.Joanna">Which day?</Say></Gather>' +
        '<Redirect method="POST">https://gw.example/telephony/telnyx/c1/gather?callId=call-1&amp;prompt=p1&amp;silence=1</Redirect>' +
        '</Response>',
    );
  });

  it('presses a batch call’s keys with <Play digits> (texml-verbs/play: 0-9, *, # and w) after what is said', () => {
    const texml = renderTexml(
      [
        { kind: 'say', text: 'Pressing two.', voice: null },
        { kind: 'digits', digits: '2w#' },
      ],
      context,
    );
    expect(texml).toBe('<?xml version="1.0" encoding="UTF-8"?><Response><Say voice="Polly.Joanna">Pressing two.</Say><Play digits="2w#"/></Response>');
  });

  it('starts a recording after consent with <Start><Recording>, in WAV, reporting to the call’s recording route; before a stream too', () => {
    const start =
      '<Start><Recording channels="dual" format="wav" recordingStatusCallback="https://gw.example/telephony/telnyx/c1/recording?callId=call-1" recordingStatusCallbackMethod="POST" recordingStatusCallbackEvent="in-progress completed absent"/></Start>';
    expect(
      renderTexml(
        [
          { kind: 'record', channels: 'dual' },
          { kind: 'say', text: 'Thanks.', voice: null },
        ],
        context,
      ),
    ).toContain(`<Response>${start}<Say`);
    expect(
      renderTexml(
        [
          { kind: 'record', channels: 'dual' },
          { kind: 'stream', nonce: 'n' },
        ],
        context,
      ),
    ).toContain(`<Response>${start}<Connect>`);
    expect(renderTexml([{ kind: 'say', text: 'Hello.', voice: null }], context)).not.toContain('Recording');
  });

  it('connects a stream bidirectionally to the call’s own media URL, naming the call, then asks what next', () => {
    const texml = renderTexml([{ kind: 'stream', nonce: 'n0nce' }], context);
    expect(texml).toContain(
      '<Connect><Stream url="wss://gw.example/telephony/telnyx/c1/media/call-1/n0nce" track="inbound_track" bidirectionalMode="rtp" bidirectionalCodec="PCMU"><Parameter name="callId" value="call-1"/></Stream></Connect>',
    );
    expect(texml).toContain('<Redirect method="POST">https://gw.example/telephony/telnyx/c1/stream-ended?callId=call-1</Redirect>');
  });

  it('transfers and hangs up', () => {
    expect(renderTexml([{ kind: 'dial', number: '+15550001111' }, { kind: 'hangup' }], context)).toBe(
      '<?xml version="1.0" encoding="UTF-8"?><Response><Dial>+15550001111</Dial><Hangup/></Response>',
    );
  });

  it('a transfer’s dial reports to its action: a number as <Number>, a sip: URI as <Sip>, escaped', () => {
    const action = 'action="https://gw.example/telephony/telnyx/c1/dial?callId=call-1" method="POST"';
    expect(renderTexml([{ kind: 'dial', number: '+15550001111', reportTo: 'dial' }], context)).toBe(
      `<?xml version="1.0" encoding="UTF-8"?><Response><Dial ${action}><Number>+15550001111</Number></Dial></Response>`,
    );
    expect(renderTexml([{ kind: 'dial', number: 'sip:front&back@pbx.example.com', reportTo: 'dial' }], context)).toContain(
      `<Dial ${action}><Sip>sip:front&amp;back@pbx.example.com</Sip></Dial>`,
    );
  });

  it('a warm transfer’s room: the caller waits (reporting to /dial), the person starts it; either leaving ends it, no beep', () => {
    expect(renderTexml([{ kind: 'conference', room: 'transfer-call-1', role: 'caller' }], context)).toBe(
      '<?xml version="1.0" encoding="UTF-8"?><Response>' +
        '<Dial action="https://gw.example/telephony/telnyx/c1/dial?callId=call-1" method="POST">' +
        '<Conference startConferenceOnEnter="false" endConferenceOnExit="true" beep="false">transfer-call-1</Conference></Dial></Response>',
    );
    expect(
      renderTexml(
        [
          { kind: 'say', text: 'A caller for Sales.', voice: null },
          { kind: 'conference', room: 'transfer-call-1', role: 'person' },
        ],
        context,
      ),
    ).toBe(
      '<?xml version="1.0" encoding="UTF-8"?><Response><Say voice="Polly.Joanna">A caller for Sales.</Say>' +
        '<Dial><Conference startConferenceOnEnter="true" endConferenceOnExit="true" beep="false">transfer-call-1</Conference></Dial></Response>',
    );
  });
});

describe('Telnyx media frames', () => {
  it('reads start (stream id, call control id, our call id), the inbound track’s audio, keys, marks and stop', () => {
    const start = {
      event: 'start',
      sequence_number: '1',
      stream_id: 'S1',
      start: { call_control_id: 'v3:abc', custom_parameters: { callId: 'call-1' }, media_format: { encoding: 'PCMU', sample_rate: 8000, channels: 1 } },
    };
    expect(telnyxMedia.parse(JSON.stringify(start))).toEqual({ kind: 'start', streamId: 'S1', carrierCallId: 'v3:abc', callId: 'call-1' });
    expect(
      telnyxMedia.parse(JSON.stringify({ event: 'media', stream_id: 'S1', media: { track: 'inbound', chunk: '2', timestamp: '5', payload: 'AAA=' } })),
    ).toEqual({ kind: 'audio', payload: 'AAA=' });
    // Our own audio echoed on a both-tracks stream is not the caller's.
    expect(telnyxMedia.parse(JSON.stringify({ event: 'media', media: { track: 'outbound', payload: 'AAA=' } }))).toBeNull();
    expect(telnyxMedia.parse(JSON.stringify({ event: 'dtmf', dtmf: { digit: '7' } }))).toEqual({ kind: 'dtmf', digit: '7' });
    expect(telnyxMedia.parse(JSON.stringify({ event: 'mark', mark: { name: 'r1:done' } }))).toEqual({ kind: 'mark', name: 'r1:done' });
    expect(telnyxMedia.parse(JSON.stringify({ event: 'stop' }))).toEqual({ kind: 'stop' });
    expect(telnyxMedia.parse(JSON.stringify({ event: 'connected', version: '1.0.0' }))).toBeNull();
    expect(telnyxMedia.parse('not json')).toBeNull();
  });

  it('writes audio, marks and clear as Telnyx takes them back', () => {
    const writer = telnyxMedia.writer('S1');
    const frame = Buffer.alloc(160, 0x7f).toString('base64');
    expect(JSON.parse(writer.audio(frame))).toEqual({ event: 'media', media: { payload: frame } });
    // Shorter than the 20 ms Telnyx takes back: padded with μ-law silence to 20 ms.
    const padded = Buffer.from(JSON.parse(writer.audio('AAA=')).media.payload, 'base64');
    expect(padded).toEqual(Buffer.concat([Buffer.from('AAA=', 'base64'), Buffer.alloc(158, 0xff)]));
    expect(JSON.parse(writer.mark('r1:3'))).toEqual({ event: 'mark', mark: { name: 'r1:3' } });
    expect(JSON.parse(writer.clear())).toEqual({ event: 'clear' });
  });
});
