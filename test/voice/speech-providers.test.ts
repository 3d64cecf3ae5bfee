import { readFileSync } from 'node:fs';
import { StsProvider, SttProvider, TtsProvider } from '../../src/modules/agents/agent.enums.js';
import { RECOGNIZERS, SPEECH_TO_SPEECH, SYNTHESIZERS, speechProviderTable, voiceModelProblems } from '../../src/modules/voice/speech-providers.js';

// The speech providers' descriptors are the one list: the enums both doors take name exactly them,
// the docs' table is the one they make, and the model checks follow each descriptor's list.

describe('the speech provider descriptors', () => {
  it('are the values of the enums both doors take, one per provider', () => {
    expect(Object.values(SttProvider)).toEqual(RECOGNIZERS.map((descriptor) => descriptor.name));
    expect(Object.values(TtsProvider)).toEqual(SYNTHESIZERS.map((descriptor) => descriptor.name));
    expect(Object.values(StsProvider)).toEqual(SPEECH_TO_SPEECH.map((descriptor) => descriptor.name));
  });

  it('make the table docs/voice.md shows', () => {
    const docs = readFileSync(new URL('../../docs/voice.md', import.meta.url), 'utf8');
    const shown = /<!-- speech-providers:start -->\n([\s\S]*?)\n<!-- speech-providers:end -->/.exec(docs)?.[1];
    expect(shown).toBe(speechProviderTable());
  });

  it('check a model against the list of the provider the agent names, and only a listed one passes', () => {
    const streaming = (sttModel: string, ttsModel: string) => ({
      model: 'builtin/echo',
      voiceConfig: { pipelineMode: 'streaming', sttProvider: 'deepgram', sttModel, ttsProvider: 'openai', ttsModel },
    });
    expect(voiceModelProblems(streaming('nova-3', 'gpt-4o-mini-tts'))).toEqual([]);
    expect(voiceModelProblems(streaming('nova-99', 'tts-99')).map((problem) => problem.field)).toEqual(['voiceConfig.sttModel', 'voiceConfig.ttsModel']);
    // ElevenLabs publishes no list: its model is not checked.
    expect(voiceModelProblems({ model: 'builtin/echo', voiceConfig: { pipelineMode: 'streaming', ttsProvider: 'elevenlabs', ttsModel: 'anything' } })).toEqual(
      [],
    );
    expect(voiceModelProblems({ model: 'google/gemini-0-live', voiceConfig: { pipelineMode: 'sts', stsProvider: 'google' } })).toMatchObject([
      { field: 'modelConfig.model' },
    ]);
    // A model of another provider than the sts one is not the call's model.
    expect(voiceModelProblems({ model: 'builtin/echo', voiceConfig: { pipelineMode: 'sts', stsProvider: 'openai' } })).toEqual([]);
  });
});
