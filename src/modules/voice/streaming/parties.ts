import type { Config } from '../../../config.js';
import type { VoiceConfig } from '../../agents/agent.types.js';
import { DEFAULT_OPENAI_REALTIME_URL } from '../realtime/openai-realtime.js';
import { BuiltinRecognizer, BuiltinSynthesizer } from './builtin-speech.js';
import { DeepgramRecognizer } from './deepgram.js';
import { ElevenLabsSynthesizer } from './elevenlabs.js';
import { OpenAiRecognizer } from './openai-transcription.js';
import { OpenAiSynthesizer } from './openai-speech.js';
import type { Recognizer, RecognizerName, Synthesizer, SynthesizerName } from './speech-ports.js';
import { DEFAULT_RECOGNIZER, DEFAULT_SYNTHESIZER, descriptorOf, RECOGNIZERS, SYNTHESIZERS } from '../speech-providers.js';

/** The streaming pipeline's recognizers and synthesizers, by the names an agent's voiceConfig uses. */
export interface VoiceParties {
  recognizers: Record<RecognizerName, Recognizer>;
  synthesizers: Record<SynthesizerName, Synthesizer>;
}

/** Every recognizer and synthesizer, configured from the environment (a missing key is told by its `missing()`, at activation and on the call). */
export function createVoiceParties(providers: Config['providers']): VoiceParties {
  return {
    recognizers: {
      deepgram: new DeepgramRecognizer({ apiKey: providers.deepgramApiKey, baseUrl: providers.deepgramBaseUrl }),
      openai: new OpenAiRecognizer({ apiKey: providers.openaiApiKey, url: providers.openaiRealtimeUrl ?? DEFAULT_OPENAI_REALTIME_URL }),
      builtin: new BuiltinRecognizer(),
    },
    synthesizers: {
      elevenlabs: new ElevenLabsSynthesizer({ apiKey: providers.elevenlabsApiKey, baseUrl: providers.elevenlabsBaseUrl }),
      openai: new OpenAiSynthesizer({ apiKey: providers.openaiApiKey, baseUrl: providers.openaiBaseUrl }),
      builtin: new BuiltinSynthesizer(),
    },
  };
}

/**
 * What a streaming agent lacks to speak on a real carrier: each of its recognizer and synthesizer
 * whose key is not set, and the builtin pair, which is not speech (it runs in the simulator only).
 */
export function streamingMissing(parties: VoiceParties, voice: Pick<VoiceConfig, 'sttProvider' | 'ttsProvider'>): string[] {
  const recognizer = voice.sttProvider ?? DEFAULT_RECOGNIZER;
  const synthesizer = voice.ttsProvider ?? DEFAULT_SYNTHESIZER;
  const missing: string[] = [];
  if (descriptorOf(RECOGNIZERS, recognizer)?.offlineOnly) missing.push(`sttProvider ${recognizer} runs in the simulator only`);
  else {
    const why = parties.recognizers[recognizer].missing();
    if (why) missing.push(`${why} (sttProvider ${recognizer})`);
  }
  if (descriptorOf(SYNTHESIZERS, synthesizer)?.offlineOnly) missing.push(`ttsProvider ${synthesizer} runs in the simulator only`);
  else {
    const why = parties.synthesizers[synthesizer].missing();
    if (why) missing.push(`${why} (ttsProvider ${synthesizer})`);
  }
  return missing;
}
