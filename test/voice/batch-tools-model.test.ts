import type { TestApp, TestOrganization } from '../helpers/app.js';
import { FakeOpenAiChat } from '../support/fake-openai-chat.js';
import { startFakeTwilio, type FakeCall, type FakeTwilio } from '../support/fake-twilio.js';
import { runUntilCompleted, startTwilioApp } from '../telephony/fixtures.js';
import { callsOf, closedConversation, createVoiceAgent, messagesOf, voiceCampaign } from './fixtures.js';
import { BILLING } from './transfer-fixtures.js';
import { WORDS } from '../../src/modules/voice/voice-actions.js';

// A batch call's tools with a real model client: the agent's text model is `openai-compatible/…`,
// served by the loopback Chat Completions double (every request checked against OpenAI's published
// CreateChatCompletionRequest). The model is offered transfer_call and send_digits on each caller
// turn; a model server that takes no tools (Ollama answers such a request 400 "… does not support
// tools") is asked again without them, so the call goes on as it did before batch calls had tools.
// PGlite, and PostgreSQL with TEST_DATABASE_URL.

let fake: FakeTwilio;
let chat: FakeOpenAiChat;
let app: TestApp;
let acme: TestOrganization;

beforeAll(async () => {
  fake = await startFakeTwilio();
  chat = await new FakeOpenAiChat().start();
  app = await startTwilioApp(fake, undefined, { providers: { openaiCompatibleBaseUrl: chat.url, openaiCompatibleApiKey: 'sk-local' } });
  acme = await app.organization('Acme batch model');
}, 60_000);

afterAll(async () => {
  await app?.close();
  await fake?.close();
  await chat?.close();
});

beforeEach(() => {
  chat.requests.length = 0;
});

afterEach(() => {
  expect(chat.problems).toEqual([]);
  expect(fake.twimlProblems()).toEqual([]);
});

const toolNames = (request: Record<string, any>) => ((request.tools ?? []) as { function: { name: string } }[]).map((tool) => tool.function.name);

/** A one-contact campaign of `agentId` whose callee says `turns`: the call as the double heard it, and the transcript. */
async function runCall(agentId: string, turns: string[]) {
  const campaign = await voiceCampaign(acme, fake, { agentId });
  fake.script(() => ({ outcome: 'answered', durationSeconds: 30, stepMs: 5, turns }));
  await runUntilCompleted(app, acme, campaign.executionId, fake);
  const heard = fake.calls().find((call) => call.to === campaign.phones[0]) as FakeCall;
  const [record] = await callsOf(app, campaign.executionId);
  await closedConversation(acme, record!.conversation_id!, 60_000);
  const messages = (await messagesOf(app, record!.conversation_id!)).map((message) => [message.role, message.content]);
  return { heard, record: record!, messages };
}

describe('a batch agent on an OpenAI-compatible model', () => {
  it('is offered transfer_call and send_digits; the model’s transfer_call is the turn’s <Dial>', async () => {
    const agentId = await createVoiceAgent(acme, {
      firstMessage: 'Hello, this is Acme.',
      modelConfig: { model: 'openai-compatible/shop-llm' },
      transferDestinations: [BILLING],
    });
    chat.answer = (_request, n) =>
      n === 0 ? { toolCalls: [{ name: 'transfer_call', arguments: { destination: BILLING.name } }] } : { content: 'One moment, please.' };
    const { heard, record } = await runCall(agentId, ['I need to talk about my bill']);
    expect(toolNames(chat.requests[0]!)).toEqual(['send_digits', 'transfer_call']);
    expect(heard.transfers).toEqual([BILLING.number]);
    expect(heard.heard).toContain(`Connecting you to ${BILLING.name}.`);
    expect(record.outcome).not.toBe('failed');
  });

  it('on a model server that takes no tools (400), the turn is asked again without them and answered: the call goes on', async () => {
    const agentId = await createVoiceAgent(acme, {
      firstMessage: 'Hello, this is Acme.',
      modelConfig: { model: 'openai-compatible/gemma3:4b' },
      transferDestinations: [BILLING],
    });
    chat.answer = (request) =>
      request.tools
        ? { refuse: { status: 400, message: 'registry.ollama.ai/library/gemma3:4b does not support tools' } }
        : { content: 'Happy to help with that.' };
    const { heard, record, messages } = await runCall(agentId, ['Can you move my appointment?', 'Thanks']);
    // Each turn: the request with the tools, refused; the same turn without them, answered.
    expect(chat.requests.map((request) => toolNames(request))).toEqual([['send_digits', 'transfer_call'], [], ['send_digits', 'transfer_call'], []]);
    expect(chat.requests[1]!.messages).toEqual(chat.requests[0]!.messages);
    expect(heard.heard).toEqual([
      'Hello, this is Acme.',
      WORDS.filler,
      'Happy to help with that.',
      WORDS.filler,
      'Happy to help with that.',
      WORDS.reprompt,
      WORDS.noInputGoodbye,
    ]);
    expect(record.status).toBe('completed');
    expect(record.error_text).toBeNull();
    // One user message per turn: the turn asked twice is stored once.
    expect(messages.filter(([role]) => role === 'user')).toEqual([
      ['user', 'Can you move my appointment?'],
      ['user', 'Thanks'],
    ]);
  });

  it('a refusal that is not a 400 is not asked again: the call fails with the apology, as before', async () => {
    const agentId = await createVoiceAgent(acme, { firstMessage: 'Hello, this is Acme.', modelConfig: { model: 'openai-compatible/shop-llm' } });
    chat.answer = () => ({ refuse: { status: 500, message: 'the server is down' } });
    const { heard, record } = await runCall(agentId, ['Hello?']);
    expect(chat.requests).toHaveLength(1);
    expect(heard.heard).toContain(WORDS.apology);
    expect(record.status).toBe('failed');
    expect(record.error_text).toContain('answered HTTP 500');
  });
});
