import type { Logger } from 'pino';
import WebSocket from 'ws';
import type { Agent } from '../../agents/agent.entity.js';
import { AgentStatus, ConversationStatus, MessageRole, PipelineMode, type StsProvider } from '../../agents/agent.enums.js';
import type { ChatMessage, KnowledgePort, Passage } from '../../agents/agent.ports.js';
import { buildSystemPrompt, redactPolicy } from '../../agents/prompt.js';
import type { CallTracker } from '../../telephony/call-tracker.js';
import type { CallConversations } from './call-conversation.js';
import { callToolEffect } from './call-tools.js';
import type { SpeechEvents, SpeechProvider, SpeechSession } from './speech-provider.js';
import type { CallTurnTiming } from '../../telephony/call-latency.types.js';
import { TurnClock } from './turn-latency.js';
import { EndOfSpeechDetector } from './end-of-speech.js';
import { closeAfter } from './close-after.js';

/** μ-law at 8 kHz: one byte per sample, 8 bytes per millisecond. */
const ULAW_BYTES_PER_MS = 8;
/** Caller audio kept while the provider's session opens (Twilio sends 20 ms frames: 10 s). */
const MAX_QUEUED_FRAMES = 500;
const END_CALL_MARK = 'end_call';
/** How long an ending call waits for the carrier to say the goodbye was played, past its length. */
const END_CALL_GRACE_MS = 3000;

export interface BridgeDeps {
  conversations: CallConversations;
  tracker: CallTracker;
  knowledge: KnowledgePort;
  /** Runs database work of the agents and knowledge modules in a request context of its own. */
  withContext<T>(work: () => Promise<T>): Promise<T>;
  /** The speech-to-speech providers the bridge speaks, by the agents' `stsProvider`. */
  speech: Partial<Record<StsProvider, SpeechProvider>>;
  logger: Logger;
  /** Told each agent turn's latency as it completes (the Prometheus histograms). */
  observeTurn?: (labels: { mode: 'sts'; provider: string }, turn: CallTurnTiming) => void;
  /** The do-not-call list, for the agent's opt_out tool (DoNotCallService.optOut). */
  doNotCall: { optOut(organizationId: string, target: { callId: string }): Promise<unknown> };
}

/** The call a media stream carries, as the media route checked it. */
export interface BridgedCall {
  id: string;
  organizationId: string;
  agentId: string;
  contactId: string | null;
  to: string;
}

interface SpokenTurn {
  responseId: string | null;
  text: string;
  /** Where each delta began in the item's audio (ms sent before it), to cut the words where the caller stopped hearing. */
  marks?: { ms: number; length: number }[];
}

/** The words the agent's session is given: the text replies' system prompt, then its memory of earlier calls. */
export function sessionInstructions(agent: Agent, passages: Passage[], memory: ChatMessage[]): string {
  let instructions = buildSystemPrompt(agent.instructions, agent.policy, passages);
  if (memory.length > 0) {
    const turns = memory.map((message) => `${message.role === 'user' ? 'Caller' : 'Agent'}: ${message.content}`).join('\n');
    instructions += `\n\nEarlier calls with this caller (memory):\n${turns}`;
  }
  return instructions;
}

function text(value: unknown): string {
  return typeof value === 'string' ? value : '';
}

/**
 * One call's speech-to-speech bridge: Twilio Media Streams on one side, the agent's provider's
 * session on the other (OpenAI Realtime, Gemini Live: a SpeechSession, which speaks μ-law 8 kHz
 * to the bridge whatever its own audio is). Caller audio goes to the provider as it comes; the
 * agent's audio goes to the caller unless its transcript has started to repeat the hidden policy.
 * Every database write goes through one queue, so turns are stored in the order they were heard.
 */
export class CallBridge implements SpeechEvents {
  private provider: SpeechSession | null = null;
  private speech: SpeechProvider | null = null;
  private modelLabel: string | null = null;
  private agent: Agent | null = null;
  private conversationId: string | null = null;
  private memory: ChatMessage[] = [];
  private queued: string[] = [];
  private activeResponse: string | null = null;
  private readonly suppressed = new Set<string>();
  private readonly turns = new Map<string, SpokenTurn>();
  /** The agent's audio item being played, and how much of it was sent when. */
  private playing: { itemId: string; firstAt: number; bytes: number } | null = null;
  private followUp = false;
  private endRequested = false;
  private endTimer: NodeJS.Timeout | null = null;
  private finished = false;
  private writes: Promise<void> = Promise.resolve();
  /** The agent's `stsProvider`, once the session is opened (the latency's label). */
  private providerName = '';
  /** Each agent turn's stamps (turn-latency.ts), stored on the call when the stream ends. */
  private readonly clock: TurnClock;
  /** Our end-of-speech signal, for a provider without one; dropped once the agent's provider is known to have its own. */
  private endOfSpeech: EndOfSpeechDetector | null = new EndOfSpeechDetector(() => this.callerStopped());

  constructor(
    private readonly deps: BridgeDeps,
    private readonly twilio: WebSocket,
    private readonly call: BridgedCall,
    private readonly streamSid: string,
  ) {
    this.clock = new TurnClock((turn) => deps.observeTurn?.({ mode: 'sts', provider: this.providerName }, turn));
  }

  /**
   * Opens the conversation and the provider's session; a failure ends the call `failed`. A call
   * whose agent does not speak through a provider the bridge has is not ours to bridge: `refuse`
   * is told why and nothing is written.
   */
  async start(refuse: (reason: string) => void): Promise<void> {
    const { conversations, logger } = this.deps;
    try {
      this.agent = await conversations.agent(this.call.organizationId, this.call.agentId);
      const voice = this.agent?.voiceConfig;
      const speech = voice?.pipelineMode === PipelineMode.sts && voice.stsProvider ? this.deps.speech[voice.stsProvider] : undefined;
      if (!speech || speech.reportsEndOfSpeech) this.endOfSpeech = null;
      if (this.agent && !speech) {
        this.finished = true;
        refuse('the call’s agent is not a speech-to-speech agent on OpenAI or Google');
        return;
      }
      if (!this.agent) throw new Error('The call’s agent no longer exists');
      if (this.agent.status === AgentStatus.archived) throw new Error('The call’s agent is archived');
      this.conversationId = await conversations.open(this.call.id, this.call.organizationId, this.agent.id, `Call to ${this.call.to}`);
      if (this.finished) {
        // The caller hung up while the conversation was being opened.
        await conversations.close(this.conversationId, ConversationStatus.ended);
        return;
      }
      this.memory = await conversations.memory(this.agent, this.call.organizationId, this.call.contactId, this.conversationId);
      const lastCallerTurn = [...this.memory].reverse().find((message) => message.role === 'user')?.content ?? '';
      const passages = await this.retrieve(lastCallerTurn);
      if (this.finished) return;
      this.speech = speech!;
      this.providerName = voice!.stsProvider!;
      this.modelLabel = speech!.modelLabel(this.agent);
      const provider = await speech!.open(this.agent, sessionInstructions(this.agent, passages, this.memory), this);
      if (this.finished) {
        provider.close();
        return;
      }
      this.provider = provider;
      provider.onLost((reason) => this.fail(reason));
      for (const audio of this.queued.splice(0)) provider.appendCallerAudio(audio);
      logger.info({ callId: this.call.id, conversationId: this.conversationId }, 'speech-to-speech bridge open');
    } catch (error) {
      this.fail(error instanceof Error ? error.message : String(error));
    }
  }

  /** One Twilio Media Streams message after `start`. */
  fromCarrier(message: Record<string, unknown>): void {
    if (this.finished) return;
    switch (message.event) {
      case 'media': {
        const payload = text((message.media as Record<string, unknown> | undefined)?.payload);
        if (!payload) return;
        // Before the frame goes on: the turn is timed from the frame that ended the speech, not from the provider's hearing it.
        this.endOfSpeech?.push(Buffer.from(payload, 'base64'));
        if (this.provider) this.provider.appendCallerAudio(payload);
        else if (this.queued.length < MAX_QUEUED_FRAMES) this.queued.push(payload);
        return;
      }
      case 'mark':
        if (text((message.mark as Record<string, unknown> | undefined)?.name) === END_CALL_MARK) this.finish(ConversationStatus.ended);
        return;
      case 'stop':
        this.finish(ConversationStatus.ended);
        return;
    }
  }

  /** The carrier's socket closed: the caller hung up (what was said is kept). */
  carrierClosed(): void {
    this.finish(ConversationStatus.ended);
  }

  // What the provider says (SpeechEvents), in the order it says it.

  callerStarted(): void {
    if (!this.finished) this.bargeIn();
  }

  /** The caller stopped speaking (OpenAI's server VAD, or our detector for Gemini): the agent's turn is timed from here. */
  callerStopped(): void {
    if (!this.finished) this.clock.begin(true, this.activeResponse);
  }

  /** The provider stopped its reply because the caller spoke: what Twilio still holds is dropped, the words kept as far as they were heard. */
  interrupted(): void {
    if (this.finished) return;
    this.cutAgentAudio(false);
    this.activeResponse = null;
  }

  callerTurn(transcript: string): void {
    if (this.finished) return;
    this.store(MessageRole.user, transcript);
    void this.refreshPassages(transcript);
  }

  replyStarted(replyId: string): void {
    if (!this.finished) this.activeResponse = replyId || null;
  }

  agentItemDone(responseId: string, itemId: string, transcript: string): void {
    if (this.finished) return;
    const turn = this.turns.get(itemId) ?? { responseId: responseId || null, text: '' };
    const cut = this.suppressed.has(responseId);
    this.turns.set(itemId, { ...turn, text: (!cut && transcript) || turn.text });
    this.storeTurn(itemId);
  }

  replyDone(id: string): void {
    if (this.finished) return;
    if (!id || id === this.activeResponse) this.activeResponse = null;
    // A cancelled or cut reply keeps what was said of it.
    for (const [itemId, turn] of this.turns) if (!id || turn.responseId === id) this.storeTurn(itemId);
    if (this.endRequested) this.sayGoodbyeThenEnd();
    else if (this.followUp) {
      this.followUp = false;
      this.provider?.replyAfterTools();
      this.clock.begin(false, id || null);
    }
  }

  toolCall(name: string, callId: string, args: Record<string, unknown>): void {
    if (!this.finished) this.tool(name, callId, args);
  }

  providerError(code: unknown, message: unknown): void {
    this.deps.logger.warn({ callId: this.call.id, code, error: message }, 'the realtime provider reported an error');
  }

  agentAudio(responseId: string, itemId: string, delta: string, receivedAt?: number): void {
    if (this.finished || !delta || this.suppressed.has(responseId)) return;
    if (!this.playing || this.playing.itemId !== itemId) this.playing = { itemId, firstAt: Date.now(), bytes: 0 };
    this.playing.bytes += Math.floor((delta.length * 3) / 4);
    const firstOfTurn = this.clock.audio(responseId, receivedAt);
    this.toCarrier({ event: 'media', streamSid: this.streamSid, media: { payload: delta } });
    if (firstOfTurn !== null) this.clock.sent(firstOfTurn);
  }

  /** The agent's words as they are generated: the policy guard watches them before more audio goes out. */
  agentWords(responseId: string, itemId: string, delta: string): void {
    if (this.finished) return;
    const turn = this.turns.get(itemId) ?? { responseId: responseId || null, text: '' };
    // Once the guard has cut a reply, what follows was never heard: it is not the transcript either.
    if (this.suppressed.has(responseId)) return;
    if (this.speech?.transcriptCutAtHeard) {
      const sentMs = this.playing?.itemId === itemId ? this.playing.bytes / ULAW_BYTES_PER_MS : 0;
      (turn.marks ??= []).push({ ms: sentMs, length: turn.text.length });
    }
    turn.text += delta;
    this.turns.set(itemId, turn);
    const policy = this.agent?.policy ?? null;
    if (policy && !this.suppressed.has(responseId) && redactPolicy(turn.text, policy) !== turn.text) {
      this.deps.logger.warn({ callId: this.call.id }, 'the agent began to say its hidden policy: its audio was cleared and the reply cancelled');
      this.suppressed.add(responseId);
      this.cutAgentAudio(true);
    }
  }

  /** The caller spoke over the agent: what the carrier still holds is dropped and the reply stopped where the caller heard it. */
  private bargeIn(): void {
    const stillPlaying = this.playing && Date.now() < this.playing.firstAt + this.playing.bytes / ULAW_BYTES_PER_MS;
    if (this.activeResponse || stillPlaying) this.cutAgentAudio(Boolean(this.activeResponse));
  }

  private cutAgentAudio(cancel: boolean): void {
    this.toCarrier({ event: 'clear', streamSid: this.streamSid });
    if (cancel) this.provider?.cancelReply();
    if (this.playing) {
      const heardMs = Math.max(0, Math.min(this.playing.bytes / ULAW_BYTES_PER_MS, Date.now() - this.playing.firstAt));
      this.provider?.truncate(this.playing.itemId, heardMs);
      this.cutWordsAtHeard(this.playing.itemId, heardMs);
      this.playing = null;
    }
  }

  /** A provider whose transcript is what it generated: the cut reply keeps the words whose audio had begun to play. */
  private cutWordsAtHeard(itemId: string, heardMs: number): void {
    const turn = this.turns.get(itemId);
    if (!this.speech?.transcriptCutAtHeard || !turn?.marks) return;
    const unheard = turn.marks.find((mark) => mark.ms >= heardMs);
    if (unheard) turn.text = turn.text.slice(0, unheard.length);
    this.storeTurn(itemId);
  }

  private tool(name: string, callId: string, args: Record<string, unknown>): void {
    const effect = callToolEffect(this.agent, name, args);
    if (effect.resolution) {
      const resolution = effect.resolution;
      this.queue(() => this.deps.conversations.resolve(this.conversationId!, resolution));
    }
    if (effect.optOut) {
      // The number is written in the call's queue of writes, so it is on the list before the stream's end is stored.
      this.queue(async () => {
        await this.deps.withContext(() => this.deps.doNotCall.optOut(this.call.organizationId, { callId: this.call.id }));
      });
    }
    // Like end_call, what is said with the tool is heard, then the call ends; after any other tool the model speaks on.
    if (effect.endsCall) this.endRequested = true;
    else this.followUp = true;
    this.provider?.answerTool(callId, name, effect.output);
  }

  /** Twilio echoes a mark once the audio before it was played: then the stream is closed and the call hangs up. */
  private sayGoodbyeThenEnd(): void {
    if (this.endTimer) return;
    this.toCarrier({ event: 'mark', streamSid: this.streamSid, mark: { name: END_CALL_MARK } });
    const left = this.playing ? Math.max(0, this.playing.firstAt + this.playing.bytes / ULAW_BYTES_PER_MS - Date.now()) : 0;
    this.endTimer = setTimeout(() => this.finish(ConversationStatus.ended), Math.min(60_000, left + END_CALL_GRACE_MS));
  }

  private async refreshPassages(query: string): Promise<void> {
    if (!this.agent?.knowledgeBaseConfig) return;
    try {
      const passages = await this.retrieve(query);
      if (!this.finished && this.agent) this.provider?.updateInstructions(sessionInstructions(this.agent, passages, this.memory));
    } catch (error) {
      this.deps.logger.warn({ callId: this.call.id, error: error instanceof Error ? error.message : String(error) }, 'knowledge retrieval failed during a call; the session keeps its passages');
    }
  }

  private async retrieve(query: string): Promise<Passage[]> {
    const config = this.agent?.knowledgeBaseConfig;
    if (!config || !query.trim()) return [];
    return this.deps.withContext(() =>
      this.deps.knowledge.retrieve(this.call.organizationId, config.knowledgeBaseId, query, { topK: config.topK, similarityThreshold: config.similarityThreshold }),
    );
  }

  private storeTurn(itemId: string): void {
    const turn = this.turns.get(itemId);
    this.turns.delete(itemId);
    const spoken = turn?.text.trim();
    if (spoken) this.store(MessageRole.assistant, redactPolicy(spoken, this.agent?.policy ?? null));
  }

  /** The call's turn latency, written once as the stream ends (none without a completed agent turn). */
  private storeLatency(): void {
    const latency = this.clock.summary(this.providerName);
    if (latency) this.queue(() => this.deps.conversations.recordTurnLatency(this.call.id, latency));
  }

  private store(role: MessageRole, content: string): void {
    const model = role === MessageRole.assistant ? this.modelLabel : null;
    this.queue(() => this.deps.conversations.add(this.conversationId!, this.call.organizationId, role, content.slice(0, 10_000), model));
  }

  private queue(work: () => Promise<void>): void {
    this.writes = this.writes.then(work).catch((error: unknown) => {
      this.deps.logger.error({ callId: this.call.id, error: error instanceof Error ? error.message : String(error) }, 'a call turn could not be stored');
    });
  }

  private toCarrier(message: Record<string, unknown>): void {
    if (this.twilio.readyState === WebSocket.OPEN) this.twilio.send(JSON.stringify(message));
  }

  /** The call is over (hang-up, end_call): what was said is kept, the conversation ended. */
  private finish(status: ConversationStatus.ended): void {
    if (this.finished) return;
    this.finished = true;
    if (this.endTimer) clearTimeout(this.endTimer);
    for (const itemId of [...this.turns.keys()]) this.storeTurn(itemId);
    this.storeLatency();
    this.provider?.close();
    if (this.conversationId) {
      const conversationId = this.conversationId;
      this.queue(() => this.deps.conversations.close(conversationId, status));
    }
    if (this.twilio.readyState === WebSocket.OPEN) this.twilio.close(1000, 'call ended');
  }

  /** The provider is gone or never came: the call ends `failed` with the reason, its contact retried per the program's policy. */
  private fail(reason: string): void {
    if (this.finished) return;
    this.finished = true;
    if (this.endTimer) clearTimeout(this.endTimer);
    this.deps.logger.warn({ callId: this.call.id, reason }, 'speech-to-speech call failed');
    for (const itemId of [...this.turns.keys()]) this.storeTurn(itemId);
    this.storeLatency();
    this.provider?.close();
    const conversationId = this.conversationId;
    this.queue(async () => {
      if (conversationId) await this.deps.conversations.close(conversationId, ConversationStatus.failed);
      await this.deps.tracker.failLive(this.call.id, reason);
    });
    // Closing the stream ends <Connect>: the carrier asks what next (stream-ended, which apologizes for a
    // call failed on our side) and then reports the call completed. Both must find the failure written,
    // so the stream closes once it is (or after a few seconds, should the database not answer: close-after.ts).
    void closeAfter(this.writes, () => {
      if (this.twilio.readyState === WebSocket.OPEN) this.twilio.close(1011, 'voice provider unavailable');
    });
  }

  /** Resolves once every turn was stored (tests and shutdown). */
  settled(): Promise<void> {
    return this.writes;
  }
}
