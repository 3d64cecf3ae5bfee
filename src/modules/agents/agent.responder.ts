import type { Agent } from './agent.entity.js';
import type { ChatMessage, KnowledgePort, ModelPort, Passage, ToolPort } from './agent.ports.js';
import type { ToolCallRecord } from '../tools/tool-call.store.js';
import type { MessageReply } from './agent.types.js';
import { upstreamStatusOf, type ModelTool } from '../models/model.types.js';
import { buildSystemPrompt, policySection, redactPolicy, userLines } from './prompt.js';
import { renderedPrompt, type CallContext } from './templates/call-context.js';

/** Asks an agent's model for a reply: retrieval, prompt, generation, redaction. Shared by tests and conversations. */
export class AgentResponder {
  constructor(
    private readonly model: ModelPort,
    private readonly knowledge: KnowledgePort,
    private readonly tools: ToolPort | null = null,
  ) {}

  /**
   * `context`: what the agent's templates are rendered from (null: its texts as written). `scope`:
   * the conversation (and call) the reply is of; its tool calls are stored there, in order (none:
   * a test message, whose tool calls are only answered). `callTools`: a phone call's own tools
   * (a batch call's transfer_call and send_digits), offered before the agent's.
   */
  async reply(
    agent: Agent,
    history: ChatMessage[],
    message: string,
    context: CallContext | null = null,
    scope: { conversationId: string; callId: string | null } | null = null,
    callTools: ModelTool[] = [],
  ): Promise<MessageReply> {
    const passages = await this.retrieve(agent, message);
    const prompt = renderedPrompt(agent, context);
    const written = [...userLines(history), message];
    const toolCalls: ToolCallRecord[] = [];
    const tools = this.tools;
    const ownTools =
      tools && (agent.toolIds.length > 0 || agent.mcpTools.length > 0)
        ? await tools.toolsFor(agent, {
            organizationId: agent.organization.id,
            agentId: agent.id,
            conversationId: scope?.conversationId ?? null,
            callId: scope?.callId ?? null,
            context,
            guardPolicy: prompt.guardPolicy,
            callerSaid: () => written,
            onRecord: async (record) => {
              toolCalls.push((scope ? await tools.store(record) : null) ?? record);
            },
          })
        : [];
    const generate = (modelTools: ModelTool[]) =>
      this.model.generate({
        model: agent.modelConfig.model,
        system: buildSystemPrompt(prompt.instructions, prompt.policy, passages, prompt.filled),
        hidden: policySection(prompt.policy),
        messages: [...history, { role: 'user', content: message }],
        settings: agent.modelConfig.modelSettings ?? null,
        providerOptions: agent.modelConfig.providerOptions ?? null,
        passages: passages.map((passage) => ({ content: passage.content, score: passage.score, title: passage.title })),
        ...(modelTools.length > 0 ? { tools: modelTools } : {}),
      });
    // A model server that takes no tools refuses the request with 400 (Ollama: "… does not support
    // tools"). The call's own tools are the gateway's additions, not the business's: asked once more
    // without them, the turn is answered as before they existed (no transfer, no keys). The agent's
    // own tools are the business's choice and stay, refused or not.
    const result = await generate([...callTools, ...ownTools]).catch((error: unknown) => {
      if (callTools.length === 0 || upstreamStatusOf(error) !== 400) throw error;
      return generate(ownTools);
    });
    // The user's own words are theirs: only what the model adds is judged (prompt.ts, saysPolicy).
    return { response: redactPolicy(result.text, prompt.guardPolicy, written), usage: result.usage, toolCalls };
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
