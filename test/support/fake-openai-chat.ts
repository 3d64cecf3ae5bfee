import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { chatRequestProblem, chatResponseProblem } from './openai-chat-spec.js';

/** What the double's model answers one request with: words, or calls of the tools it was given. */
export type ChatAnswer = { content: string } | { toolCalls: { name: string; arguments: Record<string, unknown> | string }[] };

/**
 * An OpenAI-compatible Chat Completions endpoint on loopback (POST /v1/chat/completions, no
 * streaming): every request is checked against OpenAI's published CreateChatCompletionRequest,
 * closed to unknown keys (a request that fails is answered 400 as the service does, and kept in
 * `problems`); every answer it gives is checked against CreateChatCompletionResponse. `answer`
 * decides each answer from the request (the n-th, 0-based): a tool call, or words.
 */
export class FakeOpenAiChat {
  readonly requests: Record<string, any>[] = [];
  readonly problems: string[] = [];
  answer: (request: Record<string, any>, n: number) => ChatAnswer = () => ({ content: 'Hello.' });
  private server!: Server;
  url = '';

  async start(): Promise<this> {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}') as Record<string, any>;
        if (req.method !== 'POST' || req.url !== '/v1/chat/completions') {
          res.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { message: 'no route', type: 'invalid_request_error' } }));
          return;
        }
        const refused = chatRequestProblem(body);
        if (refused) {
          this.problems.push(refused);
          res
            .writeHead(400, { 'content-type': 'application/json' })
            .end(JSON.stringify({ error: { message: refused, type: 'invalid_request_error', param: null, code: 'unknown_parameter' } }));
          return;
        }
        const n = this.requests.length;
        this.requests.push(body);
        const answer = this.answer(body, n);
        const message =
          'content' in answer
            ? { role: 'assistant', content: answer.content, refusal: null, annotations: [] }
            : {
                role: 'assistant',
                content: null,
                refusal: null,
                annotations: [],
                tool_calls: answer.toolCalls.map((call) => ({
                  id: `call_${randomUUID().replace(/-/g, '')}`,
                  type: 'function',
                  function: { name: call.name, arguments: typeof call.arguments === 'string' ? call.arguments : JSON.stringify(call.arguments) },
                })),
              };
        const response = {
          id: `chatcmpl-${randomUUID()}`,
          object: 'chat.completion',
          created: Math.floor(Date.now() / 1000),
          model: body.model,
          choices: [{ index: 0, message, finish_reason: 'content' in answer ? 'stop' : 'tool_calls', logprobs: null }],
          usage: { prompt_tokens: 40, completion_tokens: 8, total_tokens: 48 },
        };
        const wrong = chatResponseProblem(response);
        if (wrong) this.problems.push(`the double's own answer: ${wrong}`);
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(response));
      });
    });
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/v1`;
    return this;
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise((resolve) => this.server.close(resolve));
  }
}
