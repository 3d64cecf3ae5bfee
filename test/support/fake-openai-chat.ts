import { randomUUID } from 'node:crypto';
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { chatRequestProblem, chatResponseProblem, chatStreamChunkProblem } from './openai-chat-spec.js';
import { waiting } from '../helpers/eventually.js';

/** What the double's model answers one request with: words, or calls of the tools it was given. */
type SpokenAnswer = { content: string } | { toolCalls: { name: string; arguments: Record<string, unknown> | string }[] };
export type ChatAnswer =
  | SpokenAnswer
  /** An error answer instead: `status` with `{error: {message, type: "api_error", param: null, code: null}}`, the shape Ollama's OpenAI-compatible endpoint answers a request it cannot serve with. */
  | { refuse: { status: number; message: string } };

/**
 * An OpenAI-compatible Chat Completions endpoint on loopback (POST /v1/chat/completions): every
 * request is checked against OpenAI's published CreateChatCompletionRequest, closed to unknown keys (a
 * request that fails is answered 400 as the service does, and kept in `problems`); every answer it
 * gives is checked against CreateChatCompletionResponse, or, for `stream: true`, each server-sent
 * chunk against CreateChatCompletionStreamResponse (the words, or the tool calls, then the finish
 * reason, then the usage when `stream_options.include_usage`, then `[DONE]`). `answer` decides each
 * answer from the request (the n-th, 0-based): a tool call, or words; it may return a promise, so a
 * test holds an answer until it lets it go. A request whose client went away before its answer was
 * written is counted in `aborted` (by index), as a cancelled request is at OpenAI.
 */
export class FakeOpenAiChat {
  readonly requests: Record<string, any>[] = [];
  readonly problems: string[] = [];
  /** The indexes of the requests whose client closed the connection before the answer was written whole. */
  readonly aborted: number[] = [];
  answer: (request: Record<string, any>, n: number) => ChatAnswer | Promise<ChatAnswer> = () => ({ content: 'Hello.' });
  private server!: Server;
  private readonly waiters: { test: () => boolean; resolve: () => void }[] = [];
  url = '';

  /** Resolves once `test` holds (checked as each request arrives or is aborted); no deadline of its own. */
  until(test: () => boolean, what: string): Promise<void> {
    if (test()) return Promise.resolve();
    return waiting(`the chat double to see ${what}`, new Promise<void>((resolve) => this.waiters.push({ test, resolve })));
  }

  private notify(): void {
    for (const waiter of [...this.waiters]) {
      if (!waiter.test()) continue;
      this.waiters.splice(this.waiters.indexOf(waiter), 1);
      waiter.resolve();
    }
  }

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
        let answered = false;
        res.once('close', () => {
          if (answered && res.writableFinished) return;
          this.aborted.push(n);
          this.notify();
        });
        this.notify();
        void Promise.resolve(this.answer(body, n)).then((answer) => {
          if (res.destroyed) return;
          answered = true;
          if ('refuse' in answer) {
            const error = { message: answer.refuse.message, type: 'api_error', param: null, code: null };
            res.writeHead(answer.refuse.status, { 'content-type': 'application/json' }).end(JSON.stringify({ error }));
            return;
          }
          if (body.stream === true) return this.stream(res, body, answer);
          this.respond(res, body, answer);
        });
      });
    });
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/v1`;
    return this;
  }

  /** The answer as server-sent chunks: a role, the words (a few at a time) or the tool calls, the finish reason, the usage, `[DONE]`. */
  private stream(res: ServerResponse, body: Record<string, any>, answer: SpokenAnswer): void {
    const id = `chatcmpl-${randomUUID()}`;
    const created = Math.floor(Date.now() / 1000);
    const chunk = (choices: unknown[], extra: Record<string, unknown> = {}) => {
      const value = { id, object: 'chat.completion.chunk', created, model: body.model, choices, ...extra };
      const wrong = chatStreamChunkProblem(value);
      if (wrong) this.problems.push(`the double's own chunk: ${wrong}`);
      res.write(`data: ${JSON.stringify(value)}\n\n`);
    };
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    chunk([{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null, logprobs: null }]);
    if ('content' in answer) {
      for (const words of answer.content.match(/\S+\s*/g) ?? []) chunk([{ index: 0, delta: { content: words }, finish_reason: null, logprobs: null }]);
    } else {
      answer.toolCalls.forEach((call, index) =>
        chunk([
          {
            index: 0,
            delta: {
              tool_calls: [
                {
                  index,
                  id: `call_${randomUUID().replace(/-/g, '')}`,
                  type: 'function',
                  function: { name: call.name, arguments: typeof call.arguments === 'string' ? call.arguments : JSON.stringify(call.arguments) },
                },
              ],
            },
            finish_reason: null,
            logprobs: null,
          },
        ]),
      );
    }
    chunk([{ index: 0, delta: {}, finish_reason: 'content' in answer ? 'stop' : 'tool_calls', logprobs: null }]);
    if (body.stream_options?.include_usage) chunk([], { usage: { prompt_tokens: 40, completion_tokens: 8, total_tokens: 48 } });
    res.end('data: [DONE]\n\n');
  }

  private respond(res: ServerResponse, body: Record<string, any>, answer: SpokenAnswer): void {
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
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise((resolve) => this.server.close(resolve));
  }
}
