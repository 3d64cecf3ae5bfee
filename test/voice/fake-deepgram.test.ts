import WebSocket from 'ws';
import { frames, queryProblem, silence, startFakeDeepgram, tone, type FakeDeepgram } from '../support/fake-deepgram.js';
import { clientMessageProblem, DEEPGRAM_SPEC_SOURCE, serverMessageProblem } from '../support/deepgram-listen-spec.js';

// The Deepgram double checks what it is sent against the AsyncAPI Deepgram publishes, and refuses
// what the service refuses (a wrong key, a query parameter or value the channel does not list, a
// control message with an unknown field): these tests show it can fail, so the recognizer's tests
// that pass against it mean something. No database: the double alone, over loopback.

const KEY = 'dg-test-key';
const GOOD_QUERY =
  'model=nova-3&language=en&encoding=mulaw&sample_rate=8000&channels=1&interim_results=true&endpointing=300&utterance_end_ms=1000&vad_events=true&smart_format=true';

let fake: FakeDeepgram;

beforeAll(async () => {
  fake = await startFakeDeepgram({ apiKey: KEY });
});

afterAll(async () => {
  await fake?.close();
});

beforeEach(() => {
  fake.problems.length = 0;
  fake.refuse = null;
  fake.idleTimeoutMs = 10_000;
});

/** The double's answer to a handshake that it refuses: the status, Deepgram's headers and body. */
function refused(query: string, headers: Record<string, string> = { Authorization: `Token ${KEY}` }, path = '/v1/listen') {
  return new Promise<{ status: number; dgError: string | undefined; requestId: string | undefined; body: string }>((resolve, reject) => {
    const socket = new WebSocket(`${fake.baseUrl}${path}?${query}`, { headers });
    socket.once('open', () => reject(new Error('the double accepted the handshake')));
    socket.once('error', reject);
    socket.once('unexpected-response', (_request, response) => {
      let body = '';
      response.on('data', (chunk: Buffer) => (body += chunk.toString()));
      response.on('end', () => {
        socket.terminate();
        const header = (name: string) => [response.headers[name]].flat()[0];
        resolve({ status: response.statusCode ?? 0, dgError: header('dg-error'), requestId: header('dg-request-id'), body });
      });
    });
  });
}

/** A client of the double: its socket, every message it got, and a way to wait for one. */
async function connect(query = GOOD_QUERY) {
  const messages: Record<string, any>[] = [];
  const socket = new WebSocket(`${fake.baseUrl}/v1/listen?${query}`, { headers: { Authorization: `Token ${KEY}` } });
  socket.on('message', (data) => messages.push(JSON.parse(data.toString()) as Record<string, any>));
  const closed = new Promise<{ code: number; reason: string }>((resolve) =>
    socket.once('close', (code, reason) => resolve({ code, reason: reason.toString() })),
  );
  const session = fake.nextSession();
  await new Promise((resolve, reject) => socket.once('open', resolve).once('error', reject));
  const until = async (test: () => boolean, what: string) => {
    for (let waited = 0; waited < 5000; waited += 10) {
      if (test()) return;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    throw new Error(`no ${what} from the double: ${JSON.stringify(messages)}`);
  };
  return { socket, messages, closed, until, session: await session };
}

describe('the vendored description', () => {
  it('names its source and knows the channel messages', () => {
    expect(DEEPGRAM_SPEC_SOURCE.repository).toBe('https://github.com/deepgram/deepgram-api-specs');
    expect(DEEPGRAM_SPEC_SOURCE.commit).toMatch(/^[0-9a-f]{40}$/);
    expect(clientMessageProblem({ type: 'KeepAlive' })).toBeNull();
    expect(clientMessageProblem({ type: 'CloseStream' })).toBeNull();
    expect(clientMessageProblem({ type: 'Finalize' })).toBeNull();
    expect(clientMessageProblem({ type: 'Flush' })).toMatch(/not a client message/);
    expect(clientMessageProblem({ type: 'KeepAlive', interval: 5 })).toBe("unknown field 'interval'");
    expect(serverMessageProblem({ type: 'SpeechStarted', channel: [0, 1], timestamp: 0.2 })).toBeNull();
    expect(serverMessageProblem({ type: 'UtteranceEnd', channel: [0, 1] })).toMatch(/last_word_end/);
  });

  it('refuses query parameters the channel does not list, and values its schemas refuse', () => {
    expect(queryProblem(new URLSearchParams(GOOD_QUERY + '&keyterm=Acme&keyterm=Zed'))).toBeNull();
    expect(queryProblem(new URLSearchParams('model=nova-3&no_such_thing=1'))).toBe("Unknown query parameter: 'no_such_thing'.");
    expect(queryProblem(new URLSearchParams('encoding=mp3&sample_rate=8000'))).toMatch(/Invalid value for 'encoding': 'mp3'/);
    expect(queryProblem(new URLSearchParams('encoding=mulaw'))).toMatch(/sample_rate/);
    expect(queryProblem(new URLSearchParams('endpointing=soon'))).toMatch(/endpointing/);
    expect(queryProblem(new URLSearchParams('interim_results=yes'))).toMatch(/interim_results/);
    expect(queryProblem(new URLSearchParams('model=nova-3&model=nova-2'))).toMatch(/more than once/);
    expect(queryProblem(new URLSearchParams('model=nova-3&keywords=Acme:2'))).toMatch(/keyterm/);
  });
});

describe('the handshake', () => {
  it('refuses a wrong or missing key with 401 and Deepgram’s INVALID_AUTH, in the dg-error header and the body', async () => {
    const keys: Record<string, string>[] = [{ Authorization: 'Token not-the-key' }, { Authorization: `Bearer ${KEY}` }, {}];
    for (const headers of keys) {
      const answer = await refused(GOOD_QUERY, headers);
      expect(answer.status).toBe(401);
      expect(JSON.parse(answer.body)).toEqual({ err_code: 'INVALID_AUTH', err_msg: 'Invalid credentials.', request_id: answer.requestId });
      expect(answer.dgError).toBe(answer.body);
    }
  });

  it('refuses an unknown query parameter, a bad encoding, and an unknown path', async () => {
    const unknown = await refused(`${GOOD_QUERY}&no_such_thing=1`);
    expect(unknown.status).toBe(400);
    expect(JSON.parse(unknown.body).err_msg).toBe("Unknown query parameter: 'no_such_thing'.");
    const encoding = await refused(GOOD_QUERY.replace('encoding=mulaw', 'encoding=ulaw'));
    expect(encoding.status).toBe(400);
    expect(JSON.parse(encoding.dgError!).err_msg).toMatch(/'encoding': 'ulaw'/);
    expect((await refused(GOOD_QUERY, undefined, '/v3/listen')).status).toBe(404);
    expect(fake.sessions.length).toBe(0);
  });

  it('refuses on Flux (/v2/listen) what its own channel does not list: /v1/listen’s parameters, a model of /v1, a Flux model on /v1', async () => {
    const v1Query = await refused(GOOD_QUERY.replace('model=nova-3', 'model=flux-general-en'), undefined, '/v2/listen');
    expect(v1Query.status).toBe(400);
    expect(JSON.parse(v1Query.body).err_msg).toBe("Unknown query parameter: 'language'.");
    const nova = await refused('model=nova-3&encoding=mulaw&sample_rate=8000', undefined, '/v2/listen');
    expect(JSON.parse(nova.body).err_msg).toMatch(/'model': 'nova-3'/);
    const threshold = await refused('model=flux-general-en&encoding=mulaw&sample_rate=8000&eot_threshold=0.95', undefined, '/v2/listen');
    expect(JSON.parse(threshold.body).err_msg).toMatch(/'eot_threshold': '0.95'/);
    const fluxOnV1 = await refused(GOOD_QUERY.replace('model=nova-3', 'model=flux-general-en'));
    expect(JSON.parse(fluxOnV1.body).err_msg).toMatch(/'model': 'flux-general-en'/);
    expect(fake.sessions.length).toBe(0);
  });

  it('refuses every handshake with the status asked for', async () => {
    fake.refuse = { status: 429, err_code: 'TOO_MANY_REQUESTS', err_msg: 'Too many requests.' };
    const answer = await refused(GOOD_QUERY);
    expect(answer.status).toBe(429);
    expect(JSON.parse(answer.body).err_msg).toBe('Too many requests.');
  });
});

describe('a session', () => {
  it('transcribes a scripted turn heard in μ-law audio, with Deepgram’s messages timed in audio seconds', async () => {
    fake.script(['Hello there']);
    const client = await connect();
    for (const frame of frames(Buffer.concat([silence(200), tone(600), silence(1400)]))) client.socket.send(frame);
    await client.until(() => client.messages.some((message) => message.type === 'UtteranceEnd'), 'UtteranceEnd');
    const shapes = client.messages.map((message) =>
      message.type === 'Results'
        ? `${message.is_final ? 'final' : 'interim'}:${message.channel.alternatives[0].transcript}:${message.speech_final}`
        : message.type,
    );
    expect(shapes).toEqual(['SpeechStarted', 'interim:Hello:false', 'interim:Hello there:false', 'final:Hello there:true', 'UtteranceEnd']);
    const [started, , , final, utteranceEnd] = client.messages;
    expect(started!.timestamp).toBe(0.2);
    // The final covers the audio from the stream's start to where the endpoint was decided (300 ms after the tone).
    expect(final!.start).toBe(0);
    expect(final!.duration).toBe(1.1);
    expect(final!.channel.alternatives[0].words.at(-1).end).toBe(0.8);
    expect(utteranceEnd!.last_word_end).toBe(0.8);
    expect(client.session.audioBytes).toBe(8 * 2200);
    expect(fake.problems).toEqual([]);
    client.socket.close();
  });

  it('counts KeepAlives, answers Finalize with a from_finalize final and CloseStream with Metadata and a normal close', async () => {
    fake.script(['Cut short']);
    const client = await connect();
    client.socket.send(JSON.stringify({ type: 'KeepAlive' }));
    for (const frame of frames(tone(400))) client.socket.send(frame);
    client.socket.send(JSON.stringify({ type: 'Finalize' }));
    await client.until(() => client.messages.some((message) => message.from_finalize === true), 'from_finalize');
    const finalized = client.messages.find((message) => message.from_finalize === true)!;
    expect(finalized).toMatchObject({ is_final: true, speech_final: false, channel: { alternatives: [{ transcript: 'Cut short' }] } });
    client.socket.send(JSON.stringify({ type: 'CloseStream' }));
    expect(await client.closed).toEqual({ code: 1000, reason: '' });
    expect(client.messages.at(-1)).toMatchObject({ type: 'Metadata', duration: 0.4, channels: 1 });
    expect(client.session).toMatchObject({ keepAlives: 1, finalizes: 1, closeStreamed: true });
    expect(fake.problems).toEqual([]);
  });

  it('closes with 1008 on a control message with an unknown field, and on an empty audio frame', async () => {
    const first = await connect();
    first.socket.send(JSON.stringify({ type: 'KeepAlive', every: 5 }));
    expect(await first.closed).toMatchObject({ code: 1008, reason: expect.stringContaining("unknown field 'every'") });
    const second = await connect();
    second.socket.send(Buffer.alloc(0));
    expect((await second.closed).code).toBe(1008);
    expect(fake.problems.map((problem) => problem.kind)).toEqual(['refused', 'refused']);
  });

  it('closes an idle socket with 1011 NET-0001, as Deepgram does after 10 s', async () => {
    fake.idleTimeoutMs = 50;
    const client = await connect();
    expect(await client.closed).toEqual({ code: 1011, reason: 'NET-0001' });
  });
});
