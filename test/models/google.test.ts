import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { AppError } from '../../src/common/errors.js';
import { ModelService } from '../../src/modules/models/model.service.js';
import type { GenerateRequest } from '../../src/modules/models/model.types.js';

// `google/<model>` text replies through the AI SDK's Google provider, against a loopback double of
// the Gemini API's `models/{model}:generateContent` (the request and response shapes of Google's
// "Generating content" API reference, ai.google.dev/api/generate-content, looked up 2026-11-26):
// GEMINI_BASE_URL points the provider at it, `/v1beta` appended as for Google's own endpoint.

interface Received {
  path: string;
  apiKey?: string;
  body: Record<string, any>;
}

let server: Server;
let baseUrl: string;
let status = 200;
const received: Received[] = [];

async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  received.push({ path: req.url ?? '', apiKey: req.headers['x-goog-api-key'] as string | undefined, body: JSON.parse(Buffer.concat(chunks).toString('utf8')) });
  const send = (code: number, body: unknown): void => void res.writeHead(code, { 'content-type': 'application/json' }).end(JSON.stringify(body));
  if (req.method !== 'POST' || !/^\/v1beta\/models\/[^/:]+:generateContent$/.test(req.url ?? ''))
    return send(404, { error: { code: 404, message: 'no route', status: 'NOT_FOUND' } });
  if (status !== 200) return send(status, { error: { code: status, message: 'API key not valid. Please pass a valid API key.', status: 'INVALID_ARGUMENT' } });
  send(200, {
    candidates: [{ content: { role: 'model', parts: [{ text: 'We open at nine.' }] }, finishReason: 'STOP', index: 0 }],
    usageMetadata: { promptTokenCount: 21, candidatesTokenCount: 5, totalTokenCount: 26 },
    modelVersion: 'gemini-3.5-flash',
  });
}

beforeAll(async () => {
  server = createServer((req, res) => void handle(req, res));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});
beforeEach(() => {
  status = 200;
  received.length = 0;
});

const REQUEST: GenerateRequest = {
  model: 'google/gemini-3.5-flash',
  system: 'You are Ada, a receptionist.',
  messages: [
    { role: 'user', content: 'Hi' },
    { role: 'assistant', content: 'Hello! How can I help?' },
    { role: 'user', content: 'When do you open?' },
  ],
  settings: { temperature: 0.3, maxTokens: 64 },
};

describe('the google provider through the AI SDK', () => {
  it('posts generateContent for the model with the key, the system instruction and the turns in order; returns text and usage', async () => {
    const result = await new ModelService({ geminiApiKey: 'gemini-test-key', geminiBaseUrl: baseUrl }).generate(REQUEST);
    expect(result).toEqual({ text: 'We open at nine.', usage: { inputTokens: 21, outputTokens: 5, totalTokens: 26, model: 'google/gemini-3.5-flash' } });
    expect(received).toHaveLength(1);
    const [call] = received;
    expect(call!.path).toBe('/v1beta/models/gemini-3.5-flash:generateContent');
    expect(call!.apiKey).toBe('gemini-test-key');
    expect(call!.body.systemInstruction).toEqual({ parts: [{ text: 'You are Ada, a receptionist.' }] });
    expect(call!.body.contents).toEqual([
      { role: 'user', parts: [{ text: 'Hi' }] },
      { role: 'model', parts: [{ text: 'Hello! How can I help?' }] },
      { role: 'user', parts: [{ text: 'When do you open?' }] },
    ]);
    expect(call!.body.generationConfig).toMatchObject({ temperature: 0.3, maxOutputTokens: 64 });
  });

  it('answers UNAVAILABLE naming GEMINI_API_KEY when it is not set, and the provider’s refusal without its words', async () => {
    const unset = await new ModelService({ geminiBaseUrl: baseUrl }).generate(REQUEST).catch((error: unknown) => error);
    expect(unset).toBeInstanceOf(AppError);
    expect((unset as AppError).code).toBe('UNAVAILABLE');
    expect((unset as AppError).message).toBe('Model provider "google" is not configured: set GEMINI_API_KEY');
    expect(received).toHaveLength(0);

    status = 403;
    const refused = await new ModelService({ geminiApiKey: 'wrong', geminiBaseUrl: baseUrl }).generate(REQUEST).catch((error: unknown) => error);
    expect((refused as AppError).code).toBe('UNAVAILABLE');
    expect((refused as AppError).message).toBe('Model provider "google" rejected the configured credentials (HTTP 403) for model "gemini-3.5-flash"');
  });

  it('takes no provider options for google (400 naming the field)', async () => {
    const error = await new ModelService({ geminiApiKey: 'k', geminiBaseUrl: baseUrl })
      .generate({ ...REQUEST, providerOptions: { google: { thinkingConfig: { thinkingBudget: 0 } } } })
      .catch((e: unknown) => e);
    expect((error as AppError).code).toBe('BAD_USER_INPUT');
    expect((error as AppError).errors?.[0]?.field).toBe('modelConfig.providerOptions.google');
    expect(received).toHaveLength(0);
  });
});
