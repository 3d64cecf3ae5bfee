import { bytesToPcm, pcmToUlaw, Resampler } from '../../src/modules/voice/realtime/audio.js';
import { OpenAiSynthesizer } from '../../src/modules/voice/streaming/openai-speech.js';
import type { SynthesisEvents, SynthesisStream } from '../../src/modules/voice/streaming/speech-ports.js';
import { speechPcm, startFakeSpeech, SPEECH_TEST_KEY, type FakeSpeech } from '../support/fake-openai-speech.js';
import { SPEECH_SPEC_SOURCE, speechRequestProblem } from '../support/openai-speech-spec.js';

// The OpenAI synthesizer against its loopback double (POST /v1/audio/speech, checked against the
// vendored CreateSpeechRequest): sentences requested as pushed, played strictly in push order as
// μ-law 8 kHz, `textEnd` reaching what was pushed, and the service's refusals and broken streams
// told as `lost` in OpenAI's words without the key. No timings are asserted: every wait is for an
// event, with a generous limit.

let fake: FakeSpeech;

beforeAll(async () => {
  fake = await startFakeSpeech();
});

afterAll(async () => {
  await fake?.close();
});

beforeEach(() => {
  fake.requests.length = 0;
  fake.problems.length = 0;
  fake.fault = () => null;
  fake.apiKey = SPEECH_TEST_KEY;
});

afterEach(async () => {
  await fake.settled();
});

/** Everything a stream told, in order, and a promise for its end (done or lost). */
function listener() {
  const audio: { ulaw: Buffer; textEnd: number }[] = [];
  const told: string[] = [];
  let finish: (how: string) => void = () => undefined;
  const finished = new Promise<string>((resolve) => (finish = resolve));
  const events: SynthesisEvents = {
    audio: (ulaw, textEnd) => {
      audio.push({ ulaw, textEnd });
      told.push('audio');
    },
    done: () => {
      told.push('done');
      finish('done');
    },
    lost: (reason) => {
      told.push(`lost: ${reason}`);
      finish(`lost: ${reason}`);
    },
  };
  return { events, audio, told, finished, ulaw: () => Buffer.concat(audio.map((part) => part.ulaw)) };
}

/** What the whole reply should sound like: the double's PCM of every push, in order, as one 8 kHz μ-law stream. */
function expectedUlaw(pushes: string[]): Buffer {
  return pcmToUlaw(new Resampler(24_000, 8000).push(bytesToPcm(Buffer.concat(pushes.map(speechPcm)))));
}

function synthesizer(apiKey: string | undefined, timeoutMs?: number) {
  return new OpenAiSynthesizer({ apiKey, baseUrl: fake.baseUrl, ...(timeoutMs ? { timeoutMs } : {}) });
}

async function open(events: SynthesisEvents, options = { voiceId: '', model: '' }, apiKey?: string, timeoutMs?: number): Promise<SynthesisStream> {
  return synthesizer(apiKey ?? SPEECH_TEST_KEY, timeoutMs).open(options, events);
}

describe('the vendored CreateSpeechRequest', () => {
  it('names its source and refuses unknown keys, a missing voice and a format it does not list', () => {
    expect(SPEECH_SPEC_SOURCE.repository).toBe('https://github.com/openai/openai-openapi');
    expect(SPEECH_SPEC_SOURCE.commit).toMatch(/^[0-9a-f]{40}$/);
    expect(speechRequestProblem({ model: 'gpt-4o-mini-tts', voice: 'alloy', input: 'Hi.', response_format: 'pcm' })).toBeNull();
    expect(speechRequestProblem({ model: 'gpt-4o-mini-tts', voice: { id: 'voice_123' }, input: 'Hi.' })).toBeNull();
    expect(speechRequestProblem({ model: 'gpt-4o-mini-tts', voice: 'alloy', input: 'Hi.', sample_rate: 8000 })).toMatchObject({
      message: 'Unrecognized request argument supplied: sample_rate',
    });
    expect(speechRequestProblem({ model: 'gpt-4o-mini-tts', voice: { id: 'voice_123', name: 'x' }, input: 'Hi.' })).not.toBeNull();
    expect(speechRequestProblem({ model: 'gpt-4o-mini-tts', input: 'Hi.' })).toMatchObject({ param: 'voice', code: 'missing_required_parameter' });
    expect(speechRequestProblem({ model: 'gpt-4o-mini-tts', voice: 'alloy', input: 'Hi.', response_format: 'ulaw' })).toMatchObject({
      param: 'response_format',
      code: 'invalid_value',
    });
  });
});

describe('OpenAiSynthesizer', () => {
  it('says what it misses without a key, and open() refuses without one', async () => {
    expect(synthesizer(undefined).missing()).toBe('OPENAI_API_KEY is not set');
    expect(synthesizer(SPEECH_TEST_KEY).missing()).toBeNull();
    expect(synthesizer(SPEECH_TEST_KEY).name).toBe('openai');
    await expect(open(listener().events, undefined, '')).rejects.toThrow('OPENAI_API_KEY is not set');
  });

  it('speaks every push in push order as μ-law 8 kHz, textEnd reaching all that was pushed, then done', async () => {
    const pushes = ['Hello there, this is the first sentence.', ' And here is a second one, a little longer than the first.', ' Third.'];
    const heard = listener();
    const stream = await open(heard.events);
    // The first sentence comes slowly: the later ones are asked for at once and must wait for it.
    fake.fault = (input) => (input === pushes[0] ? { firstByteDelayMs: 50 } : null);
    for (const text of pushes) stream.push(text);
    stream.end();
    expect(await heard.finished).toBe('done');

    expect(fake.problems).toEqual([]);
    expect(fake.requests.map((request) => request.input).sort()).toEqual([...pushes].sort());
    for (const request of fake.requests) {
      expect(request.body).toEqual({ model: 'gpt-4o-mini-tts', voice: 'alloy', input: request.input, response_format: 'pcm' });
      expect(request.headers.authorization).toBe(`Bearer ${SPEECH_TEST_KEY}`);
    }
    // The reply is the pushes' audio in push order, as one stream (samples split across chunks included).
    const expected = expectedUlaw(pushes);
    const ulaw = heard.ulaw();
    expect(ulaw.length).toBeGreaterThanOrEqual(expected.length);
    expect(ulaw.subarray(0, expected.length).equals(expected)).toBe(true);
    // textEnd never goes back, is a push boundary, and ends at everything pushed, on the last audio before done.
    const ends = heard.audio.map((part) => part.textEnd);
    const total = pushes.join('').length;
    expect(ends).toEqual([...ends].sort((a, b) => a - b));
    const boundaries = [0, pushes[0]!.length, pushes[0]!.length + pushes[1]!.length, total];
    expect(ends.every((end) => boundaries.includes(end))).toBe(true);
    expect(ends.at(-1)).toBe(total);
    expect(heard.told.at(-1)).toBe('done');
    expect(heard.told.filter((event) => event === 'done')).toHaveLength(1);
  });

  it('plays a sentence only after the one before it, even when its audio comes first', async () => {
    const pushes = ['One slow sentence to begin with.', ' Two.'];
    const heard = listener();
    const stream = await open(heard.events);
    fake.fault = (input) => (input === pushes[0] ? { slowerThanRealTime: 0.2 } : null);
    stream.push(pushes[0]!);
    stream.push(pushes[1]!);
    // Both are asked for before the first has finished.
    await fake.waitForRequests(2);
    stream.end();
    expect(await heard.finished).toBe('done');
    const second = fake.requests.find((request) => request.input === pushes[1])!;
    expect(second.completed).toBe(true);
    const expected = expectedUlaw(pushes);
    expect(heard.ulaw().subarray(0, expected.length).equals(expected)).toBe(true);
  });

  it('sends the model and voice asked for, a custom voice by reference', async () => {
    const heard = listener();
    const stream = await open(heard.events, { voiceId: 'voice_abc123', model: 'gpt-4o-mini-tts-2025-12-15' });
    stream.push('Hello.');
    stream.end();
    expect(await heard.finished).toBe('done');
    expect(fake.problems).toEqual([]);
    expect(fake.requests[0]!.body).toEqual({ model: 'gpt-4o-mini-tts-2025-12-15', voice: { id: 'voice_abc123' }, input: 'Hello.', response_format: 'pcm' });
  });

  it('tells a refused key as lost, in OpenAI words, without the key', async () => {
    const wrongKey = 'sk-proj-wrongwrongwrongwrong9876';
    const heard = listener();
    const stream = await open(heard.events, undefined, wrongKey);
    stream.push('Hello.');
    stream.end();
    const how = await heard.finished;
    expect(how).toMatch(
      /^lost: OpenAI refused the speech request \(HTTP 401: Incorrect API key provided: sk-…\. You can find your API key at https:\/\/platform\.openai\.com\/account\/api-keys\.\)$/,
    );
    expect(how).not.toContain(wrongKey);
    expect(how).not.toContain('9876');
    expect(heard.audio).toEqual([]);
    expect(fake.problems).toEqual([]);
  });

  it.each([
    [429, /HTTP 429: Rate limit reached for gpt-4o-mini-tts/],
    [500, /HTTP 500: The server had an error while processing your request/],
  ])('tells an HTTP %i as lost with OpenAI words, after the sentences before it have played', async (status, words) => {
    const pushes = ['First sentence plays.', ' Second is refused.', ' Third is never heard.'];
    const heard = listener();
    const stream = await open(heard.events);
    fake.fault = (input) => (input === pushes[1] ? { status } : null);
    for (const text of pushes) stream.push(text);
    stream.end();
    const how = await heard.finished;
    expect(how).toMatch(words);
    // The first sentence was heard to its end (its textEnd told), nothing of the third.
    const first = expectedUlaw([pushes[0]!]);
    expect(
      heard
        .ulaw()
        .subarray(0, first.length - 8)
        .equals(first.subarray(0, first.length - 8)),
    ).toBe(true);
    expect(heard.audio.at(-1)!.textEnd).toBe(pushes[0]!.length);
    expect(heard.told.filter((event) => event.startsWith('lost'))).toHaveLength(1);
  });

  it('tells a body cut mid-stream as lost, and nothing after', async () => {
    const heard = listener();
    const stream = await open(heard.events);
    fake.fault = () => ({ dropAfterBytes: 5000 });
    stream.push('A sentence long enough to be cut in the middle of its audio.');
    stream.end();
    const how = await heard.finished;
    expect(how).toMatch(/^lost: OpenAI's speech stream broke off/);
    expect(heard.ulaw().length).toBeGreaterThan(0);
    expect(heard.audio.every((part) => part.textEnd === 0)).toBe(true);
    expect(heard.told.at(-1)).toBe(how);
  });

  it('tells a service that never answers, or stops sending, as lost after its timeout', async () => {
    for (const fault of [{ hang: true as const }, { stallAfterBytes: 4000 }]) {
      const heard = listener();
      const stream = await open(heard.events, undefined, undefined, 300);
      fake.fault = () => fault;
      stream.push('Nobody will hear this.');
      stream.end();
      expect(await heard.finished).toMatch(/^lost: OpenAI's speech (service did not answer within 300 ms|stream stalled \(no audio for 300 ms\))$/);
      await fake.settled();
    }
  });

  it('cancel() aborts every request and tells nothing more', async () => {
    const pushes = ['This one plays slowly, slowly, slowly, for a while.', ' This one is waiting.', ' And this one too.'];
    const heard = listener();
    const stream = await open(heard.events);
    fake.fault = () => ({ slowerThanRealTime: 1 });
    for (const text of pushes) stream.push(text);
    await fake.waitForRequests(3);
    // Wait for some audio, then the caller speaks over the agent.
    for (let waited = 0; heard.audio.length === 0 && waited < 5000; waited += 10) await new Promise((resolve) => setTimeout(resolve, 10));
    expect(heard.audio.length).toBeGreaterThan(0);
    stream.cancel();
    const told = heard.told.length;
    stream.push('Too late.');
    stream.end();
    await fake.settled();
    expect(fake.requests).toHaveLength(3);
    expect(fake.requests.every((request) => request.closedEarly && !request.completed)).toBe(true);
    expect(heard.told).toHaveLength(told);
    expect(heard.told).not.toContain('done');
  });

  it('finishes a reply with nothing pushed at once, and counts blank pushes as spoken without asking for them', async () => {
    const heard = listener();
    const stream = await open(heard.events);
    stream.end();
    expect(await heard.finished).toBe('done');
    const second = listener();
    const other = await open(second.events);
    other.push('Hi.');
    other.push('  ');
    other.end();
    expect(await second.finished).toBe('done');
    expect(fake.requests.map((request) => request.input)).toEqual(['Hi.']);
    expect(second.audio.at(-1)!.textEnd).toBe(5);
  });
});
