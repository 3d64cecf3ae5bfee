import { DeepgramRecognizer, listenQuery, MAX_QUEUED_BYTES } from '../../src/modules/voice/streaming/deepgram.js';
import type { RecognizerEvents, RecognizerOptions } from '../../src/modules/voice/streaming/speech-ports.js';
import { frames, silence, startFakeDeepgram, tone, type FakeDeepgram } from '../support/fake-deepgram.js';

// The Deepgram recognizer against the loopback double: μ-law audio in, the pipeline's events out, and
// everything it sends (the handshake's query, KeepAlive, Finalize, CloseStream, the audio) checked by
// the double against Deepgram's AsyncAPI. Time in these tests is audio time (the double hears the
// frames, not the clock), so nothing here depends on how fast the machine is.

const KEY = 'dg-secret-key-1234';
const OPTIONS: RecognizerOptions = { model: 'nova-3', language: 'en', keyterms: ['Acme', 'Zed Deluxe'] };

let fake: FakeDeepgram;

beforeAll(async () => {
  fake = await startFakeDeepgram({ apiKey: KEY });
});

afterAll(async () => {
  await fake?.close();
});

beforeEach(() => {
  fake.problems.length = 0;
  Object.assign(fake, { refuse: null, hang: false, openDelayMs: 0, messageDelayMs: 0, duplicateFinals: false, idleTimeoutMs: 10_000 });
});

afterEach(() => {
  // Whatever a test did, the recognizer sent nothing Deepgram would refuse and the double sent only Deepgram's messages.
  expect(fake.problems).toEqual([]);
});

/** The events a session told, in order, as short strings; and a way to wait until one is there. */
function recorder() {
  const told: string[] = [];
  const events: RecognizerEvents = {
    speechStarted: () => told.push('speechStarted'),
    interim: (text) => told.push(`interim ${text}`),
    final: (text, endOfTurn, audioEndMs) => told.push(`final ${text} | ${endOfTurn} | ${audioEndMs}`),
    utteranceEnd: (audioEndMs) => told.push(`utteranceEnd ${audioEndMs}`),
    eagerEndOfTurn: (text, audioEndMs) => told.push(`eager ${text} | ${audioEndMs}`),
    turnResumed: () => told.push('turnResumed'),
    lost: (reason) => told.push(`lost ${reason}`),
  };
  const until = async (test: (told: string[]) => boolean, what: string) => {
    for (let waited = 0; waited < 5000; waited += 10) {
      if (test(told)) return;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    throw new Error(`no ${what}; told: ${JSON.stringify(told)}`);
  };
  return { told, events, until };
}

const count = (prefix: string) => (told: string[]) => told.filter((event) => event.startsWith(prefix)).length;

/** Two caller turns as Twilio would send them: a tone for each, with silence around. */
const TWO_TURNS = frames(Buffer.concat([tone(600), silence(1500), tone(400), silence(1500)]));
const TWO_TURNS_TOLD = [
  'speechStarted',
  'interim Hello',
  'interim Hello there',
  'final Hello there | true | 600',
  'utteranceEnd 600',
  'speechStarted',
  'interim Yes',
  'interim Yes please',
  'final Yes please | true | 2500',
  'utteranceEnd 2500',
];

function recognizer(options: Partial<ConstructorParameters<typeof DeepgramRecognizer>[0]> = {}) {
  return new DeepgramRecognizer({ apiKey: KEY, baseUrl: fake.baseUrl, ...options });
}

describe('DeepgramRecognizer', () => {
  it('says what it misses, and its name and default model', () => {
    expect(new DeepgramRecognizer({}).missing()).toBe('DEEPGRAM_API_KEY is not set');
    expect(recognizer().missing()).toBeNull();
    expect(recognizer()).toMatchObject({ name: 'deepgram', defaultModel: 'nova-3' });
  });

  it('asks for μ-law 8 kHz with interim results, endpointing, utterance ends, VAD events and the key terms (Nova-3 only)', async () => {
    const { events } = recorder();
    const opened = fake.nextSession();
    const session = await recognizer().open(OPTIONS, events);
    const heard = await opened;
    expect(heard.headers.authorization).toBe(`Token ${KEY}`);
    expect(Object.fromEntries(heard.query)).toEqual({
      model: 'nova-3',
      language: 'en',
      encoding: 'mulaw',
      sample_rate: '8000',
      channels: '1',
      interim_results: 'true',
      endpointing: '300',
      utterance_end_ms: '1000',
      vad_events: 'true',
      smart_format: 'true',
      keyterm: 'Zed Deluxe',
    });
    expect(heard.query.getAll('keyterm')).toEqual(['Acme', 'Zed Deluxe']);
    expect(listenQuery({ model: 'nova-2-phonecall', language: 'en', keyterms: ['Acme'] }).has('keyterm')).toBe(false);
    session.close();
    await heard.closed;
  });

  it('turns two spoken turns into the pipeline’s events, in order, timed in milliseconds of the call’s audio', async () => {
    fake.script(['Hello there', 'Yes please']);
    const { told, events, until } = recorder();
    const opened = fake.nextSession();
    const session = await recognizer().open(OPTIONS, events);
    for (const frame of TWO_TURNS) session.send(frame);
    await until((told) => count('utteranceEnd')(told) === 2, 'second UtteranceEnd');
    expect(told).toEqual(TWO_TURNS_TOLD);
    const heard = await opened;
    expect(heard.audio()).toEqual(Buffer.concat(TWO_TURNS));
    session.close();
    await heard.closed;
  });

  it('tells the same events when every Deepgram message comes late, and each final once when Deepgram repeats one', async () => {
    fake.messageDelayMs = 30;
    fake.duplicateFinals = true;
    fake.script(['Hello there', 'Yes please']);
    const { told, events, until } = recorder();
    const opened = fake.nextSession();
    const session = await recognizer().open(OPTIONS, events);
    for (const frame of TWO_TURNS) session.send(frame);
    await until((told) => count('utteranceEnd')(told) === 2, 'second UtteranceEnd');
    const heard = await opened;
    expect(heard.sent.filter((message) => message.is_final).length).toBe(4);
    expect(told).toEqual(TWO_TURNS_TOLD);
    session.close();
    await heard.closed;
  });

  it('sends KeepAlive while no audio flows, Finalize on finalize() and CloseStream on close(), and tells nothing after close()', async () => {
    fake.script(['Cut short']);
    const { told, events, until } = recorder();
    const opened = fake.nextSession();
    const session = await recognizer({ keepAliveMs: 40 }).open(OPTIONS, events);
    const heard = await opened;
    await heard.until(() => heard.keepAlives >= 2, 'second KeepAlive');
    for (const frame of frames(tone(400))) session.send(frame);
    session.finalize();
    await until((told) => count('final')(told) === 1, 'final after Finalize');
    expect(told.at(-1)).toBe('final Cut short | false | 400');
    expect(heard.finalizes).toBe(1);
    session.close();
    expect(await heard.closed).toEqual({ code: 1000, reason: '' });
    expect(heard.closeStreamed).toBe(true);
    expect(heard.received.map((message) => message.type).filter((type) => type !== 'KeepAlive')).toEqual(['Finalize', 'CloseStream']);
    expect(told.some((event) => event.startsWith('lost'))).toBe(false);
  });

  it('sends the audio given while the socket opens first, all of it, in order', async () => {
    fake.openDelayMs = 150;
    fake.script(['Early words']);
    const { told, events, until } = recorder();
    const opened = fake.nextSession();
    const started = recognizer().start(OPTIONS, events);
    const audio = frames(Buffer.concat([tone(500), silence(1200)]));
    for (const frame of audio) started.session.send(frame);
    await started.opened;
    const heard = await opened;
    await until((told) => count('utteranceEnd')(told) === 1, 'UtteranceEnd');
    expect(heard.audio()).toEqual(Buffer.concat(audio));
    expect(told).toContain('final Early words | true | 500');
    started.session.close();
    await heard.closed;
  });

  it('keeps at most the open timeout’s worth of audio while the socket opens, dropping the oldest', async () => {
    fake.openDelayMs = 100;
    const opened = fake.nextSession();
    const started = recognizer().start(OPTIONS, recorder().events);
    const audio = frames(silence(12_000));
    for (const frame of audio) started.session.send(frame);
    await started.opened;
    const heard = await opened;
    await heard.until(() => heard.audioBytes === MAX_QUEUED_BYTES, 'the queued audio');
    expect(heard.audio()).toEqual(Buffer.concat(audio).subarray(-MAX_QUEUED_BYTES));
    started.session.close();
    await heard.closed;
  });

  it('rejects open() with Deepgram’s words when the key is refused, never the key', async () => {
    const { told, events } = recorder();
    const refused = recognizer({ apiKey: 'dg-wrong-key-5678' }).open(OPTIONS, events);
    await expect(refused).rejects.toThrow('Deepgram refused the session (HTTP 401: Invalid credentials.)');
    const message = await refused.catch((error: Error) => error.message);
    expect(message).not.toContain('dg-wrong-key-5678');
    expect(told).toEqual([]);
    fake.problems.length = 0;
  });

  it('rejects open() with Deepgram’s words for any refusal, and when Deepgram cannot be reached or never answers', async () => {
    fake.refuse = { status: 402, err_code: 'ASR_PAYMENT_REQUIRED', err_msg: 'Project does not have enough credits for an ASR request.' };
    await expect(recognizer().open(OPTIONS, recorder().events)).rejects.toThrow(
      'Deepgram refused the session (HTTP 402: Project does not have enough credits for an ASR request.)',
    );
    fake.refuse = null;
    fake.problems.length = 0;
    await expect(new DeepgramRecognizer({ apiKey: KEY, baseUrl: 'ws://127.0.0.1:1' }).open(OPTIONS, recorder().events)).rejects.toThrow(
      /^Deepgram could not be reached \(/,
    );
    fake.hang = true;
    await expect(recognizer({ openTimeoutMs: 100 }).open(OPTIONS, recorder().events)).rejects.toThrow('Deepgram did not open the session within 0.1 s');
    fake.hang = false;
    const closedEarly = recognizer().start(OPTIONS, recorder().events);
    closedEarly.session.close();
    await expect(closedEarly.opened).rejects.toThrow('The Deepgram session was closed before it opened');
  });

  it('tells lost() with Deepgram’s close code and words when the socket is dropped, once', async () => {
    fake.script(['Hello there']);
    const { told, events, until } = recorder();
    const opened = fake.nextSession();
    const session = await recognizer().open(OPTIONS, events);
    const heard = await opened;
    for (const frame of frames(tone(300))) session.send(frame);
    await until((told) => told.includes('speechStarted'), 'speechStarted');
    heard.drop({ code: 1011, reason: 'NET-0000' });
    await until((told) => count('lost')(told) === 1, 'lost');
    expect(told.at(-1)).toBe('lost Deepgram closed the session (code 1011: NET-0000)');
    session.send(tone(20));
    session.finalize();
    session.close();

    const second = recorder();
    const openedAgain = fake.nextSession();
    await recognizer().open(OPTIONS, second.events);
    (await openedAgain).drop('terminate');
    await second.until((told) => count('lost')(told) === 1, 'lost');
    expect(second.told).toEqual(['lost Deepgram closed the session (code 1006)']);
  });

  it('tells lost() when Deepgram closes an idle session (NET-0001) that no KeepAlive kept open', async () => {
    fake.idleTimeoutMs = 60;
    const { told, events, until } = recorder();
    await recognizer({ keepAliveMs: 60_000 }).open(OPTIONS, events);
    await until((told) => count('lost')(told) === 1, 'lost');
    expect(told).toEqual(['lost Deepgram closed the session (code 1011: NET-0001)']);
  });
});

describe('DeepgramRecognizer on Flux (/v2/listen)', () => {
  const FLUX: RecognizerOptions = { model: 'nova-3', language: 'en', keyterms: ['Acme'], turnDetection: { type: 'semantic', eagerness: 'auto' } };

  it('opens /v2/listen for a semantic end of turn and tells Flux’s TurnInfo as the same events: StartOfTurn, the turn’s words so far, EndOfTurn final', async () => {
    fake.script(['Hello there', 'Yes please']);
    const { told, events, until } = recorder();
    const opened = fake.nextSession();
    const session = await recognizer().open(FLUX, events);
    const heard = await opened;
    expect(heard.flux).toBe(true);
    // auto: Deepgram's default eot_threshold (0.7), and the eager one under it.
    expect(Object.fromEntries(heard.query)).toEqual({
      model: 'flux-general-en',
      encoding: 'mulaw',
      sample_rate: '8000',
      eager_eot_threshold: '0.5',
      keyterm: 'Acme',
    });
    for (const frame of TWO_TURNS) session.send(frame);
    await until((told) => count('final')(told) === 2, 'the second EndOfTurn');
    // Each turn's EagerEndOfTurn (the words so far, and a likely end) comes before its EndOfTurn.
    const eager = (words: string, endMs: number) => [`interim ${words}`, `eager ${words} | ${endMs}`];
    expect(told).toEqual([
      ...TWO_TURNS_TOLD.slice(0, 3),
      ...eager('Hello there', 600),
      ...TWO_TURNS_TOLD.slice(3, 4),
      ...TWO_TURNS_TOLD.slice(5, 8),
      ...eager('Yes please', 2500),
      TWO_TURNS_TOLD[8],
    ]);
    session.close();
    await heard.closed;
    expect(heard.received.map((message) => message.type)).toEqual(['CloseStream']);
  });

  it('tells TurnResumed when the caller goes on after an EagerEndOfTurn, and the whole turn’s words at its EndOfTurn', async () => {
    fake.script(['one two | three four']);
    const { told, events, until } = recorder();
    const opened = fake.nextSession();
    const session = await recognizer().open({ ...FLUX, turnDetection: { type: 'semantic', eagerness: 'high' } }, events);
    const heard = await opened;
    expect(heard.query.get('eot_threshold')).toBe('0.6');
    expect(heard.query.get('eager_eot_threshold')).toBe('0.4');
    // A pause of 250 ms: past the eager threshold's 200 ms, short of the end of turn's 300 ms (the double's 500 ms per unit of threshold).
    for (const frame of frames(Buffer.concat([tone(250), silence(250), tone(250), silence(1000)]))) session.send(frame);
    await until((told) => count('final')(told) === 1, 'the EndOfTurn');
    expect(told).toEqual([
      'speechStarted',
      'interim one',
      'interim one two',
      'interim one two',
      'eager one two | 260',
      'interim one two',
      'turnResumed',
      'interim one two three',
      'interim one two three four',
      'interim one two three four',
      'eager one two three four | 760',
      'final one two three four | true | 760',
    ]);
    session.close();
    await heard.closed;
  });

  it('makes the turn’s words so far final on finalize() (Flux has no Finalize), and tells only the words after them when the turn goes on', async () => {
    fake.script(['one two three four']);
    const { told, events, until } = recorder();
    const opened = fake.nextSession();
    const session = await recognizer().open({ ...FLUX, model: 'flux-general-en', turnDetection: null }, events);
    const heard = await opened;
    for (const frame of frames(tone(250))) session.send(frame);
    await until((told) => told.includes('interim one two'), 'two words heard');
    session.finalize();
    for (const frame of frames(Buffer.concat([tone(250), silence(1000)]))) session.send(frame);
    await until((told) => count('final')(told) === 2, 'the EndOfTurn');
    expect(told).toEqual([
      'speechStarted',
      'interim one',
      'interim one two',
      'final one two | false | 200',
      'interim three',
      'interim three four',
      'final three four | true | 500',
    ]);
    session.close();
    await heard.closed;
    expect(heard.finalizes).toBe(0);
  });
});
