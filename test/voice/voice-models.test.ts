import { readFileSync } from 'node:fs';
import { ActivateAgentDocument, CreateAgentDocument, UpdateAgentDocument } from '../generated/graphql.js';
import { startTestApp, type TestApp, type TestOrganization } from '../helpers/app.js';
import { graphqlCode } from '../agents/fixtures.js';
import {
  DEEPGRAM_LISTEN_MODELS,
  DEFAULT_DEEPGRAM_MODEL,
  DEFAULT_GEMINI_LIVE_MODEL,
  DEFAULT_REALTIME_MODEL,
  DEFAULT_SPEECH_MODEL,
  DEFAULT_TRANSCRIPTION_MODEL,
  LIVE_MODELS,
  REALTIME_MODELS,
  SPEECH_MODELS,
  TRANSCRIPTION_MODELS,
} from '../../src/modules/models/voice-models.js';
import { DEEPGRAM_MODELS, OPENAI_MODELS } from '../../src/modules/models/voice-models.data.js';
import { LIVE_MODELS as DOUBLE_LIVE_MODELS } from '../support/fake-gemini-live.js';

// The voice models an agent names are the ones its providers publish (voice-models.data.ts, copied
// from the providers' own descriptions): every default is in its provider's list, each list is the
// enum of the specification vendored under test/support/ (same commit), and a model not listed is
// refused on both doors when saved (400 naming the field, the model and the accepted ones) and when
// an agent saved before the check is activated (409).

type Json = Record<string, any>;
const read = (file: string): Json => JSON.parse(readFileSync(new URL(`../support/${file}`, import.meta.url), 'utf8')) as Json;
const enumOf = (property: Json): string[] => (property.anyOf ?? [property]).find((branch: Json) => Array.isArray(branch.enum)).enum;

describe('the published model lists', () => {
  it('hold every default the gateway uses', () => {
    expect(REALTIME_MODELS.models).toContain(DEFAULT_REALTIME_MODEL);
    expect(TRANSCRIPTION_MODELS.models).toContain(DEFAULT_TRANSCRIPTION_MODEL);
    expect(SPEECH_MODELS.models).toContain(DEFAULT_SPEECH_MODEL);
    expect(DEEPGRAM_LISTEN_MODELS.models).toContain(DEFAULT_DEEPGRAM_MODEL);
    expect(LIVE_MODELS.models).toContain(DEFAULT_GEMINI_LIVE_MODEL);
  });

  it('are the enums of the providers’ descriptions vendored under test/support, at the same commits', () => {
    const realtime = read('openai-realtime.schemas.json');
    const speech = read('openai-speech.schemas.json');
    const deepgram = read('deepgram-listen.asyncapi.json');
    expect(realtime.source.commit).toBe(OPENAI_MODELS.source.commit);
    expect(speech.source.commit).toBe(OPENAI_MODELS.source.commit);
    expect(deepgram.source.commit).toBe(DEEPGRAM_MODELS.source.commit);
    expect(OPENAI_MODELS.realtime).toEqual(enumOf(realtime.components.schemas.RealtimeSessionCreateRequestGA.properties.model));
    expect(OPENAI_MODELS.transcription).toEqual(enumOf(realtime.components.schemas.AudioTranscription.properties.model));
    expect(OPENAI_MODELS.speech).toEqual(enumOf(speech.components.schemas.CreateSpeechRequest.properties.model));
    expect(DEEPGRAM_MODELS.listen).toEqual(deepgram.components.schemas.ListenV1Model.enum);
    const flux = read('deepgram-listen-v2.asyncapi.json');
    expect(flux.source.commit).toBe(DEEPGRAM_MODELS.source.commit);
    expect(DEEPGRAM_MODELS.flux).toEqual(flux.components.schemas.ListenV2Model.enum);
  });

  it('are the Live models the Gemini double serves', () => {
    expect([...LIVE_MODELS.models].sort()).toEqual([...DOUBLE_LIVE_MODELS].sort());
  });
});

let app: TestApp;
let acme: TestOrganization;

beforeAll(async () => {
  app = await startTestApp();
  acme = await app.organization('Acme models');
}, 60_000);

afterAll(async () => {
  await app?.close();
});

const agent = (modelConfig: Json, voiceConfig: Json) => ({ name: 'Voice', instructions: 'You help callers.', modelConfig, voiceConfig });

/** The same body on both doors: both refuse it 400 with the same field errors, which are returned. */
async function refusedOnBothDoors(input: Json): Promise<{ field: string; message: string }[]> {
  const rest = await acme.rest.post('/api/agents', input);
  expect(rest.status).toBe(400);
  expect(rest.body.code).toBe('BAD_USER_INPUT');
  const graphql = await acme.graphql.run(CreateAgentDocument, { input: input as never });
  expect(graphqlCode(graphql)).toBe('BAD_USER_INPUT');
  expect(graphql.errors?.[0]?.extensions.errors).toEqual(rest.body.errors);
  return rest.body.errors;
}

describe('a voice model the provider does not list', () => {
  it('is refused for an OpenAI speech-to-speech agent, naming the model and OpenAI’s list, never replaced by another', async () => {
    const errors = await refusedOnBothDoors(agent({ model: 'openai/gpt-live-1' }, { pipelineMode: 'sts', stsProvider: 'openai' }));
    expect(errors).toEqual([
      {
        field: 'modelConfig.model',
        message: `modelConfig.model "gpt-live-1" is not an OpenAI Realtime model: OpenAI lists ${REALTIME_MODELS.models.join(', ')}`,
      },
    ]);
  });

  it('is refused for a Google speech-to-speech agent when it is not a Live model Google names', async () => {
    const errors = await refusedOnBothDoors(agent({ model: 'google/gemini-2.5-flash' }, { pipelineMode: 'sts', stsProvider: 'google' }));
    expect(errors).toEqual([
      {
        field: 'modelConfig.model',
        message: expect.stringContaining('"gemini-2.5-flash" is not a Google Live model: Google lists gemini-3.8-live, gemini-3.8-live-extended-thinking'),
      },
    ]);
  });

  it('is refused for a streaming agent’s recognizer and synthesizer models of OpenAI and Deepgram', async () => {
    const errors = await refusedOnBothDoors(
      agent({ model: 'builtin/echo' }, { pipelineMode: 'streaming', sttProvider: 'openai', sttModel: 'gpt-live-1', ttsProvider: 'openai', ttsModel: 'tts-2' }),
    );
    expect(errors.map((error) => error.field)).toEqual(['voiceConfig.sttModel', 'voiceConfig.ttsModel']);
    expect(errors[0]!.message).toContain('"gpt-live-1" is not an OpenAI transcription model');
    const deepgram = await refusedOnBothDoors(agent({ model: 'builtin/echo' }, { pipelineMode: 'streaming', sttProvider: 'deepgram', sttModel: 'nova-9' }));
    expect(deepgram[0]!.message).toContain('"nova-9" is not a Deepgram live transcription model');
  });

  it('is refused when an update makes the pair unlisted, the agent unchanged', async () => {
    const created = await acme.rest.post('/api/agents', agent({ model: 'builtin/echo' }, { pipelineMode: 'sts', stsProvider: 'openai' }));
    expect(created.status).toBe(201);
    const update = await acme.graphql.run(UpdateAgentDocument, { id: created.body.id, input: { modelConfig: { model: 'openai/gpt-4o-mini' } } });
    expect(graphqlCode(update)).toBe('BAD_USER_INPUT');
    expect(update.errors?.[0]?.extensions.errors?.[0]?.message).toContain('"gpt-4o-mini" is not an OpenAI Realtime model');
    expect((await acme.rest.get(`/api/agents/${created.body.id}`)).body).toMatchObject({ version: 1, modelConfig: { model: 'builtin/echo' } });
  });

  it('is accepted when listed, and a model of another provider leaves the call to the provider’s default', async () => {
    for (const input of [
      agent({ model: `openai/${DEFAULT_REALTIME_MODEL}` }, { pipelineMode: 'sts', stsProvider: 'openai' }),
      agent({ model: 'google/gemini-3.8-live-extended-thinking' }, { pipelineMode: 'sts', stsProvider: 'google' }),
      agent({ model: 'builtin/echo' }, { pipelineMode: 'sts', stsProvider: 'openai' }),
      agent(
        { model: 'builtin/echo' },
        { pipelineMode: 'streaming', sttProvider: 'openai', sttModel: 'gpt-realtime-whisper', ttsProvider: 'elevenlabs', ttsModel: 'eleven_v3' },
      ),
    ]) {
      expect((await acme.rest.post('/api/agents', input)).status).toBe(201);
    }
  });

  it('stops an agent saved before the check from being activated, 409 on both doors', async () => {
    const created = await acme.rest.post('/api/agents', agent({ model: 'builtin/echo' }, { pipelineMode: 'sts', stsProvider: 'openai' }));
    const second = await acme.rest.post('/api/agents', agent({ model: 'builtin/echo' }, { pipelineMode: 'sts', stsProvider: 'openai' }));
    // As stored by an earlier version of the gateway, which took any name.
    await app.sql(`update agents set model_config = jsonb_set(model_config, '{model}', '"openai/gpt-live-1"') where id in (?, ?)`, [
      created.body.id,
      second.body.id,
    ]);
    const rest = await acme.rest.post(`/api/agents/${created.body.id}/activate`, {});
    expect(rest.status).toBe(409);
    expect(rest.body.detail).toContain('"gpt-live-1" is not an OpenAI Realtime model');
    const graphql = await acme.graphql.run(ActivateAgentDocument, { id: second.body.id });
    expect(graphqlCode(graphql)).toBe('CONFLICT');
    expect(graphql.errors?.[0]?.message).toBe(rest.body.detail);
    // Another organization does not learn the agent exists.
    const other = await app.organization('Other models');
    expect((await other.rest.post(`/api/agents/${created.body.id}/activate`, {})).status).toBe(404);
  });
});
