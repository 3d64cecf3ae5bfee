import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { AppError } from '../../src/common/errors.js';
import { ModelService } from '../../src/modules/models/model.service.js';
import type { GenerateRequest } from '../../src/modules/models/model.types.js';

/** A fake OpenAI-compatible server on 127.0.0.1: records what it receives, answers as told. */
interface Received {
  path: string;
  authorization?: string;
  body: Record<string, unknown>;
}
type Mode = 'ok' | 'error500' | 'unauthorized' | 'hang';

let server: Server;
let baseUrl: string;
let mode: Mode = 'ok';
const received: Received[] = [];

function reply(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
}

async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>;
  received.push({ path: req.url ?? '', authorization: req.headers.authorization, body });
  if (req.method !== 'POST' || req.url !== '/v1/chat/completions') return reply(res, 404, { error: { message: 'no route' } });
  if (mode === 'hang') return; // never answers: the service's timeout must fire
  if (mode === 'error500') return reply(res, 500, { error: { message: 'upstream exploded', type: 'server_error' } });
  if (mode === 'unauthorized') {
    return reply(res, 401, { error: { message: 'Incorrect API key provided: test-***-key', type: 'invalid_request_error' } });
  }
  reply(res, 200, {
    id: 'chatcmpl-test',
    object: 'chat.completion',
    created: 1_700_000_000,
    model: body.model,
    choices: [{ index: 0, message: { role: 'assistant', content: 'We open at nine.' }, finish_reason: 'stop' }],
    usage: { prompt_tokens: 31, completion_tokens: 5, total_tokens: 36 },
  });
}

beforeAll(async () => {
  server = createServer((req, res) => void handle(req, res));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});
beforeEach(() => {
  mode = 'ok';
  received.length = 0;
});

const REQUEST: GenerateRequest = {
  model: 'openai-compatible/llama3.1:8b',
  system: 'You are Ada, a receptionist.',
  messages: [
    { role: 'user', content: 'Hi' },
    { role: 'assistant', content: 'Hello! How can I help?' },
    { role: 'user', content: 'When do you open?' },
  ],
  settings: { temperature: 0.3, maxTokens: 64, seed: 11 },
  providerOptions: { openaiCompatible: { user: 'caller-42', reasoningEffort: 'low' } },
};

function service(timeoutMs = 5_000, maxOutputTokens?: number): ModelService {
  return new ModelService({ openaiCompatibleBaseUrl: baseUrl, openaiCompatibleApiKey: 'test-secret-key' }, { timeoutMs, maxOutputTokens });
}

async function failure(promise: Promise<unknown>): Promise<AppError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(AppError);
  return error as AppError;
}

describe('openai-compatible provider through the AI SDK', () => {
  it('sends the model, system first then the messages in order, and the settings; returns text and usage', async () => {
    const result = await service().generate(REQUEST);

    expect(result).toEqual({
      text: 'We open at nine.',
      usage: { inputTokens: 31, outputTokens: 5, totalTokens: 36, model: 'openai-compatible/llama3.1:8b' },
    });
    expect(received).toHaveLength(1);
    const [call] = received;
    expect(call?.path).toBe('/v1/chat/completions');
    expect(call?.authorization).toBe('Bearer test-secret-key');
    expect(call?.body).toMatchObject({
      model: 'llama3.1:8b',
      messages: [
        { role: 'system', content: 'You are Ada, a receptionist.' },
        { role: 'user', content: 'Hi' },
        { role: 'assistant', content: 'Hello! How can I help?' },
        { role: 'user', content: 'When do you open?' },
      ],
      temperature: 0.3,
      max_tokens: 64,
      seed: 11,
      user: 'caller-42',
      reasoning_effort: 'low',
    });
    expect((call?.body.messages as unknown[]).length).toBe(4);
  });

  it('sends nothing but the checked fields: no option passes through to the request body', async () => {
    await service().generate(REQUEST);
    expect(Object.keys(received[0]!.body).sort()).toEqual(['max_tokens', 'messages', 'model', 'reasoning_effort', 'seed', 'temperature', 'user'].sort());
  });

  it('refuses options that would name another model or ask for more output, before any call (issue 9, finding 6)', async () => {
    const providerOptions = { openaiCompatible: { model: 'very-expensive-model', n: 64, max_tokens: 999_999, user: 'ok' } };
    const error = await failure(service().generate({ ...REQUEST, providerOptions }));
    expect(error.code).toBe('BAD_USER_INPUT');
    expect(error.errors?.map((e) => e.field)).toEqual(['model', 'n', 'max_tokens'].map((o) => `modelConfig.providerOptions.openaiCompatible.${o}`));
    expect(error.errors?.[1]?.message).toContain('is not an accepted option: use user, reasoningEffort, textVerbosity');
    expect(received).toHaveLength(0);
  });

  it('refuses options under another key the SDK would also read', async () => {
    for (const key of ['openai-compatible', 'openai', 'anthropic']) {
      const error = await failure(service().generate({ ...REQUEST, providerOptions: { [key]: { user: 'x' } } }));
      expect(error.errors?.map((e) => e.field)).toEqual([`modelConfig.providerOptions.${key}`]);
    }
    expect(received).toHaveLength(0);
  });

  it('asks for at most MODEL_MAX_OUTPUT_TOKENS: more is refused, none set sends the cap', async () => {
    const capped = service(5_000, 500);
    const error = await failure(capped.generate({ ...REQUEST, settings: { maxOutputTokens: 501 } }));
    expect(error.errors?.[0]?.field).toBe('modelConfig.modelSettings.maxOutputTokens');
    expect(error.errors?.[0]?.message).toContain('from 1 to 500');
    expect(received).toHaveLength(0);

    await capped.generate({ ...REQUEST, settings: {} });
    expect(received[0]?.body.max_tokens).toBe(500);
    await service().generate({ ...REQUEST, settings: null });
    expect(received[1]?.body.max_tokens).toBe(16_384);
    expect((await failure(service().generate({ ...REQUEST, settings: { maxTokens: 1_000_000 } }))).code).toBe('BAD_USER_INPUT');
  });

  it("leaves the hidden part's share of the prompt out of the input tokens it reports", async () => {
    // the fake counts 31 prompt tokens; the hidden part is half of the prompt's characters
    const visible = REQUEST.messages.reduce((sum, message) => sum + message.content.length, 0) + REQUEST.system!.length;
    const hidden = 'h'.repeat(visible);
    const result = await service().generate({ ...REQUEST, system: REQUEST.system + hidden, hidden });
    expect(result.usage).toEqual({ inputTokens: 15, outputTokens: 5, totalTokens: 20, model: 'openai-compatible/llama3.1:8b' });
  });

  it('answers UNAVAILABLE when the server answers 500, without retrying or leaking the body', async () => {
    mode = 'error500';
    const error = await failure(service().generate(REQUEST));
    expect(error.code).toBe('UNAVAILABLE');
    expect(error.message).toBe('Model provider "openai-compatible" answered HTTP 500 for model "llama3.1:8b"');
    expect(received).toHaveLength(1);
  });

  it('answers UNAVAILABLE on 401 without echoing the key', async () => {
    mode = 'unauthorized';
    const error = await failure(service().generate(REQUEST));
    expect(error.code).toBe('UNAVAILABLE');
    expect(error.message).toContain('rejected the configured credentials (HTTP 401)');
    expect(error.message).not.toMatch(/test-/);
  });

  it('answers UNAVAILABLE when the provider does not answer in time', async () => {
    mode = 'hang';
    // The message names the 300 ms limit, so it is that timer that ended the call (not a longer one); how long it took is no test's to say.
    const error = await failure(service(300).generate(REQUEST));
    expect(error.code).toBe('UNAVAILABLE');
    expect(error.message).toBe('Model provider "openai-compatible" did not answer within 300ms for model "llama3.1:8b"');
  });

  it('answers UNAVAILABLE when nothing listens (connection refused)', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));

    const error = await failure(new ModelService({ openaiCompatibleBaseUrl: `http://127.0.0.1:${port}/v1` }).generate(REQUEST));
    expect(error.code).toBe('UNAVAILABLE');
    expect(error.message).toBe('Model provider "openai-compatible" is unreachable (ECONNREFUSED) for model "llama3.1:8b"');
  });

  it('rejects bad settings before any call', async () => {
    const error = await failure(service().generate({ ...REQUEST, settings: { temperature: '0.3' } }));
    expect(error.code).toBe('BAD_USER_INPUT');
    expect(error.errors?.[0]?.field).toBe('modelConfig.modelSettings.temperature');
    expect(received).toHaveLength(0);
  });
});

describe('providers that are named but not configured', () => {
  it.each([
    ['openai/gpt-4o-mini', 'Model provider "openai" is not configured: set OPENAI_API_KEY'],
    ['anthropic/claude-sonnet-4-5', 'Model provider "anthropic" is not configured: set ANTHROPIC_API_KEY'],
    ['openai-compatible/llama3.1:8b', 'Model provider "openai-compatible" is not configured: set OPENAI_COMPATIBLE_BASE_URL'],
  ])('%s → UNAVAILABLE', async (model, message) => {
    const error = await failure(new ModelService({}).generate({ ...REQUEST, model, providerOptions: null }));
    expect(error.code).toBe('UNAVAILABLE');
    expect(error.message).toBe(message);
  });
});
