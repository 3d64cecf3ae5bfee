import WebSocket from 'ws';
import { clientMessageProblem, queryProblem, serverMessageProblem, STREAM_INPUT_SPEC_SOURCE } from '../support/elevenlabs-stream-input-spec.js';
import { CHUNK_CHARS, INVALID_API_KEY, rms, startFakeElevenLabs, type FakeElevenLabs } from '../support/fake-elevenlabs.js';

// The ElevenLabs double checks what it is sent against the AsyncAPI ElevenLabs publishes, and refuses
// what the service refuses the way the service does: these tests show it can fail, so the tests of the
// gateway's synthesizer that pass against it mean something. No database: the double alone.

const KEY = 'xi-fake-key';
const VOICE = 'Xb7hH8MSUJpSbSDYk0k2';
const QUERY = 'model_id=eleven_flash_v2_5&output_format=ulaw_8000';

let fake: FakeElevenLabs;

beforeAll(async () => {
  fake = await startFakeElevenLabs({ apiKey: KEY });
});

afterAll(async () => {
  await fake?.close();
});

beforeEach(() => fake.reset());

interface Client {
  socket: WebSocket;
  messages: Record<string, any>[];
  closed: Promise<{ code: number; reason: string }>;
  send(message: unknown): void;
}

/** Opens a socket on the double; rejects with the HTTP status and body when the handshake is refused. */
function connect(options: { path?: string; query?: string; key?: string | null } = {}): Promise<Client> {
  const headers: Record<string, string> = options.key === null ? {} : { 'xi-api-key': options.key ?? KEY };
  const url = `${fake.baseUrl}${options.path ?? `/v1/text-to-speech/${VOICE}/stream-input`}?${options.query ?? QUERY}`;
  const socket = new WebSocket(url, { headers });
  const messages: Record<string, any>[] = [];
  socket.on('message', (data) => messages.push(JSON.parse(data.toString()) as Record<string, any>));
  const closed = new Promise<{ code: number; reason: string }>((resolve) =>
    socket.once('close', (code, reason) => resolve({ code, reason: reason.toString() })),
  );
  return new Promise((resolve, reject) => {
    socket.once('unexpected-response', (_req, res) => {
      let body = '';
      res.on('data', (chunk) => (body += chunk));
      res.on('end', () => reject(Object.assign(new Error(`HTTP ${res.statusCode}`), { status: res.statusCode, body: JSON.parse(body) })));
    });
    socket.once('error', reject);
    socket.once('open', () => resolve({ socket, messages, closed, send: (message) => socket.send(JSON.stringify(message)) }));
  });
}

describe('the vendored ElevenLabs stream-input description', () => {
  it('names the repository, file and commit it was taken from', () => {
    expect(STREAM_INPUT_SPEC_SOURCE).toMatchObject({ repository: 'https://github.com/elevenlabs/elevenlabs-docs', file: 'fern/apis/api/asyncapi.yml' });
    expect(STREAM_INPUT_SPEC_SOURCE.commit).toMatch(/^[0-9a-f]{40}$/);
  });

  it('accepts the documented messages and refuses unknown keys, a first text other than a space, and values outside an enum', () => {
    expect(
      clientMessageProblem('InitializeConnection', {
        text: ' ',
        voice_settings: { stability: 0.5, similarity_boost: 0.8, use_speaker_boost: false },
        generation_config: { chunk_length_schedule: [120, 160, 250, 290] },
      }),
    ).toBeNull();
    expect(clientMessageProblem('InitializeConnection', { text: 'Hello ' })).toMatch(/'text'.*must be " "/);
    // The AsyncAPI's own example spells the key `xi_api_key`; its schema says `xi-api-key`, which is what is checked.
    expect(clientMessageProblem('InitializeConnection', { text: ' ', xi_api_key: 'k' })).toBe("unknown field 'xi_api_key'");
    expect(clientMessageProblem('SendText', { text: 'Hello world ', try_trigger_generation: true })).toBeNull();
    expect(clientMessageProblem('SendText', { text: 'Hello world ', flush: true, context_id: 'a' })).toBe("unknown field 'context_id'");
    expect(clientMessageProblem('SendText', { text: 'Hi ', voice_settings: { stability: 0.5, pitch: 2 } })).toBe("unknown field 'voice_settings.pitch'");
    expect(clientMessageProblem('CloseConnection', { text: '' })).toBeNull();
    expect(
      queryProblem(new URLSearchParams('model_id=eleven_flash_v2_5&output_format=ulaw_8000&auto_mode=true&sync_alignment=true&inactivity_timeout=60')),
    ).toBeNull();
    expect(queryProblem(new URLSearchParams('output_format=ulaw_16000'))).toMatch(/^invalid value for query parameter 'output_format'/);
    expect(queryProblem(new URLSearchParams('optimize_streaming_latency=3'))).toBe("unknown query parameter 'optimize_streaming_latency'");
    expect(queryProblem(new URLSearchParams('auto_mode=yes'))).toMatch(/'auto_mode'.*boolean/);
    expect(serverMessageProblem('AudioOutput', { audio: 'AAAA', alignment: { chars: ['a'], charStartTimesMs: [0], charsDurationsMs: [5] } })).toBeNull();
    expect(serverMessageProblem('FinalOutput', { isFinal: true })).toBeNull();
    expect(serverMessageProblem('FinalOutput', { isFinal: true, audio: null })).toBe("unknown field 'audio'");
  });
});

describe('the ElevenLabs double', () => {
  it('speaks each flushed text at once, in chunks whose alignment spells the text, then says isFinal and closes normally after the end', async () => {
    const [stream, client] = await Promise.all([fake.nextStream(), connect()]);
    client.send({ text: ' ', voice_settings: { stability: 0.5, similarity_boost: 0.8 } });
    const first = 'Hello there, this is Ava. ';
    client.send({ text: first, flush: true });
    const chunks = Math.ceil(first.length / CHUNK_CHARS);
    for (let waited = 0; client.messages.length < chunks && waited < 5000; waited += 10) await new Promise((resolve) => setTimeout(resolve, 10));
    expect(client.messages).toHaveLength(chunks);
    expect(client.messages.flatMap((message) => message.alignment.chars).join('')).toBe(first);
    for (const message of client.messages) {
      expect(Object.keys(message).sort()).toEqual(['alignment', 'audio', 'normalizedAlignment']);
      const { chars, charStartTimesMs, charsDurationsMs } = message.alignment;
      expect(charStartTimesMs).toHaveLength(chars.length);
      expect(charsDurationsMs).toHaveLength(chars.length);
      // The audio is as long as the alignment says, 8 bytes a millisecond.
      expect(Buffer.from(message.audio, 'base64').length).toBe(8 * charsDurationsMs.reduce((sum: number, ms: number) => sum + ms, 0));
    }
    expect(rms(Buffer.from(client.messages[0]!.audio, 'base64'))).toBeGreaterThan(1500);
    client.send({ text: 'Goodbye. ', flush: true });
    client.send({ text: '' });
    expect(await client.closed).toEqual({ code: 1000, reason: '' });
    expect(client.messages.at(-1)).toEqual({ isFinal: true });
    expect(stream.texts).toEqual([first, 'Goodbye. ']);
    expect(fake.texts).toEqual([first, 'Goodbye. ']);
    expect(fake.problems).toEqual([]);
  });

  it('holds text below the chunk schedule until a flush or the end, unless auto_mode is on', async () => {
    const [stream, client] = await Promise.all([fake.nextStream(), connect()]);
    client.send({ text: ' ' });
    client.send({ text: 'Short sentence. ' });
    client.send({ text: ' ' });
    for (let waited = 0; stream.received.length < 3 && waited < 5000; waited += 10) await new Promise((resolve) => setTimeout(resolve, 10));
    expect(stream.generations).toEqual([]);
    client.send({ text: '' });
    await client.closed;
    expect(stream.generations).toEqual(['Short sentence. ']);

    const [autoStream, auto] = await Promise.all([fake.nextStream(), connect({ query: `${QUERY}&auto_mode=true` })]);
    auto.send({ text: ' ' });
    auto.send({ text: 'Short sentence. ' });
    auto.send({ text: ' ' });
    for (let waited = 0; autoStream.received.length < 3 && waited < 5000; waited += 10) await new Promise((resolve) => setTimeout(resolve, 10));
    expect(autoStream.generations).toEqual(['Short sentence. ']);
    auto.socket.close();
  });

  it('refuses a wrong key at the handshake with 401 and invalid_api_key, or by a 1008 close when told to', async () => {
    await expect(connect({ key: 'not-the-key' })).rejects.toMatchObject({ status: 401, body: { detail: INVALID_API_KEY } });
    fake.faults.refuseKey = true;
    await expect(connect()).rejects.toMatchObject({ status: 401 });
    fake.faults.keyRefusal = 'close';
    const client = await connect();
    client.send({ text: ' ' });
    expect(await client.closed).toEqual({ code: 1008, reason: 'Invalid API key' });
    // Without the header the key may come in the first message, and is checked there.
    fake.faults.refuseKey = false;
    fake.faults.keyRefusal = 'handshake';
    const keyless = await connect({ key: null });
    keyless.send({ text: ' ', 'xi-api-key': 'wrong' });
    expect(await keyless.closed).toEqual({ code: 1008, reason: 'Invalid API key' });
    const inMessage = await connect({ key: null });
    inMessage.send({ text: ' ', 'xi-api-key': KEY });
    inMessage.send({ text: '' });
    expect((await inMessage.closed).code).toBe(1000);
  });

  it('refuses a handshake with an unknown path, an unknown query parameter, a value outside an enum, or a model the socket does not serve', async () => {
    await expect(connect({ path: `/v1/text-to-speech/${VOICE}/stream` })).rejects.toMatchObject({ status: 404 });
    await expect(connect({ query: `${QUERY}&optimize_streaming_latency=3` })).rejects.toMatchObject({
      status: 400,
      body: { detail: { message: "unknown query parameter 'optimize_streaming_latency'" } },
    });
    await expect(connect({ query: 'model_id=eleven_flash_v2_5&output_format=ulaw_16000' })).rejects.toMatchObject({
      status: 400,
      body: { detail: { message: expect.stringMatching(/output_format/) } },
    });
    await expect(connect({ query: 'model_id=eleven_v3&output_format=ulaw_8000' })).rejects.toMatchObject({ status: 403 });
    expect(fake.refusedHandshakes.map((refusal) => refusal.status)).toEqual([404, 400, 400, 403]);
  });

  it('closes with 1008 and its words on a first message that is not the initialization, an unknown field, a text without its trailing space, or changed voice settings', async () => {
    const cases: [unknown[], RegExp][] = [
      [[{ text: 'Hello. ' }], /^Invalid message: the first message must initialize the stream/],
      [[{ text: ' ' }, { text: 'Hello. ', flush: true, speed: 1.1 }], /^Invalid message: unknown field 'speed'$/],
      [[{ text: ' ' }, { text: 'Hello.', flush: true }], /^Invalid message: text must end with a single space$/],
      [
        [
          { text: ' ', voice_settings: { stability: 0.5 } },
          { text: 'Hello. ', voice_settings: { stability: 0.9 } },
        ],
        /^voice_settings field must be provided in the first message and then either be not provided or not change\.$/,
      ],
    ];
    for (const [messages, reason] of cases) {
      const client = await connect();
      for (const message of messages) client.send(message);
      const closed = await client.closed;
      expect(closed.code).toBe(1008);
      expect(closed.reason).toMatch(reason);
    }
    expect(fake.problems.map((problem) => problem.kind)).toEqual(['refused', 'refused', 'refused', 'refused']);
    expect(fake.texts).toEqual([]);
  });

  it('closes an idle stream with ElevenLabs’ inactivity words, cut to what a close frame holds', async () => {
    fake.faults.inactivityMs = 20;
    const client = await connect();
    client.send({ text: ' ' });
    const closed = await client.closed;
    expect(closed.code).toBe(1008);
    expect(closed.reason).toMatch(/^Have not received a new text input within the timeout of 20 seconds\. Streaming input terminated\./);
    expect(Buffer.byteLength(closed.reason)).toBeLessThanOrEqual(123);
  });

  it('drops the socket after a number of audio chunks when told to', async () => {
    fake.faults.dropAfterChunks = 1;
    const client = await connect();
    client.send({ text: ' ' });
    client.send({ text: 'A sentence long enough for several chunks. ', flush: true });
    expect((await client.closed).code).toBe(1006);
    expect(client.messages).toHaveLength(1);
  });
});
