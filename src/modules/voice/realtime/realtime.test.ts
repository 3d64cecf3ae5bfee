import { ConfigError, loadConfig } from '../../../config.js';
import { DEFAULT_GEMINI_LIVE_MODEL, geminiLiveModel, geminiVoice } from './gemini-live.js';
import { DEFAULT_REALTIME_MODEL, realtimeModel, realtimeVoice } from './openai-realtime.js';
import { mediaStreamUrl } from '../../telephony/carriers/stream-url.js';

const base = { JWT_SECRET: 'x'.repeat(32), DATA_DIR: '/tmp/gateway-test-unused' };

describe('the realtime bridge settings', () => {
  it('takes the agent’s own OpenAI model as it is (an unlisted one is refused, not replaced), else the default for another provider', () => {
    expect(DEFAULT_REALTIME_MODEL).toBe('gpt-realtime-2.1');
    expect(realtimeModel('openai/gpt-realtime-mini')).toBe('gpt-realtime-mini');
    expect(realtimeModel('openai/gpt-4o-realtime-preview')).toBe('gpt-4o-realtime-preview');
    expect(realtimeModel('openai/gpt-realtime-2')).toBe('gpt-realtime-2');
    expect(realtimeModel('openai/gpt-audio-mini')).toBe('gpt-audio-mini');
    expect(realtimeModel('openai/gpt-audio-1.5')).toBe('gpt-audio-1.5');
    expect(realtimeModel('openai/gpt-live-1')).toBe('gpt-live-1');
    expect(realtimeModel('openai/gpt-4o-mini')).toBe('gpt-4o-mini');
    expect(realtimeModel('builtin/echo')).toBe(DEFAULT_REALTIME_MODEL);
    expect(realtimeModel('openai-compatible/realtime-llm')).toBe(DEFAULT_REALTIME_MODEL);
  });

  it('names a built-in voice and refers to a custom one (voice_…) as the GA session takes them', () => {
    expect(realtimeVoice('alloy')).toBe('alloy');
    expect(realtimeVoice('marin')).toBe('marin');
    expect(realtimeVoice('voice_1234')).toEqual({ id: 'voice_1234' });
  });

  it('builds the stream URL from PUBLIC_URL with a ws/wss scheme, keeping a path prefix', () => {
    expect(mediaStreamUrl('https://gw.example.com/voice', 'c1', 'twilio')).toBe('wss://gw.example.com/voice/telephony/twilio/c1/media');
    expect(mediaStreamUrl('HTTP://127.0.0.1:4000/', 'c2', 'telnyx')).toBe('ws://127.0.0.1:4000/telephony/telnyx/c2/media');
  });

  it('reads OPENAI_REALTIME_URL as a ws:// or wss:// URL and refuses anything else in one line naming it', () => {
    expect(loadConfig(base).providers.openaiRealtimeUrl).toBeUndefined();
    expect(loadConfig({ ...base, OPENAI_REALTIME_URL: 'wss://proxy.example.com/v1/realtime' }).providers.openaiRealtimeUrl).toBe(
      'wss://proxy.example.com/v1/realtime',
    );
    expect(() => loadConfig({ ...base, OPENAI_REALTIME_URL: 'https://api.openai.com/v1/realtime' })).toThrow(
      new ConfigError('OPENAI_REALTIME_URL must start with ws: or wss:, got "https:"'),
    );
    expect(() => loadConfig({ ...base, OPENAI_REALTIME_URL: 'not a url' })).toThrow(/^OPENAI_REALTIME_URL must be a URL/);
  });

  it('takes the agent’s own Google model as it is, else gemini-3.8-live for another provider', () => {
    expect(DEFAULT_GEMINI_LIVE_MODEL).toBe('gemini-3.8-live');
    expect(geminiLiveModel('google/gemini-3.1-flash-live-preview')).toBe('gemini-3.1-flash-live-preview');
    expect(geminiLiveModel('google/gemini-2.5-flash-native-audio-preview-12-2025')).toBe('gemini-2.5-flash-native-audio-preview-12-2025');
    expect(geminiLiveModel('google/gemini-3.5-flash')).toBe('gemini-3.5-flash');
    expect(geminiLiveModel('openai/gpt-realtime')).toBe(DEFAULT_GEMINI_LIVE_MODEL);
  });

  it('sends a Gemini voice (a capitalised name) and leaves an OpenAI one out', () => {
    expect(geminiVoice('Kore')).toBe('Kore');
    expect(geminiVoice('alloy')).toBeUndefined();
    expect(geminiVoice(null)).toBeUndefined();
  });

  it('reads GEMINI_API_KEY, and GEMINI_BASE_URL as an http(s) URL without a trailing slash', () => {
    expect(loadConfig(base).providers).toMatchObject({ geminiApiKey: undefined, geminiBaseUrl: undefined });
    const config = loadConfig({ ...base, GEMINI_API_KEY: 'k', GEMINI_BASE_URL: 'http://127.0.0.1:9999/' });
    expect(config.providers).toMatchObject({ geminiApiKey: 'k', geminiBaseUrl: 'http://127.0.0.1:9999' });
    expect(() => loadConfig({ ...base, GEMINI_BASE_URL: 'wss://generativelanguage.googleapis.com' })).toThrow(
      new ConfigError('GEMINI_BASE_URL must start with http: or https:, got "wss:"'),
    );
  });
});
