// A speech-to-speech call's provider session, prepared while the carrier is still fetching the
// call's instructions (issue #45), as a streaming call's first message is (stream-preparations.ts,
// which holds both kinds under one bound): as soon as the answer carrying the media stream's URL is
// armed, the agent, the call's context, its memory and passages are read, the provider's session is
// opened and configured (OpenAI: the WebSocket and its session.update; Gemini: its setup), and an
// agent that speaks first is asked for its first message at once (OpenAI's response.create, Gemini's
// realtime text: what the bridge sent at the stream's start before). Everything the provider says
// meanwhile (its first message's audio, already μ-law 8 kHz) is held, in order, until the stream's
// `start` comes and the call's bridge adopts the session (bridge.ts): then it is told all of it at
// once, and the caller hears the first word without waiting for any handshake.
import type { Logger } from 'pino';
import type { Agent } from '../../agents/agent.entity.js';
import { AgentStatus, PipelineMode, type StsProvider } from '../../agents/agent.enums.js';
import type { ChatMessage, KnowledgePort, Passage } from '../../agents/agent.ports.js';
import { buildSystemPrompt } from '../../agents/prompt.js';
import { renderedPrompt, type CallContext, type RenderedPrompt } from '../../agents/templates/call-context.js';
import { firstMessageFor } from '../../agents/templates/first-message.js';
import type { ModelTool } from '../../models/model.types.js';
import type { CallConversations } from './call-conversation.js';
import { callUserTools, declared, type CallToolsPort } from './call-tools.js';
import type { SpeechEvents, SpeechProvider, SpeechSession } from './speech-provider.js';

/** Audio held for one first message before its stream starts (base64 of μ-law 8 kHz: about a minute and a half). */
export const MAX_HELD_AUDIO_CHARS = 1024 * 1024;

/**
 * The words the agent's session is given: the text replies' system prompt (rendered for the call),
 * then its memory of earlier calls, and, back from a transfer that reached no one, this call so far and why (`back`).
 */
export function sessionInstructions(prompt: RenderedPrompt, passages: Passage[], memory: ChatMessage[], back = ''): string {
  let instructions = buildSystemPrompt(prompt.instructions, prompt.policy, passages, prompt.filled);
  if (memory.length > 0) {
    const turns = memory.map((message) => `${message.role === 'user' ? 'Caller' : 'Agent'}: ${message.content}`).join('\n');
    instructions += `\n\nEarlier calls with this caller (memory):\n${turns}`;
  }
  return instructions + back;
}

type Told = { [K in keyof SpeechEvents]: { name: K; args: Parameters<SpeechEvents[K]> } }[keyof SpeechEvents];

/**
 * What a prepared session says before anyone listens: every event kept, in order, until `adopt`
 * gives it its bridge, which is then told all of them at once, before anything new. A session
 * lost meanwhile (or one saying more audio than is held) is `lost`: its stream opens its own.
 */
export class HeldSpeech implements SpeechEvents {
  private target: SpeechEvents | null = null;
  private readonly held: Told[] = [];
  private heldChars = 0;
  /** Why the session cannot be adopted (lost before its stream came); null while it can. */
  lostReason: string | null = null;

  private tell(told: Told): void {
    if (this.target) return (this.target[told.name] as (...args: unknown[]) => void)(...told.args);
    if (this.lostReason === null) this.held.push(told);
  }

  /** The bridge now hears everything: first what was held, at once. */
  adopt(target: SpeechEvents): void {
    for (const told of this.held.splice(0)) (target[told.name] as (...args: unknown[]) => void)(...told.args);
    this.heldChars = 0;
    this.target = target;
  }

  /** The session was lost before its stream came (after, the bridge is told by the session itself). */
  lose(reason: string): void {
    if (this.target || this.lostReason !== null) return;
    this.lostReason = reason;
    this.held.length = 0;
  }

  callerStarted(): void {
    this.tell({ name: 'callerStarted', args: [] });
  }
  callerStopped(): void {
    this.tell({ name: 'callerStopped', args: [] });
  }
  interrupted(): void {
    this.tell({ name: 'interrupted', args: [] });
  }
  callerTurn(text: string): void {
    this.tell({ name: 'callerTurn', args: [text] });
  }
  replyStarted(replyId: string): void {
    this.tell({ name: 'replyStarted', args: [replyId] });
  }
  agentAudio(replyId: string, itemId: string, ulaw: string, receivedAt?: number): void {
    if (!this.target) {
      this.heldChars += ulaw.length;
      if (this.heldChars > MAX_HELD_AUDIO_CHARS) return this.lose('the first message’s audio was longer than the gateway holds before the stream starts');
    }
    this.tell({ name: 'agentAudio', args: [replyId, itemId, ulaw, receivedAt] });
  }
  agentWords(replyId: string, itemId: string, delta: string): void {
    this.tell({ name: 'agentWords', args: [replyId, itemId, delta] });
  }
  agentItemDone(replyId: string, itemId: string, transcript: string): void {
    this.tell({ name: 'agentItemDone', args: [replyId, itemId, transcript] });
  }
  replyDone(replyId: string): void {
    this.tell({ name: 'replyDone', args: [replyId] });
  }
  toolCall(name: string, callId: string, args: Record<string, unknown>): void {
    this.tell({ name: 'toolCall', args: [name, callId, args] });
  }
  providerError(code: unknown, message: unknown): void {
    this.tell({ name: 'providerError', args: [code, message] });
  }
}

/** Who the agent's own tools are told of and record through, bound once the call's bridge has them (its conversation, its queue of writes). */
export interface ToolBinding {
  conversationId: string | null;
  queue: ((work: () => Promise<void>) => void) | null;
  callerSaid: () => readonly string[];
}

/** A speech-to-speech call's preparation: what it read (the bridge reads none of it again) and its open, configured session. */
export interface PreparedSpeech {
  kind: 'sts';
  agent: Agent;
  context: CallContext | null;
  answeredAt: Date | null;
  prompt: RenderedPrompt;
  memory: ChatMessage[];
  speech: SpeechProvider;
  session: SpeechSession;
  held: HeldSpeech;
  /** The agent's own tools (HTTP and MCP), declared to the session; their calls are told of the call through `binding`. */
  tools: ModelTool[];
  binding: ToolBinding;
  /** The first message asked for (null: the agent waits for the caller). */
  opening: string | null;
}

export interface SpeechPreparationDeps {
  conversations: Pick<CallConversations, 'agent' | 'callContext' | 'memory'>;
  speech: Partial<Record<StsProvider, SpeechProvider>>;
  knowledge: KnowledgePort;
  withContext<T>(work: () => Promise<T>): Promise<T>;
  tools?: CallToolsPort;
  logger: Logger;
}

/**
 * Opens the call's session as its bridge would at the stream's start, and asks for its first
 * message; null when the call's agent is not one the bridge speaks (its stream decides, with the
 * same words as before) or the preparation was `discarded` meanwhile (what it opened is closed).
 * Rejects as the provider refused; the stream then opens its own session.
 */
export async function prepareSpeech(
  deps: SpeechPreparationDeps,
  call: { id: string; organizationId: string; agentId: string; contactId: string | null },
  discarded: () => boolean,
): Promise<PreparedSpeech | null> {
  const { conversations } = deps;
  const agent = await conversations.agent(call.organizationId, call.agentId);
  const voice = agent?.voiceConfig;
  if (!agent || agent.status === AgentStatus.archived || voice?.pipelineMode !== PipelineMode.sts || !voice.stsProvider) return null;
  const speech = deps.speech[voice.stsProvider];
  if (!speech) return null;
  const { context, answeredAt } = await conversations.callContext(call.organizationId, call.id, agent);
  const prompt = renderedPrompt(agent, context);
  // The call has no conversation yet (a call that has one is not prepared): nothing of it is in the memory.
  const memory = await conversations.memory(agent, call.organizationId, call.contactId, null);
  const lastCallerTurn = [...memory].reverse().find((message) => message.role === 'user')?.content ?? '';
  const config = agent.knowledgeBaseConfig;
  const passages =
    config && lastCallerTurn.trim()
      ? await deps.withContext(() =>
          deps.knowledge.retrieve(call.organizationId, config.knowledgeBaseId, lastCallerTurn, {
            topK: config.topK,
            similarityThreshold: config.similarityThreshold,
          }),
        )
      : [];
  if (discarded()) return null;
  const binding: ToolBinding = { conversationId: null, queue: null, callerSaid: () => [] };
  const tools = await callUserTools(
    deps.tools,
    agent,
    {
      organizationId: call.organizationId,
      callId: call.id,
      // Read when a tool is called: the call's conversation by then.
      get conversationId() {
        return binding.conversationId;
      },
      context,
      guardPolicy: prompt.guardPolicy,
      callerSaid: () => binding.callerSaid(),
    },
    (work) => binding.queue?.(work),
    deps.logger,
  );
  if (discarded()) return null;
  const held = new HeldSpeech();
  const session = await speech.open(agent, sessionInstructions(prompt, passages, memory), held, tools.map(declared));
  if (discarded()) {
    session.close();
    return null;
  }
  session.onLost((reason) => held.lose(reason));
  const opening = context ? firstMessageFor(agent, context) : null;
  if (opening) session.sayFirst(opening);
  return { kind: 'sts', agent, context, answeredAt, prompt, memory, speech, session, held, tools, binding, opening };
}
