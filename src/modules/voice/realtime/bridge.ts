import type { Logger } from 'pino';
import type { Agent } from '../../agents/agent.entity.js';
import { AgentStatus, ConversationStatus, InterruptionMode, MessageRole, PipelineMode, type StsProvider } from '../../agents/agent.enums.js';
import type { ChatMessage, KnowledgePort, Passage } from '../../agents/agent.ports.js';
import { redactPolicy, saysPolicy, userLines } from '../../agents/prompt.js';
import type { CallTracker } from '../../telephony/call-tracker.js';
import type { CallConversations } from './call-conversation.js';
import { callToolEffect, callUserTools, declared, type CallToolsPort } from './call-tools.js';
import type { ModelTool } from '../../models/model.types.js';
import type { SpeechEvents, SpeechProvider, SpeechSession } from './speech-provider.js';
import type { CallTurnTiming } from '../../telephony/call-latency.types.js';
import { TurnClock } from './turn-latency.js';
import { EndOfSpeechDetector } from './end-of-speech.js';
import { closeAfter } from './close-after.js';
import { renderedPrompt, type RenderedPrompt } from '../../agents/templates/call-context.js';
import { firstMessageFor } from '../../agents/templates/first-message.js';
import type { MediaEvent, MediaLink } from '../../telephony/carriers/media-link.js';
import { CallerKeypad } from '../keypad/caller-keypad.js';
import { agentPressedLine, dtmfDurationMs, pressKeys } from '../keypad/dtmf-tones.js';
import type { TransferOutcome, TransferPort } from '../transfer/call-transfers.js';
import { sessionSummaryModel } from '../transfer/transfer-summary.js';
import { returnedLine, returnedSection, TRANSFER_CALL_TOOL, transferredLine } from '../transfer/transfer-tool.js';
import { InterruptionRules, interruptionSettings } from '../interruptions.js';
import { sessionInstructions, type PreparedSpeech } from './speech-preparation.js';

export { sessionInstructions };

/** μ-law at 8 kHz: one byte per sample, 8 bytes per millisecond. */
const ULAW_BYTES_PER_MS = 8;
/** Caller audio kept while the provider's session opens (Twilio sends 20 ms frames: 10 s). */
const MAX_QUEUED_FRAMES = 500;
const END_CALL_MARK = 'end_call';
/** How long an ending call waits for the carrier to say the goodbye was played, past its length. */
const END_CALL_GRACE_MS = 3000;
/**
 * Speech over the agent longer than this is no back-channel ("mhm" lasts a few hundred ms): where the
 * bridge decides, it cuts the reply without waiting for the words, which come only once the caller stops.
 */
export const LONG_SPEECH_MS = 1000;

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
  /** The organization's tools (HTTP and MCP) the agent may call beside the built-in ones; none without it. */
  tools?: CallToolsPort;
  /** The agent's transfer_call (call-transfers.ts); without it, the model is told transfers are not available. */
  transfers?: TransferPort;
  /** The call's session, opened while the carrier fetched its instructions (speech-preparation.ts), once; without one, the stream's start opens it. */
  preparedSpeech?: (callId: string) => Promise<PreparedSpeech | null> | null;
}

/** The call a media stream carries, as the media route checked it. */
export interface BridgedCall {
  id: string;
  organizationId: string;
  agentId: string;
  contactId: string | null;
  to: string;
  /** The pipeline mode of the call's agent when its stream was claimed (the media route's), when known. */
  pipelineMode?: string | null;
}

interface SpokenTurn {
  responseId: string | null;
  text: string;
  /** Where each delta began in the item's audio (ms sent before it), to cut the words where the caller stopped hearing. */
  marks?: { ms: number; length: number }[];
  /** The item was cut: how much of its audio the caller heard, of how much was sent (its late words are cut when it is stored). */
  cut?: { heardMs: number; sentMs: number };
}

/**
 * One call's speech-to-speech bridge: the carrier's media stream (a MediaLink) on one side, the agent's provider's
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
  /** The agent's prompt rendered for this call, and the policy its guard looks for. */
  private prompt: RenderedPrompt | null = null;
  /** When the call was answered, while the first message's first audio has not been sent (its latency). */
  private openingSince: number | null = null;
  private conversationId: string | null = null;
  private memory: ChatMessage[] = [];
  /** Back from a transfer that reached no one: the call so far and what the model is told of it (transfer-tool.ts returnedSection). */
  private back = '';
  /** What the caller said on this call: theirs already, so never judged as the policy (prompt.ts, saysPolicy). */
  private readonly callerSaid: string[] = [];
  private queued: string[] = [];
  private activeResponse: string | null = null;
  private readonly suppressed = new Set<string>();
  private readonly turns = new Map<string, SpokenTurn>();
  /** The agent's audio item being played, and how much of it was sent when. */
  private playing: { itemId: string; firstAt: number; bytes: number } | null = null;
  private followUp = false;
  /** The agent's own tools by name (HTTP and MCP), and how many of their calls are still running. */
  private userTools = new Map<string, ModelTool>();
  private toolsRunning = 0;
  private endRequested = false;
  private endTimer: NodeJS.Timeout | null = null;
  private finished = false;
  /** Ended by fail(): the conversation is closed `failed` by the write fail() queues. */
  private failed = false;
  /** Whether anything was said on the call (the agent's audio sent, or a turn stored): a call that fails before costs no credit. */
  private spoken = false;
  private writes: Promise<void> = Promise.resolve();
  /** The agent's `stsProvider`, once the session is opened (the latency's label). */
  private providerName = '';
  /** Each agent turn's stamps (turn-latency.ts), stored on the call when the stream ends. */
  private readonly clock: TurnClock;
  /** Our end-of-speech signal, for a provider without one; dropped once the agent's provider is known to have its own. */
  private endOfSpeech: EndOfSpeechDetector | null = new EndOfSpeechDetector(() => this.callerStopped());
  /** The caller's keys, a line a batch, held while the provider's session opens (10 s at most: a few lines); until when the agent's own tones play. */
  private readonly keypad = new CallerKeypad((line) => this.callerPressed(line), { maxLines: 20 });
  private keysPlayUntil = 0;
  /** What the caller's words over the agent do to its reply (voiceConfig.interruptions), and whether the bridge, not the provider, decides it (and asks for each reply). */
  private interruptions = new InterruptionRules(interruptionSettings(null));
  private decides = false;
  /** The caller began to speak while the agent spoke, and the provider was not let cut it: when, and how long they spoke (once they stopped). */
  private overTurn: { since: number; speechMs: number; cut: boolean; timer: NodeJS.Timeout | null } | null = null;
  /** The caller's turn is answered once the reply in progress is done. */
  private answerAfterReply = false;
  /** The caller's turns said over a reply still being generated: stored after it, in the order said against what was heard. */
  private heldCallerTurns: { content: string; backChannel: boolean }[] = [];

  constructor(
    private readonly deps: BridgeDeps,
    private readonly link: MediaLink,
    private readonly call: BridgedCall,
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
      // Made on this process while the carrier fetched the call's instructions: the session is open and its first message asked for.
      const prepared = (await this.deps.preparedSpeech?.(this.call.id)) ?? null;
      // Prepared for the agent the call had at its answer: if it has another now, or it is no longer a speech-to-speech one, the stream decides as before.
      if (prepared && prepared.agent.id === this.call.agentId && (this.call.pipelineMode ?? PipelineMode.sts) === PipelineMode.sts) {
        await this.adopt(prepared);
        return;
      }
      prepared?.session.close();
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
      const { context, answeredAt } = await conversations.callContext(this.call.organizationId, this.call.id, this.agent);
      this.prompt = renderedPrompt(this.agent, context);
      this.conversationId = await conversations.open(this.call.id, this.call.organizationId, this.agent.id, `Call to ${this.call.to}`, context);
      if (this.finished) {
        // The caller hung up while the conversation was being opened.
        await conversations.close(this.conversationId, ConversationStatus.ended);
        return;
      }
      this.memory = await conversations.memory(this.agent, this.call.organizationId, this.call.contactId, this.conversationId);
      const returned = await this.deps.transfers?.returned(this.call);
      if (returned) this.back = returnedSection(await conversations.transcript(this.conversationId), returned.destinationName, returned.dialStatus);
      const lastCallerTurn = [...this.memory].reverse().find((message) => message.role === 'user')?.content ?? '';
      const passages = await this.retrieve(lastCallerTurn);
      if (this.finished) return;
      this.speech = speech!;
      this.interruptions = new InterruptionRules(interruptionSettings(voice));
      this.decides = speech!.gatewayDecides?.(this.agent) ?? false;
      this.providerName = voice!.stsProvider!;
      this.modelLabel = speech!.modelLabel(this.agent);
      const own = await callUserTools(
        this.deps.tools,
        this.agent,
        {
          organizationId: this.call.organizationId,
          callId: this.call.id,
          conversationId: this.conversationId,
          context,
          guardPolicy: this.prompt.guardPolicy,
          callerSaid: () => this.callerLines(),
        },
        (work) => this.queue(work),
        logger,
      );
      this.userTools = new Map(own.map((tool) => [tool.name, tool]));
      if (this.finished) return;
      const provider = await speech!.open(this.agent, sessionInstructions(this.prompt, passages, this.memory, this.back), this, own.map(declared));
      if (this.finished) {
        provider.close();
        return;
      }
      this.provider = provider;
      provider.onLost((reason) => this.fail(reason));
      // The agent opens the call with its first message (timed from the answer), unless it waits for the caller;
      // back from a transfer that reached no one, it says so instead.
      if (returned) provider.sayFirst(returnedLine(returned.destinationName, returned.dialStatus));
      const opening = context && !returned ? firstMessageFor(this.agent, context) : null;
      if (opening) {
        this.openingSince = (answeredAt ?? new Date()).getTime();
        provider.sayFirst(opening);
      }
      for (const audio of this.queued.splice(0)) provider.appendCallerAudio(audio);
      for (const line of this.keypad.take()) this.callerPressed(line);
      logger.info({ callId: this.call.id, conversationId: this.conversationId }, 'speech-to-speech bridge open');
    } catch (error) {
      this.fail(error instanceof Error ? error.message : String(error));
    }
  }

  /**
   * The prepared session becomes the call's: what it read is the call's, what the provider said
   * meanwhile (the first message's audio) goes to the caller at once, and the caller's audio goes to
   * the provider from now on; the conversation is opened after, first in the queue of writes, so
   * every turn is stored in it.
   */
  private async adopt(prepared: PreparedSpeech): Promise<void> {
    const { conversations, logger } = this.deps;
    const { agent, speech, session } = prepared;
    if (this.finished) {
      // The caller hung up before the stream's start was read through.
      session.close();
      return;
    }
    this.agent = agent;
    this.prompt = prepared.prompt;
    this.memory = prepared.memory;
    if (speech.reportsEndOfSpeech) this.endOfSpeech = null;
    this.speech = speech;
    this.interruptions = new InterruptionRules(interruptionSettings(agent.voiceConfig));
    this.decides = speech.gatewayDecides?.(agent) ?? false;
    this.providerName = agent.voiceConfig!.stsProvider!;
    this.modelLabel = speech.modelLabel(agent);
    this.userTools = new Map(prepared.tools.map((tool) => [tool.name, tool]));
    this.provider = session;
    session.onLost((reason) => this.fail(reason));
    if (prepared.opening) this.openingSince = (prepared.answeredAt ?? new Date()).getTime();
    const opened = conversations.open(this.call.id, this.call.organizationId, agent.id, `Call to ${this.call.to}`, prepared.context);
    this.writes = this.writes
      .then(() => opened)
      .then(
        (id) => {
          this.conversationId = id;
          prepared.binding.conversationId = id;
        },
        () => undefined,
      );
    prepared.binding.queue = (work) => this.queue(work);
    prepared.binding.callerSaid = () => this.callerLines();
    prepared.held.adopt(this);
    for (const audio of this.queued.splice(0)) session.appendCallerAudio(audio);
    for (const line of this.keypad.take()) this.callerPressed(line);
    const conversationId = await opened;
    if (this.finished) {
      // The caller hung up (or the provider dropped) while the conversation was being opened: fail() closes
      // it failed, by a write queued after the one that set its id; a hang-up closes it ended here.
      if (!this.failed) this.queue(() => conversations.close(conversationId, ConversationStatus.ended));
      return;
    }
    logger.info({ callId: this.call.id, conversationId, prepared: true }, 'speech-to-speech bridge open');
  }

  /** One event of the call's media stream after its `start`. */
  fromCarrier(event: MediaEvent): void {
    if (this.finished) return;
    switch (event.kind) {
      case 'audio': {
        const { payload } = event;
        // Before the frame goes on: the turn is timed from the frame that ended the speech, not from the provider's hearing it.
        this.endOfSpeech?.push(Buffer.from(payload, 'base64'));
        if (this.provider) this.provider.appendCallerAudio(payload);
        else if (this.queued.length < MAX_QUEUED_FRAMES) this.queued.push(payload);
        return;
      }
      case 'dtmf':
        this.keypad.press(event.digit);
        return;
      case 'mark':
        if (event.name === END_CALL_MARK) this.finish(ConversationStatus.ended);
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

  /**
   * The caller began to speak. Where the provider cuts on any sound (mode any; Gemini in mode words),
   * the agent stops here; else, over the agent, the caller's words decide once transcribed (callerTurn).
   */
  callerStarted(): void {
    if (this.finished) return;
    const holds = this.decides || this.interruptions.mode === InterruptionMode.never;
    if (this.overTurn?.timer) clearTimeout(this.overTurn.timer);
    this.overTurn = holds && this.agentSpeaking() ? { since: Date.now(), speechMs: 0, cut: false, timer: null } : null;
    if (!holds) this.bargeIn();
    else if (this.overTurn && this.decides && this.interruptions.mode === InterruptionMode.words) {
      const over = this.overTurn;
      over.timer = setTimeout(
        () => {
          over.timer = null;
          if (this.overTurn !== over || this.finished) return;
          over.cut = true;
          this.bargeIn();
        },
        Math.max(LONG_SPEECH_MS, this.interruptions.minSpeechMs),
      );
      over.timer.unref?.();
    }
  }

  /** The caller stopped speaking (OpenAI's server VAD, or our detector for Gemini): the agent's turn is timed from here. */
  callerStopped(): void {
    if (this.finished) return;
    this.clock.begin(true, this.activeResponse);
    if (!this.decides) return;
    // The bridge asks for the replies: a caller who spoke into silence (or whose long speech cut the agent) is answered at once, as the provider would have.
    const over = this.overTurn;
    if (over?.timer) clearTimeout(over.timer);
    if (over && !over.cut) {
      over.timer = null;
      over.speechMs = Date.now() - over.since;
      return;
    }
    this.overTurn = null;
    this.answer();
  }

  /** Whether the agent is speaking: a reply being generated, or its audio still playing at the carrier. */
  private agentSpeaking(): boolean {
    return Boolean(this.activeResponse) || Boolean(this.playing && Date.now() < this.playing.firstAt + this.playing.bytes / ULAW_BYTES_PER_MS);
  }

  /** The caller's turn is answered: now, or once the reply in progress is done (a provider refuses a second reply meanwhile). */
  private answer(): void {
    if (this.activeResponse) this.answerAfterReply = true;
    else this.provider?.answerCaller?.();
  }

  /** The provider stopped its reply because the caller spoke: what the carrier still holds is dropped, the words kept as far as they were heard. */
  interrupted(): void {
    if (this.finished) return;
    this.cutAgentAudio(false);
    this.activeResponse = null;
  }

  /**
   * The caller's turn, transcribed. Said over the agent when the provider was not let cut it: a turn
   * of back-channels ("mhm") is stored marked and answered by nothing, the reply going on; other words
   * cut the reply when they are enough (mode words) and are answered, at once or after the reply.
   */
  callerTurn(transcript: string): void {
    if (this.finished) return;
    const over = this.overTurn;
    this.overTurn = null;
    if (over?.timer) clearTimeout(over.timer);
    if (over && !over.cut && this.interruptions.backChannel(transcript)) {
      this.storeCallerTurn(transcript, true);
      return;
    }
    this.callerSaid.push(transcript);
    void this.refreshPassages(transcript);
    if (!over || !this.decides || over.cut) {
      this.store(MessageRole.user, transcript);
      return;
    }
    if (this.interruptions.cuts(transcript, over.speechMs)) this.bargeIn();
    this.storeCallerTurn(transcript, false);
    this.answer();
  }

  /** A caller turn said over the agent: stored now, or after the reply still being generated (its words are stored when it is done). */
  private storeCallerTurn(content: string, backChannel: boolean): void {
    if (this.activeResponse && this.heldCallerTurns.length < 50) this.heldCallerTurns.push({ content, backChannel });
    else if (!this.activeResponse) this.store(MessageRole.user, content, backChannel);
  }

  private storeHeldCallerTurns(): void {
    for (const turn of this.heldCallerTurns.splice(0)) this.store(MessageRole.user, turn.content, turn.backChannel);
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
    // A cancelled or cut reply keeps what was said of it; then what the caller said over it.
    for (const [itemId, turn] of this.turns) if (!id || turn.responseId === id) this.storeTurn(itemId);
    if (this.activeResponse === null) this.storeHeldCallerTurns();
    if (this.endRequested) this.sayGoodbyeThenEnd();
    else if (this.followUp && this.toolsRunning === 0) this.speakAfterTools(id || null);
    else if (this.answerAfterReply && this.activeResponse === null) {
      this.answerAfterReply = false;
      this.provider?.answerCaller?.();
    }
  }

  /** The tools' answers are in and the reply that called them is over: the model speaks to them. */
  private speakAfterTools(replyId: string | null): void {
    this.followUp = false;
    // The reply asked for now answers the caller's turn too.
    this.answerAfterReply = false;
    this.provider?.replyAfterTools();
    this.clock.begin(false, replyId);
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
    this.spoken = true;
    this.link.audio(delta);
    if (firstOfTurn !== null) this.clock.sent(firstOfTurn);
    if (this.openingSince !== null) {
      this.clock.firstAudio(Date.now() - this.openingSince);
      this.openingSince = null;
    }
  }

  /** The agent's words as they are generated: the policy guard watches them before more audio goes out. */
  agentWords(responseId: string, itemId: string, delta: string): void {
    if (this.finished) return;
    const turn = this.turns.get(itemId) ?? { responseId: responseId || null, text: '' };
    turn.responseId ??= responseId || null;
    // Once the guard has cut a reply, what follows was never heard: it is not the transcript either.
    if (this.suppressed.has(responseId)) return;
    if (this.speech?.transcriptCutAtHeard) {
      // Words that come after the cut are of audio already sent (the transcription lags it): placed at its end.
      const sentMs = turn.cut ? turn.cut.sentMs : this.playing?.itemId === itemId ? this.playing.bytes / ULAW_BYTES_PER_MS : 0;
      (turn.marks ??= []).push({ ms: sentMs, length: turn.text.length });
    }
    turn.text += delta;
    this.turns.set(itemId, turn);
    const policy = this.prompt?.guardPolicy ?? null;
    if (policy && !this.suppressed.has(responseId) && saysPolicy(turn.text, policy, this.callerLines())) {
      this.deps.logger.warn({ callId: this.call.id }, 'the agent began to say its hidden policy: its audio was cleared and the reply cancelled');
      this.suppressed.add(responseId);
      this.cutAgentAudio(true);
    }
  }

  /** The caller spoke over the agent: what the carrier still holds is dropped and the reply stopped where the caller heard it (not while the agent's keys play: a menu talks on). */
  private bargeIn(): void {
    if (Date.now() < this.keysPlayUntil) return;
    const stillPlaying = this.playing && Date.now() < this.playing.firstAt + this.playing.bytes / ULAW_BYTES_PER_MS;
    if (this.activeResponse || stillPlaying) this.cutAgentAudio(Boolean(this.activeResponse));
  }

  private cutAgentAudio(cancel: boolean): void {
    this.link.clear();
    if (cancel) this.provider?.cancelReply();
    if (this.playing) {
      const heardMs = Math.max(0, Math.min(this.playing.bytes / ULAW_BYTES_PER_MS, Date.now() - this.playing.firstAt));
      this.provider?.truncate(this.playing.itemId, heardMs);
      this.cutWordsAtHeard(this.playing.itemId, heardMs, this.playing.bytes / ULAW_BYTES_PER_MS);
      this.playing = null;
    }
  }

  /**
   * A provider whose transcript is what it generated: the cut reply will keep the words whose audio
   * had begun to play. It is stored when the provider ends the reply, since the words of audio
   * already sent may still come (Gemini's transcription is independent of its audio).
   */
  private cutWordsAtHeard(itemId: string, heardMs: number, sentMs: number): void {
    if (!this.speech?.transcriptCutAtHeard) return;
    // The item's words may all be still to come: it is the reply in progress (or last heard).
    const turn = this.turns.get(itemId) ?? { responseId: this.activeResponse, text: '' };
    turn.cut = { heardMs, sentMs };
    this.turns.set(itemId, turn);
  }

  /**
   * The words of a cut item the caller heard. A word is heard when its audio had begun to play: by
   * where it came in the audio sent (its mark), or, for the words that came late, by its place in
   * the whole text against the share of the audio heard; whichever says earlier.
   */
  private heardWords(turn: SpokenTurn): string {
    const cut = turn.cut;
    if (!cut) return turn.text;
    const heardShare = cut.sentMs > 0 ? cut.heardMs / cut.sentMs : 0;
    for (const mark of turn.marks ?? []) {
      const byPlace = turn.text.length > 0 ? (mark.length / turn.text.length) * cut.sentMs : 0;
      if (mark.ms >= cut.heardMs && byPlace >= heardShare * cut.sentMs) return turn.text.slice(0, mark.length);
    }
    return turn.text;
  }

  private tool(name: string, callId: string, args: Record<string, unknown>): void {
    const own = this.userTools.get(name);
    if (own) {
      this.runOwnTool(own, callId, args);
      return;
    }
    // Only an agent with destinations is offered transfer_call; from any other it is an unknown tool.
    if (name === TRANSFER_CALL_TOOL && (this.agent?.transferDestinations.length ?? 0) > 0) {
      this.transfer(callId, args);
      return;
    }
    const effect = callToolEffect(this.agent, name, args, this.prompt?.guardPolicy ?? null, this.callerLines());
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
    else if (effect.digits) this.press(effect.digits);
    else this.followUp = true;
    this.provider?.answerTool(callId, name, effect.output);
  }

  /**
   * One of the agent's own tools: it runs while the call goes on (its deadline bounds it; the tool
   * runner never throws), its answer (or the error the model can apologise with) goes back to the
   * provider, and once every tool of the reply has answered and the reply is over the model speaks on.
   */
  private runOwnTool(tool: ModelTool, callId: string, args: Record<string, unknown>): void {
    this.toolsRunning += 1;
    this.followUp = true;
    void tool
      .execute(args)
      .catch((error: unknown) => ({ error: `the tool could not be called (${error instanceof Error ? error.name : 'error'})` }))
      .then((output) => {
        this.toolsRunning -= 1;
        if (this.finished) return;
        this.provider?.answerTool(callId, tool.name, output);
        if (this.toolsRunning === 0 && this.activeResponse === null && this.followUp && !this.endRequested) this.speakAfterTools(null);
      });
  }

  /**
   * transfer_call: run as the agent's own tools are (the model speaks on once it answered, unless
   * the call was transferred). Once the carrier took it, the transfer is stored in the transcript and
   * the agent leaves: its session and the media stream end (the carrier now plays the line and dials).
   */
  private transfer(callId: string, args: Record<string, unknown>): void {
    const port = this.deps.transfers;
    this.toolsRunning += 1;
    this.followUp = true;
    // After the turns already queued are stored: a warm transfer's briefing is written from the transcript.
    const done: Promise<TransferOutcome> = port
      ? this.writes
          .then(() => port.transfer(this.call, this.agent!, args, sessionSummaryModel(this.provider, this.modelLabel ?? '')))
          .catch((error: unknown) => {
            this.deps.logger.warn({ callId: this.call.id, error: error instanceof Error ? error.message : String(error) }, 'a transfer failed');
            return { output: { transferred: false, error: 'the transfer could not be made; the call goes on with you' }, transferred: null };
          })
      : Promise.resolve({ output: { transferred: false, error: 'transfer is not available on this call' }, transferred: null });
    void done.then((outcome) => {
      this.toolsRunning -= 1;
      if (this.finished) return;
      if (outcome.transferred) {
        // The conversation stays open: the caller may come back (a dial that reached no one); the call's end closes it.
        this.finish(ConversationStatus.ended, transferredLine(outcome.transferred.name, outcome.transferred.briefing), true);
        return;
      }
      this.provider?.answerTool(callId, TRANSFER_CALL_TOOL, outcome.output);
      if (this.toolsRunning === 0 && this.activeResponse === null && this.followUp && !this.endRequested) this.speakAfterTools(null);
    });
  }

  /** The caller's keys (one line a batch): stored as theirs, then read by the model, which answers them as it answers a tool. */
  private callerPressed(line: string): void {
    if (this.finished) return;
    if (!this.provider) {
      this.keypad.hold(line);
      return;
    }
    this.store(MessageRole.user, line);
    if (this.interruptions.mode !== InterruptionMode.never) this.bargeIn();
    this.provider.callerKeys(line);
    this.followUp = true;
    if (this.activeResponse === null && this.toolsRunning === 0 && !this.endRequested) this.speakAfterTools(null);
  }

  /** send_digits: the keys' tones go out after the audio sent so far; the model listens on (to the menu) rather than being asked to speak. */
  private press(digits: string): void {
    const playingUntil = this.playing ? this.playing.firstAt + this.playing.bytes / ULAW_BYTES_PER_MS : 0;
    this.keysPlayUntil = Math.max(Date.now(), playingUntil) + dtmfDurationMs(digits);
    pressKeys(this.link, digits);
    this.store(MessageRole.assistant, agentPressedLine(digits));
  }

  /** The carrier echoes a mark once the audio before it was played: then the stream is closed and the call hangs up. */
  private sayGoodbyeThenEnd(): void {
    if (this.endTimer) return;
    this.link.mark(END_CALL_MARK);
    const left = this.playing ? Math.max(0, this.playing.firstAt + this.playing.bytes / ULAW_BYTES_PER_MS - Date.now()) : 0;
    this.endTimer = setTimeout(() => this.finish(ConversationStatus.ended), Math.min(60_000, left + END_CALL_GRACE_MS));
  }

  private async refreshPassages(query: string): Promise<void> {
    if (!this.agent?.knowledgeBaseConfig) return;
    try {
      const passages = await this.retrieve(query);
      if (!this.finished && this.prompt) this.provider?.updateInstructions(sessionInstructions(this.prompt, passages, this.memory, this.back));
    } catch (error) {
      this.deps.logger.warn(
        { callId: this.call.id, error: error instanceof Error ? error.message : String(error) },
        'knowledge retrieval failed during a call; the session keeps its passages',
      );
    }
  }

  private async retrieve(query: string): Promise<Passage[]> {
    const config = this.agent?.knowledgeBaseConfig;
    if (!config || !query.trim()) return [];
    return this.deps.withContext(() =>
      this.deps.knowledge.retrieve(this.call.organizationId, config.knowledgeBaseId, query, {
        topK: config.topK,
        similarityThreshold: config.similarityThreshold,
      }),
    );
  }

  private storeTurn(itemId: string): void {
    const turn = this.turns.get(itemId);
    this.turns.delete(itemId);
    const spoken = turn && this.heardWords(turn).trim();
    if (spoken) this.store(MessageRole.assistant, redactPolicy(spoken, this.prompt?.guardPolicy ?? null, this.callerLines()));
  }

  /** The caller's words on this call and in the memory of earlier ones. */
  private callerLines(): string[] {
    return [...userLines(this.memory), ...this.callerSaid];
  }

  /** Keys pressed and not yet told when the call ends are kept in the transcript. */
  private storeKeysLeft(): void {
    const lines = this.keypad.end();
    if (this.conversationId) for (const line of lines) this.store(MessageRole.user, line);
  }

  /** The call's turn latency, written once as the stream ends (none without a completed agent turn). */
  private storeLatency(): void {
    const latency = this.clock.summary(this.providerName);
    if (latency) this.queue(() => this.deps.conversations.recordTurnLatency(this.call.id, latency));
  }

  private store(role: MessageRole, content: string, backChannel = false): void {
    this.spoken = true;
    const model = role === MessageRole.assistant ? this.modelLabel : null;
    this.queue(() => this.deps.conversations.add(this.conversationId!, this.call.organizationId, role, content.slice(0, 10_000), model, backChannel));
  }

  private queue(work: () => Promise<void>): void {
    this.writes = this.writes.then(work).catch((error: unknown) => {
      this.deps.logger.error({ callId: this.call.id, error: error instanceof Error ? error.message : String(error) }, 'a call turn could not be stored');
    });
  }

  /** The call is over (hang-up, end_call, a transfer: its `lastLine`, the conversation kept open): what was said is kept, the conversation ended. */
  private finish(status: ConversationStatus.ended, lastLine?: string, keepConversation = false): void {
    if (this.finished) return;
    this.provider?.flush?.();
    this.finished = true;
    if (this.endTimer) clearTimeout(this.endTimer);
    for (const itemId of [...this.turns.keys()]) this.storeTurn(itemId);
    this.storeHeldCallerTurns();
    this.storeKeysLeft();
    if (lastLine && this.conversationId) this.store(MessageRole.assistant, lastLine);
    this.storeLatency();
    this.provider?.close();
    if (this.conversationId && !keepConversation) {
      const conversationId = this.conversationId;
      this.queue(() => this.deps.conversations.close(conversationId, status));
    }
    if (this.link.open) this.link.close(1000, 'call ended');
  }

  /** The provider is gone or never came: the call ends `failed` with the reason, its contact retried per the program's policy. */
  private fail(reason: string): void {
    if (this.finished) return;
    this.provider?.flush?.();
    this.finished = true;
    this.failed = true;
    if (this.endTimer) clearTimeout(this.endTimer);
    this.deps.logger.warn({ callId: this.call.id, reason }, 'speech-to-speech call failed');
    for (const itemId of [...this.turns.keys()]) this.storeTurn(itemId);
    this.storeHeldCallerTurns();
    this.storeKeysLeft();
    this.storeLatency();
    this.provider?.close();
    this.queue(async () => {
      // Read when the write runs, not now: an adopted session's conversation id is set by a write queued before this one.
      const conversationId = this.conversationId;
      if (conversationId) await this.deps.conversations.close(conversationId, ConversationStatus.failed);
      await this.deps.tracker.failLive(this.call.id, reason, { spoken: this.spoken });
    });
    // Closing the stream ends <Connect>: the carrier asks what next (stream-ended, which apologizes for a
    // call failed on our side) and then reports the call completed. Both must find the failure written,
    // so the stream closes once it is (or after a few seconds, should the database not answer: close-after.ts).
    void closeAfter(this.writes, () => {
      if (this.link.open) this.link.close(1011, 'voice provider unavailable');
    });
  }

  /** Resolves once every turn was stored (tests and shutdown). */
  settled(): Promise<void> {
    return this.writes;
  }
}
