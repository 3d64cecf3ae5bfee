import type { Actor } from '../../common/actor.js';
import { AppError } from '../../common/errors.js';
import type { GenerateRequest, GenerateResult, KnowledgePort, ModelPort, Passage } from './agent.ports.js';

// TEMPORARY stand-ins so this branch runs alone; at merge src/services.ts passes the real
// ModelService and KnowledgeService instead.

const MODEL_NAME = /^[a-z-]+\/.+/;

function words(text: string): number {
  return text.split(/\s+/).filter(Boolean).length;
}

/** Answers `Echo: <last user message>` and records every request it receives. */
export class EchoModel implements ModelPort {
  readonly requests: GenerateRequest[] = [];

  assertModelName(model: string): void {
    if (!MODEL_NAME.test(model)) {
      throw AppError.badInput([{ field: 'modelConfig.model', message: 'modelConfig.model must be <provider>/<model_name>' }]);
    }
  }

  async generate(request: GenerateRequest): Promise<GenerateResult> {
    this.assertModelName(request.model);
    this.requests.push(request);
    const lastUser = [...request.messages].reverse().find((message) => message.role === 'user');
    const text = `Echo: ${lastUser?.content ?? ''}`;
    const inputTokens = words(request.system ?? '') + request.messages.reduce((sum, message) => sum + words(message.content), 0);
    const outputTokens = words(text);
    return { text, usage: { inputTokens, outputTokens, totalTokens: inputTokens + outputTokens, model: request.model } };
  }
}

/** No knowledge bases at all: nothing to retrieve, every id unknown. */
export class NoKnowledge implements KnowledgePort {
  async retrieve(): Promise<Passage[]> {
    return [];
  }

  async assertExists(_actor: Actor, _knowledgeBaseId: string): Promise<void> {
    throw AppError.notFound('Knowledge base');
  }
}
