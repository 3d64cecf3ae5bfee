import { createServer, type Server } from 'node:http';
import type { CallContext } from '../../agents/templates/call-context.js';
import type { AddressInfo } from 'node:net';
import pino from 'pino';
import { ModelService } from '../../models/model.service.js';
import type { Agent } from '../../agents/agent.entity.js';
import { FirstMessageMode, MessageRole, PipelineMode } from '../../agents/agent.enums.js';
import type { StreamPart, StreamRequest } from '../../models/model.types.js';
import type { CallConversations } from '../realtime/call-conversation.js';
import type { CallTracker } from '../../telephony/call-tracker.js';
import { BuiltinRecognizer, BuiltinSynthesizer, encodeSpeech } from './builtin-speech.js';
import type { SynthesisStream, Synthesizer } from './speech-ports.js';
import { StreamingCall, type TurnRules } from './streaming-call.js';
import type { MediaLink } from '../../telephony/carriers/media-link.js';

// The pipeline's rules for the turns a caller takes badly — silence, a turn that never ends, keys —
// and a synthesizer that never answers, with the builtin pair and in-memory stores: no database,
// no socket. The end-to-end behaviour on the real doors is in test/voice/streaming.test.ts.

const FRAME = 160;
const SILENCE = Buffer.alloc(FRAME, 0xff);

function agent(overrides: Partial<Agent> = {}): Agent {
  return {
    id: 'agent-1',
    name: 'Ada',
    status: 'active',
    instructions: 'Answer briefly.',
    policy: null,
    modelConfig: { model: 'builtin/echo' },
    voiceConfig: { pipelineMode: PipelineMode.streaming, sttProvider: 'builtin', ttsProvider: 'builtin' },
    memoryConfig: null,
    knowledgeBaseConfig: null,
    resolutionCriteria: [],
    ...overrides,
  } as unknown as Agent;
}

/** Echoes the caller's last words, as builtin/echo does, one word per event-loop turn. */
const echo = {
  async *stream(request: StreamRequest): AsyncGenerator<StreamPart> {
    const said = request.messages[request.messages.length - 1]!.content;
    for (const word of `Echo: ${said}`.match(/\S+\s*/g) ?? []) {
      if (request.signal.aborted) return;
      await new Promise((resolve) => setImmediate(resolve));
      yield { type: 'text', text: word };
    }
  },
};

/** A call on an in-memory line: the caller's frames in, the agent's audio and marks out (marks echoed at once, as if played). */
function harness(
  rules: Partial<TurnRules>,
  synthesizer: Synthesizer = new BuiltinSynthesizer({ voice: 'modem' }),
  options: { agent?: Partial<Agent>; model?: { stream(request: StreamRequest): AsyncIterable<StreamPart> }; context?: CallContext } = {},
) {
  const stored: { role: MessageRole; content: string }[] = [];
  const resolutions: { label: string; met: boolean; explanation: string }[] = [];
  const optedOut: string[] = [];
  const failed: string[] = [];
  let closed: { code: number; reason: string } | null = null;
  const conversations = {
    agent: async () => agent(options.agent),
    open: async () => 'conversation-1',
    callContext: async () => ({ context: options.context ?? null, answeredAt: options.context ? new Date(Date.now() - 1000) : null }),
    memory: async () => [],
    add: async (_id: string, _org: string, role: MessageRole, content: string) => void stored.push({ role, content }),
    close: async () => undefined,
    resolve: async (_id: string, outcome: { label: string; met: boolean; explanation: string }) => void resolutions.push(outcome),
    recordTurnLatency: async () => undefined,
  } as unknown as CallConversations;
  let call: StreamingCall;
  const link: MediaLink = {
    audio: () => undefined,
    clear: () => undefined,
    mark(name) {
      setImmediate(() => call.fromCarrier({ kind: 'mark', name }));
    },
    close(code, reason) {
      closed = { code, reason };
    },
    get open() {
      return closed === null;
    },
  };
  call = new StreamingCall(
    {
      conversations,
      tracker: { failLive: async (_id: string, reason: string) => void failed.push(reason) } as unknown as CallTracker,
      knowledge: { retrieve: async () => [], assertExists: async () => undefined },
      withContext: (work) => work(),
      model: options.model ?? echo,
      doNotCall: { optOut: async (_org: string, target: { callId: string }) => void optedOut.push(target.callId) },
      recognizers: { builtin: new BuiltinRecognizer() },
      synthesizers: { builtin: synthesizer },
      logger: pino({ level: 'silent' }),
      rules,
    },
    link,
    { id: 'call-1', organizationId: 'org-1', agentId: 'agent-1', contactId: null, to: '+15550001111' },
  );
  const audio = (ulaw: Buffer) => {
    for (let at = 0; at < ulaw.length; at += FRAME) call.fromCarrier({ kind: 'audio', payload: ulaw.subarray(at, at + FRAME).toString('base64') });
  };
  return {
    call,
    stored,
    resolutions,
    optedOut,
    failed,
    closed: () => closed,
    audio,
    silence: (ms: number) => audio(Buffer.concat(Array.from({ length: Math.ceil(ms / 20) }, () => SILENCE))),
    async until(test: () => boolean, what: string, timeoutMs = 5000) {
      const end = Date.now() + timeoutMs;
      while (!test()) {
        if (Date.now() > end) throw new Error(`never: ${what} (stored ${JSON.stringify(stored)})`);
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
    },
  };
}

const CONTEXT: CallContext = {
  agentId: 'agent-1',
  conversationId: null,
  call: { id: 'call-1', direction: 'outbound', from: '+15550002222', to: '+15550001111' },
  contact: { id: 'contact-1', name: 'Grace', phone: '+15550001111', timeZone: null, attributes: { day: 'Friday' } },
  program: null,
  executionId: null,
  organization: { name: 'Acme' },
  agent: { name: 'Ada' },
  variables: {},
  now: '2026-12-21T09:30:00.000Z',
  localTime: 'now',
};

describe('StreamingCall and its first message', () => {
  it('says the agent’s first message rendered for the call, with no model asked, and gives the model the rendered prompt', async () => {
    const systems: string[] = [];
    const recording = { stream: (request: StreamRequest) => (systems.push(request.system ?? ''), echo.stream(request)) };
    const line = harness({}, undefined, {
      context: CONTEXT,
      model: recording,
      agent: {
        instructions: 'You call {{contact.name}}.',
        firstMessage: 'Hi {{contact.name}}, see you {{contact.attributes.day}}.',
        variables: [],
      } as Partial<Agent>,
    });
    await line.call.start(() => undefined);
    await line.until(() => line.stored.length >= 1, 'the first message stored');
    expect(line.stored[0]).toEqual({ role: MessageRole.assistant, content: 'Hi Grace, see you Friday.' });
    expect(systems).toEqual([]);
    line.audio(encodeSpeech('Hello there'));
    line.silence(1500);
    await line.until(() => systems.length === 1, 'the model asked');
    expect(systems[0]).toContain('You call "Grace".');
  });

  it('says nothing first when the agent waits for the caller: the silence is counted from the start', async () => {
    const line = harness({ silenceMs: 200 }, undefined, {
      context: CONTEXT,
      agent: { firstMessageMode: FirstMessageMode.wait_for_caller, variables: [] } as Partial<Agent>,
    });
    await line.call.start(() => undefined);
    for (let sent = 0; line.stored.length === 0 && sent < 500; sent++) {
      line.silence(100);
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    expect(line.stored[0]!.content).toBe('Sorry, I did not hear you.');
  });
});

describe('StreamingCall', () => {
  it('a silent caller is asked once, then told goodbye, and the call ends', async () => {
    const line = harness({ silenceMs: 200 });
    await line.call.start(() => undefined);
    // Twilio sends the caller's frames without a break, silence too: the silence is counted in them.
    for (let sent = 0; line.closed() === null && sent < 500; sent++) {
      line.silence(100);
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    expect(line.stored.map((message) => message.content)).toEqual([
      'Hello, this is Ada. How can I help you?',
      'Sorry, I did not hear you.',
      'I did not hear anything, so I will end the call now. Goodbye.',
    ]);
    expect(line.closed()).toEqual({ code: 1000, reason: 'call ended' });
    expect(line.failed).toEqual([]);
  });

  it('a caller who never stops is answered with what was heard once the turn reaches its limit', async () => {
    const line = harness({ maxTurnMs: 150, silenceMs: 60_000 });
    await line.call.start(() => undefined);
    await line.until(() => line.stored.length === 1, 'the greeting stored');
    // Much longer than the limit, without a pause: the recognizer never ends the turn by itself.
    const speech = encodeSpeech('I have a very long story to tell you about my order and the parcel that never came');
    for (let at = 0; at < speech.length; at += FRAME * 10) {
      line.audio(speech.subarray(at, at + FRAME * 10));
      await new Promise((resolve) => setTimeout(resolve, 15));
    }
    line.silence(400);
    const said = 'I have a very long story to tell you about my order and the parcel that never came';
    const userTurns = () => line.stored.filter((message) => message.role === MessageRole.user).map((message) => message.content);
    // (The builtin recognizer finalizes where it is, even inside a word.)
    const letters = (text: string) => text.replace(/\s/g, '');
    await line.until(
      () => letters(userTurns().join('')) === letters(said) && line.stored[line.stored.length - 1]!.role === MessageRole.assistant,
      'every part answered',
    );
    // The speech was cut into turns at the limit, each answered whole (the caller speaking on does not cut that answer).
    const [, ...turns] = line.stored;
    expect(turns.length).toBeGreaterThanOrEqual(4);
    for (let index = 0; index < turns.length; index += 2) {
      expect(turns[index]!.role).toBe(MessageRole.user);
      expect(turns[index + 1]).toEqual({ role: MessageRole.assistant, content: `Echo: ${turns[index]!.content}` });
    }
    expect(turns[0]!.content.length).toBeLessThan(said.length);
    line.call.carrierClosed();
  });

  it('keys without # end the turn after the keys timeout, and are answered', async () => {
    const line = harness({ keysTimeoutMs: 30, silenceMs: 60_000 });
    await line.call.start(() => undefined);
    await line.until(() => line.stored.length === 1, 'the greeting stored');
    for (const digit of ['7', '0']) line.call.fromCarrier({ kind: 'dtmf', digit });
    line.call.fromCarrier({ kind: 'dtmf', digit: 'x' }); // not a key: ignored
    await line.until(() => line.stored.length === 3, 'the answer to the keys');
    expect(line.stored.slice(1)).toEqual([
      { role: MessageRole.user, content: '[the caller pressed 70]' },
      { role: MessageRole.assistant, content: 'Echo: [the caller pressed 70]' },
    ]);
    line.call.carrierClosed();
  });

  it('a synthesizer that never speaks fails its own call after the reply limit, without holding up another call', async () => {
    const hung: Synthesizer = {
      name: 'builtin',
      defaultModel: 'builtin',
      defaultVoice: 'builtin',
      missing: () => null,
      open: async (): Promise<SynthesisStream> => ({ push: () => undefined, end: () => undefined, cancel: () => undefined }),
    };
    const stuck = harness({ replyTimeoutMs: 100 }, hung);
    const fine = harness({ silenceMs: 60_000 });
    await Promise.all([stuck.call.start(() => undefined), fine.call.start(() => undefined)]);
    await fine.until(() => fine.stored.length === 1, 'the other call’s greeting');
    fine.audio(encodeSpeech('Are you open on Sunday?'));
    fine.silence(400);
    await fine.until(() => fine.stored.length === 3, 'the other call’s answer');
    expect(fine.stored[2]).toEqual({ role: MessageRole.assistant, content: 'Echo: Are you open on Sunday?' });
    // The stuck call's greeting never came; it is failed with a reason, never left hanging.
    stuck.audio(encodeSpeech('Hello?'));
    stuck.silence(400);
    await stuck.until(() => stuck.failed.length === 1, 'the stuck call failed');
    expect(stuck.failed[0]).toBe('The voice providers did not answer in time');
    expect(stuck.closed()).toEqual({ code: 1011, reason: 'voice provider unavailable' });
    fine.call.carrierClosed();
  });
});

// An OpenAI-compatible chat completions endpoint streaming as the Chat Completions API documents its
// streamed answer (platform.openai.com/docs/api-reference/chat-streaming, read 2026-11-26): server-sent
// `chat.completion.chunk` events, tool calls as `delta.tool_calls` fragments, then `[DONE]`. The first
// request is answered with a sentence and two tool calls; the one that carries their results, with a goodbye.
describe('StreamingCall with a model that calls its tools', () => {
  let server: Server;
  let baseUrl: string;
  const requests: Record<string, any>[] = [];

  beforeAll(async () => {
    server = createServer(async (req, res) => {
      const chunks: Buffer[] = [];
      for await (const chunk of req) chunks.push(chunk as Buffer);
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, any>;
      requests.push(body);
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      const send = (delta: Record<string, unknown>, finish: string | null = null) =>
        res.write(
          `data: ${JSON.stringify({ id: 'chatcmpl-1', object: 'chat.completion.chunk', created: 1_700_000_000, model: body.model, choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`,
        );
      const answered = body.messages.some((message: { role: string }) => message.role === 'tool');
      const said = String(body.messages.filter((message: { role: string }) => message.role === 'user').pop()?.content ?? '');
      if (!answered && /stop calling/i.test(said)) {
        send({ role: 'assistant', content: 'Understood, we will not call you again. Goodbye. ' });
        send({ tool_calls: [{ index: 0, id: 'call_3', type: 'function', function: { name: 'opt_out', arguments: '{"reason":"asked"}' } }] }, 'tool_calls');
      } else if (answered && /stop calling/i.test(said)) {
        send({ role: 'assistant', content: '' }, 'stop');
      } else if (!answered) {
        send({ role: 'assistant', content: 'Your visit is booked for Monday. ' });
        send({ tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: 'reach_resolution', arguments: '{"label":"Booked",' } }] });
        send({ tool_calls: [{ index: 0, function: { arguments: '"explanation":"Monday at nine"}' } }] });
        send({ tool_calls: [{ index: 1, id: 'call_2', type: 'function', function: { name: 'end_call', arguments: '{}' } }] }, 'tool_calls');
      } else {
        send({ role: 'assistant', content: 'Goodbye!' }, 'stop');
      }
      res.end('data: [DONE]\n\n');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  });
  afterAll(() => new Promise((resolve) => server.close(resolve)));

  it('records the resolution, says what the model wrote around the tools, and hangs up once the goodbye was heard', async () => {
    const model = new ModelService({ openaiCompatibleBaseUrl: baseUrl });
    const line = harness({ silenceMs: 60_000 }, new BuiltinSynthesizer({ voice: 'modem' }), {
      agent: {
        modelConfig: { model: 'openai-compatible/booker' },
        resolutionCriteria: [{ label: 'Booked', description: 'A visit was booked' }],
      } as Partial<Agent>,
      model,
    });
    await line.call.start(() => undefined);
    await line.until(() => line.stored.length === 1, 'the greeting stored');
    line.audio(encodeSpeech('Monday at nine, please.'));
    line.silence(400);
    await line.until(() => line.closed() !== null, 'the end of the call');
    expect(line.stored.slice(1)).toEqual([
      { role: MessageRole.user, content: 'Monday at nine, please.' },
      { role: MessageRole.assistant, content: 'Your visit is booked for Monday. Goodbye!' },
    ]);
    expect(line.resolutions).toEqual([{ label: 'Booked', met: true, explanation: 'Monday at nine' }]);
    expect(line.closed()).toEqual({ code: 1000, reason: 'call ended' });
    // The model was offered the agent's tools, the criteria as the label's choices, and was streamed.
    expect(requests[0]).toMatchObject({ stream: true, model: 'booker' });
    const tools = requests[0]!.tools.map((tool: { function: { name: string } }) => tool.function.name);
    expect(tools).toEqual(['end_call', 'reach_resolution', 'opt_out', 'send_digits']);
    expect(requests[0]!.tools[1].function.parameters.properties.label.enum).toEqual(['Booked']);
    expect(requests).toHaveLength(2);
    expect(line.optedOut).toEqual([]);
  });

  it('puts the number on the do-not-call list when the caller opts out, says the confirmation and hangs up', async () => {
    const model = new ModelService({ openaiCompatibleBaseUrl: baseUrl });
    const line = harness({ silenceMs: 60_000 }, new BuiltinSynthesizer({ voice: 'modem' }), {
      agent: { modelConfig: { model: 'openai-compatible/booker' } } as Partial<Agent>,
      model,
    });
    await line.call.start(() => undefined);
    await line.until(() => line.stored.length === 1, 'the greeting stored');
    line.audio(encodeSpeech('Please stop calling me.'));
    line.silence(400);
    await line.until(() => line.closed() !== null, 'the end of the call');
    await line.call.settled();
    expect(line.optedOut).toEqual(['call-1']);
    expect(line.stored.slice(1)).toEqual([
      { role: MessageRole.user, content: 'Please stop calling me.' },
      { role: MessageRole.assistant, content: 'Understood, we will not call you again. Goodbye.' },
    ]);
  });
});

describe('StreamingCall with a slow model', () => {
  it('says a filler while the model has written nothing, and stores only the model’s words', async () => {
    const slow = {
      async *stream(request: StreamRequest): AsyncGenerator<StreamPart> {
        await new Promise((resolve) => setTimeout(resolve, 150));
        yield* echo.stream(request);
      },
    };
    // The builtin synthesizer, noting every text it is given.
    const spoken: string[] = [];
    const builtin = new BuiltinSynthesizer({ voice: 'modem' });
    const noting: Synthesizer = {
      ...builtin,
      name: 'builtin',
      missing: () => null,
      open: async (options, events) => {
        const stream = await builtin.open(options, events);
        return { push: (text) => (spoken.push(text), stream.push(text)), end: () => stream.end(), cancel: () => stream.cancel() };
      },
    };
    const line = harness({ fillerAfterMs: 40, silenceMs: 60_000 }, noting, { model: slow });
    await line.call.start(() => undefined);
    await line.until(() => line.stored.length === 1, 'the greeting stored');
    line.audio(encodeSpeech('Is it open?'));
    line.silence(400);
    await line.until(() => line.stored.length === 3, 'the answer');
    expect(line.stored.slice(1)).toEqual([
      { role: MessageRole.user, content: 'Is it open?' },
      { role: MessageRole.assistant, content: 'Echo: Is it open?' },
    ]);
    expect(spoken.map((text) => text.trim())).toEqual(['Hello, this is Ada. How can I help you?', 'One moment.', 'Echo: Is it open?']);
    line.call.carrierClosed();
  });
});

describe('StreamingCall and an eager end of turn', () => {
  /** builtin/echo, recording what each request answered and whether it was aborted. */
  function recordingEcho() {
    const requests: { said: string; signal: AbortSignal }[] = [];
    const model = {
      stream(request: StreamRequest) {
        requests.push({ said: request.messages.at(-1)!.content, signal: request.signal });
        return echo.stream(request);
      },
    };
    return { requests, model };
  }
  const waits = { agent: { firstMessageMode: FirstMessageMode.wait_for_caller } as Partial<Agent> };

  it('answers afresh when the end of turn brings other words than the eager end of turn, even without a TurnResumed between', async () => {
    const { requests, model } = recordingEcho();
    const line = harness({}, undefined, { ...waits, model });
    await line.call.start(() => undefined);
    line.call.interim('Move it');
    line.call.eagerEndOfTurn('Move it');
    await line.until(() => requests.length === 1, 'the early request');
    expect(line.stored).toEqual([]);
    line.call.final('Move it to Monday', true);
    await line.until(() => line.stored.length >= 2, 'the turn answered');
    expect(requests.map((request) => [request.said, request.signal.aborted])).toEqual([
      ['Move it', true],
      ['Move it to Monday', false],
    ]);
    expect(line.stored).toEqual([
      { role: MessageRole.user, content: 'Move it to Monday' },
      { role: MessageRole.assistant, content: 'Echo: Move it to Monday' },
    ]);
  });

  it('keeps the early reply when the end of turn brings the same words: one request, stored after the end of turn', async () => {
    const { requests, model } = recordingEcho();
    const line = harness({}, undefined, { ...waits, model });
    await line.call.start(() => undefined);
    line.call.interim('Move it');
    line.call.eagerEndOfTurn('Move it');
    await line.until(() => requests.length === 1, 'the early request');
    line.call.final('Move it', true);
    await line.until(() => line.stored.length >= 2, 'the turn answered');
    expect(requests.map((request) => [request.said, request.signal.aborted])).toEqual([['Move it', false]]);
    expect(line.stored).toEqual([
      { role: MessageRole.user, content: 'Move it' },
      { role: MessageRole.assistant, content: 'Echo: Move it' },
    ]);
  });
});
