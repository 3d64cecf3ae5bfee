import WebSocket from 'ws';
import { BETA_SHAPE_DISABLED, startFakeRealtime, type FakeRealtime, type RealtimeEvent } from '../support/fake-openai-realtime.js';
import type { ResponseCreateEvent } from 'openai/resources/realtime/realtime';
import { clientEventProblem, REALTIME_SPEC_SOURCE, serverEventProblem } from '../support/openai-realtime-spec.js';
import { firstLineInstructions } from '../../src/modules/voice/realtime/speech-provider.js';

// The OpenAI Realtime double checks what it is sent against the GA schemas OpenAI publishes, as the
// service does: these tests show it can fail, so the speech-to-speech tests that pass against it mean
// something. No database: the double alone, over loopback.

let fake: FakeRealtime;

beforeAll(async () => {
  fake = await startFakeRealtime();
});

afterAll(async () => {
  await fake?.close();
});

beforeEach(() => {
  fake.problems.length = 0;
  fake.script.length = 0;
});

/** A client of the double: its socket, every event it got, and a way to wait for one. */
async function connect(headers: Record<string, string> = {}) {
  const events: RealtimeEvent[] = [];
  const socket = new WebSocket(`${fake.url}?model=gpt-realtime`, { headers: { Authorization: 'Bearer sk-test', ...headers } });
  socket.on('message', (data) => events.push(JSON.parse(data.toString()) as RealtimeEvent));
  const closed = new Promise<{ code: number; reason: string }>((resolve) =>
    socket.once('close', (code, reason) => resolve({ code, reason: reason.toString() })),
  );
  await new Promise((resolve, reject) => socket.once('open', resolve).once('error', reject));
  const next = async (type: string): Promise<RealtimeEvent> => {
    for (let waited = 0; waited < 2000; waited += 10) {
      const found = events.find((event) => event.type === type);
      if (found) {
        events.splice(events.indexOf(found), 1);
        return found;
      }
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    throw new Error(`no ${type} from the double: ${JSON.stringify(events)}`);
  };
  return { socket, events, closed, next, send: (event: RealtimeEvent) => socket.send(JSON.stringify(event)) };
}

const GA_SESSION = {
  type: 'realtime',
  output_modalities: ['audio'],
  instructions: 'Be brief.',
  audio: {
    input: { format: { type: 'audio/pcmu' }, transcription: { model: 'whisper-1' }, turn_detection: { type: 'server_vad' } },
    output: { format: { type: 'audio/pcmu' }, voice: 'alloy' },
  },
  tools: [{ type: 'function', name: 'end_call', description: 'Hang up.', parameters: { type: 'object', properties: {} } }],
  tool_choice: 'auto',
};

const BETA_SESSION = {
  modalities: ['audio', 'text'],
  instructions: 'Be brief.',
  voice: 'alloy',
  input_audio_format: 'g711_ulaw',
  output_audio_format: 'g711_ulaw',
  input_audio_transcription: { model: 'whisper-1' },
  turn_detection: { type: 'server_vad' },
  tool_choice: 'auto',
};

describe('the vendored OpenAI Realtime schemas', () => {
  it('name the repository and commit they were taken from', () => {
    expect(REALTIME_SPEC_SOURCE.repository).toBe('https://github.com/openai/openai-openapi');
    expect(REALTIME_SPEC_SOURCE.commit).toMatch(/^[0-9a-f]{40}$/);
  });

  it('accept a GA session.update and refuse the beta shape, an unknown key anywhere, and a session without its type', () => {
    expect(clientEventProblem({ type: 'session.update', session: GA_SESSION })).toBeNull();
    expect(clientEventProblem({ type: 'session.update', session: { type: 'realtime', instructions: 'Refreshed passages.' } })).toBeNull();
    expect(clientEventProblem({ type: 'session.update', session: { ...BETA_SESSION, type: 'realtime' } })).toMatchObject({
      code: 'unknown_parameter',
      message: expect.stringMatching(
        /^Unknown parameter: 'session\.(modalities|voice|input_audio_format|output_audio_format|input_audio_transcription|turn_detection)'\.$/,
      ),
    });
    expect(clientEventProblem({ type: 'session.update', session: { ...GA_SESSION, input_audio_format: 'g711_ulaw' } })).toEqual({
      code: 'unknown_parameter',
      message: "Unknown parameter: 'session.input_audio_format'.",
      param: 'session.input_audio_format',
    });
    expect(
      clientEventProblem({
        type: 'session.update',
        session: { ...GA_SESSION, audio: { ...GA_SESSION.audio, output: { format: { type: 'audio/pcmu', rate: 8000 } } } },
      }),
    ).toMatchObject({ code: 'unknown_parameter', param: 'session.audio.output.format.rate' });
    expect(clientEventProblem({ type: 'session.update', session: { instructions: 'Refreshed passages.' } })).toEqual({
      code: 'missing_required_parameter',
      message: "Missing required parameter: 'session.type'.",
      param: 'session.type',
    });
    expect(clientEventProblem({ type: 'session.update', session: { ...GA_SESSION, audio: { input: { format: 'g711_ulaw' } } } })).toMatchObject({
      param: 'session.audio.input.format',
    });
    expect(clientEventProblem({ type: 'conversation.item.truncate', item_id: 'item_1', content_index: 0 })).toMatchObject({
      code: 'missing_required_parameter',
      param: 'audio_end_ms',
    });
    expect(clientEventProblem({ type: 'conversation.item.create', item: { type: 'function_call_output', call_id: 'call_1', output: '{}' } })).toBeNull();
    expect(clientEventProblem({ type: 'response.audio.delta' })).toMatchObject({ code: 'invalid_event_type' });
  });

  it('take the turn-taking settings the gateway sends and refuse them misspelt or misplaced (noise reduction, semantic VAD, the service’s own cut and reply)', () => {
    const input = (extra: Record<string, unknown>) => ({
      type: 'session.update',
      session: { ...GA_SESSION, audio: { ...GA_SESSION.audio, input: { ...GA_SESSION.audio.input, ...extra } } },
    });
    expect(clientEventProblem(input({ noise_reduction: { type: 'near_field' } }))).toBeNull();
    expect(clientEventProblem(input({ turn_detection: { type: 'server_vad', create_response: false, interrupt_response: false } }))).toBeNull();
    expect(clientEventProblem(input({ turn_detection: { type: 'server_vad', silence_duration_ms: 800 } }))).toBeNull();
    expect(
      clientEventProblem(input({ turn_detection: { type: 'semantic_vad', eagerness: 'low', create_response: false, interrupt_response: false } })),
    ).toBeNull();
    expect(clientEventProblem(input({ noise_reduction: { type: 'phone' } }))).toMatchObject({ param: 'session.audio.input.noise_reduction.type' });
    expect(clientEventProblem(input({ turn_detection: { type: 'semantic_vad', eagerness: 'eager' } }))).not.toBeNull();
    expect(clientEventProblem(input({ turn_detection: { type: 'semantic_vad', silence_duration_ms: 800 } }))).not.toBeNull();
  });

  it('know the GA server events and not the beta names', () => {
    const base = { event_id: 'event_1', response_id: 'resp_1', item_id: 'item_1', output_index: 0, content_index: 0, delta: 'aGk=' };
    expect(serverEventProblem({ ...base, type: 'response.output_audio.delta' })).toBeNull();
    expect(serverEventProblem({ ...base, type: 'response.audio.delta' })).toMatchObject({ code: 'invalid_event_type' });
    expect(
      serverEventProblem({
        event_id: 'event_2',
        type: 'conversation.item.input_audio_transcription.completed',
        item_id: 'item_1',
        content_index: 0,
        transcript: 'Hi',
      }),
    ).toMatchObject({ param: 'usage' });
  });
});

describe('the OpenAI Realtime double', () => {
  it('refuses a socket opened with the beta header: the beta_api_shape_disabled error, then close code 4000', async () => {
    const client = await connect({ 'OpenAI-Beta': 'realtime=v1' });
    const closed = await client.closed;
    expect(closed.code).toBe(4000);
    expect(client.events).toEqual([{ type: 'error', event_id: expect.any(String), error: { ...BETA_SHAPE_DISABLED } }]);
  });

  it('refuses a beta-shaped session.update whole, with the service’s error, and does not apply any of it', async () => {
    const client = await connect();
    const created = await client.next('session.created');
    expect(created.session).toMatchObject({ type: 'realtime', object: 'realtime.session', model: 'gpt-realtime' });
    client.send({ type: 'session.update', event_id: 'event_beta', session: BETA_SESSION });
    const error = await client.next('error');
    expect(error.error).toEqual({
      type: 'invalid_request_error',
      code: 'missing_required_parameter',
      message: "Missing required parameter: 'session.type'.",
      param: 'session.type',
      event_id: 'event_beta',
    });
    client.send({ type: 'session.update', event_id: 'event_mixed', session: { ...GA_SESSION, input_audio_format: 'g711_ulaw' } });
    expect((await client.next('error')).error).toMatchObject({
      code: 'unknown_parameter',
      message: "Unknown parameter: 'session.input_audio_format'.",
      event_id: 'event_mixed',
    });
    expect(client.events.filter((event) => event.type === 'session.updated')).toEqual([]);
    expect(fake.sessions.at(-1)!.sessionUpdates()).toEqual([]);
    expect(fake.problems.map((problem) => [problem.kind, problem.problem.code])).toEqual([
      ['refused', 'missing_required_parameter'],
      ['refused', 'unknown_parameter'],
    ]);
    // The session stays open, as the service's does: a GA update is then applied.
    client.send({ type: 'session.update', session: GA_SESSION });
    const updated = await client.next('session.updated');
    expect(updated.session.audio).toMatchObject({ input: { format: { type: 'audio/pcmu' } }, output: { format: { type: 'audio/pcmu' }, voice: 'alloy' } });
    client.socket.close();
  });

  it('refuses a truncation past the audio it sent and a function output for a call it never made', async () => {
    const client = await connect();
    await client.next('session.created');
    client.send({ type: 'conversation.item.truncate', item_id: 'item_unknown', content_index: 0, audio_end_ms: 10 });
    expect((await client.next('error')).error).toMatchObject({ code: 'item_not_found', param: 'item_id' });
    client.send({ type: 'conversation.item.create', item: { type: 'function_call_output', call_id: 'call_never', output: '{}' } });
    expect((await client.next('error')).error).toMatchObject({ param: 'item.call_id' });
    client.socket.close();
  });

  it('speaks, word for word, the line a response.create’s instructions quote (the gateway’s first message, of a shape the openai SDK types take)', async () => {
    const client = await connect();
    client.send({ type: 'session.update', session: GA_SESSION });
    await client.next('session.updated');
    const event = {
      type: 'response.create',
      response: { instructions: firstLineInstructions('Hello "Ada", this is Riley.'), tool_choice: 'none' },
    } satisfies ResponseCreateEvent;
    expect(clientEventProblem(event)).toBeNull();
    client.send(event);
    expect((await client.next('response.output_audio_transcript.done')).transcript).toBe('Hello "Ada", this is Riley.');
    expect((await client.next('response.done')).response.status).toBe('completed');
    // Without a quoted line (the reply after a tool), the double waits for the script as before.
    client.send({ type: 'response.create' });
    expect(fake.problems).toEqual([]);
    client.socket.close();
  });

  it('answers a scripted turn with GA server events only, each valid against the schemas', async () => {
    const client = await connect();
    await client.next('session.created');
    const session = fake.sessions.at(-1)!;
    fake.problems.length = 0;
    await session.say([{ text: 'Hello there.' }], { tools: [{ name: 'end_call', arguments: { reason: 'done' } }] });
    await client.next('response.done');
    const types = client.events.map((event) => event.type);
    expect(types).toEqual(
      expect.arrayContaining([
        'response.created',
        'response.output_audio.delta',
        'response.output_audio_transcript.delta',
        'response.output_audio_transcript.done',
        'response.function_call_arguments.done',
      ]),
    );
    expect(types.some((type) => /^response\.(audio|audio_transcript|text)\./.test(type))).toBe(false);
    expect(fake.problems).toEqual([]);
    const call = client.events.find((event) => event.type === 'response.function_call_arguments.done')!;
    client.send({ type: 'conversation.item.create', item: { type: 'function_call_output', call_id: call.call_id, output: '{"ending":true}' } });
    await client.next('conversation.item.done');
    const audio = client.events.find((event) => event.type === 'response.output_audio.delta')!;
    client.send({ type: 'conversation.item.truncate', item_id: audio.item_id, content_index: 0, audio_end_ms: 100 });
    expect((await client.next('conversation.item.truncated')).audio_end_ms).toBe(100);
    expect(fake.problems).toEqual([]);
    client.socket.close();
  });
});
