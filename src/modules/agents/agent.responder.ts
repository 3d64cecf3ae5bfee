import type { Agent } from './agent.entity.js';
import type { ChatMessage, KnowledgePort, ModelPort, Passage } from './agent.ports.js';
import type { MessageReply } from './agent.types.js';
import { buildSystemPrompt, policySection, redactPolicy } from './prompt.js';

/** Asks an agent's model for a reply: retrieval, prompt, generation, redaction. Shared by tests and conversations. */
export class AgentResponder {
  constructor(
    private readonly model: ModelPort,
    private readonly knowledge: KnowledgePort,
  ) {}

  async reply(agent: Agent, history: ChatMessage[], message: string): Promise<MessageReply> {
    const passages = await this.retrieve(agent, message);
    const result = await this.model.generate({
      model: agent.modelConfig.model,
      system: buildSystemPrompt(agent.instructions, agent.policy, passages),
      hidden: policySection(agent.policy),
      messages: [...history, { role: 'user', content: message }],
      settings: agent.modelConfig.modelSettings ?? null,
      providerOptions: agent.modelConfig.providerOptions ?? null,
      passages: passages.map((passage) => ({ content: passage.content, score: passage.score, title: passage.title })),
    });
    return { response: redactPolicy(result.text, agent.policy), usage: result.usage };
  }

  private async retrieve(agent: Agent, query: string): Promise<Passage[]> {
    const config = agent.knowledgeBaseConfig;
    if (!config) return [];
    return this.knowledge.retrieve(agent.organization.id, config.knowledgeBaseId, query, {
      topK: config.topK,
      similarityThreshold: config.similarityThreshold,
    });
  }
}
