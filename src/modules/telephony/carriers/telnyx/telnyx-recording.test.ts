import { CarrierError } from '../../carrier.js';
import { mediaFormatOf, openTelnyxMedia, telnyxRecordingEventOf } from './telnyx-recording.js';

// The TeXML recording callback's fields as developers.telnyx.com publishes them
// (api-reference/callbacks/texml-recording-completed), and the media_url's format.

describe('telnyxRecordingEventOf', () => {
  const completed = {
    AccountSid: 'cb6cfbbc-eb00-41af-a3f3-0d7b32009e4b',
    CallSid: 'v2:qiaymU9Ij90xJRRkYGWHOIx_41EVJPrzlny2zC67hwL1wVIUnnMrqQ',
    CallSidLegacy: 'v2:qiaymU9Ij90xJRRkYGWHOIx_41EVJPrzlny2zC67hwL1wVIUnnMrqQ',
    ConnectionId: '1234567890',
    RecordingChannels: '1',
    RecordingDuration: '5',
    RecordingSid: '35094891-3290-4142-b2c2-b2eda57534cf',
    RecordingSource: 'DialVerb',
    RecordingStatus: 'completed',
    RecordingUrl: 'https://recording.com/your-recording-url',
  };

  it('reads a completed report: its ids, duration and channels, and never its URL', () => {
    const event = telnyxRecordingEventOf(completed);
    expect(event).toEqual({
      carrierRecordingId: completed.RecordingSid,
      carrierCallId: completed.CallSid,
      status: 'completed',
      durationSeconds: 5,
      channels: 'mono',
      errorText: null,
    });
    expect(JSON.stringify(event)).not.toContain('recording.com');
  });

  it('reads dual channels, an absent recording with why, and nothing from an unknown status or no RecordingSid', () => {
    expect(telnyxRecordingEventOf({ ...completed, RecordingChannels: '2' })?.channels).toBe('dual');
    expect(telnyxRecordingEventOf({ ...completed, RecordingStatus: 'absent' })).toMatchObject({
      status: 'absent',
      errorText: 'Telnyx reported the recording absent',
    });
    expect(telnyxRecordingEventOf({ ...completed, RecordingStatus: 'paused' })).toBeNull();
    expect(telnyxRecordingEventOf({ ...completed, RecordingSid: '' })).toBeNull();
    expect(telnyxRecordingEventOf({ ...completed, RecordingStatus: 'constructor' })).toBeNull();
  });
});

describe('the media_url', () => {
  it('names its format by its file name', () => {
    expect(mediaFormatOf(new URL('http://recordings.com/mp3/filename.mp3'))).toBe('mp3');
    expect(mediaFormatOf(new URL('https://s3.example/a/b.WAV?X-Amz-Signature=1'))).toBe('wav');
    expect(mediaFormatOf(new URL('https://s3.example/a/b'))).toBeNull();
  });

  it('refuses another format, a URL that is not http(s), before fetching anything', async () => {
    await expect(openTelnyxMedia('http://recordings.com/mp3/filename.mp3', 'wav', 1000)).rejects.toThrow(/MP3 only: ask for format=mp3/);
    await expect(openTelnyxMedia('file:///etc/passwd', 'wav', 1000)).rejects.toBeInstanceOf(CarrierError);
    await expect(openTelnyxMedia('not a url', 'wav', 1000)).rejects.toMatchObject({ kind: 'rejected' });
  });
});
