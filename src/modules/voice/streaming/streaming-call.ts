import { performance } from 'node:perf_hooks';
import type { Logger } from 'pino';
import type { Agent } from '../../agents/agent.entity.js';
import { AgentStatus, ConversationStatus, InterruptionMode, MessageRole, PipelineMode } from '../../agents/agent.enums.js';
import type { ChatMessage, KnowledgePort, Passage } from '../../agents/agent.ports.js';
import { buildSystemPrompt, memoryWindow, policySection, redactPolicy, userLines } from '../../agents/prompt.js';
import type { StreamPart, StreamRequest, StreamTool } from '../../models/model.types.js';
import type { CallTracker } from '../../telephony/call-tracker.js';
import type { CallTurnTiming } from '../../telephony/call-latency.types.js';
import { WORDS } from '../voice-actions.js';
import type { CallConversations } from '../realtime/call-conversation.js';
import { callToolEffect, callTools, callUserTools, type CallToolsPort } from '../realtime/call-tools.js';
import { EndOfSpeechDetector } from '../realtime/end-of-speech.js';
import { closeAfter } from '../realtime/close-after.js';
import { PolicyGuard } from './policy-guard.js';
import { SentenceChunker } from './sentences.js';
import type {
  Recognizer,
  RecognizerEvents,
  RecognizerName,
  RecognizerSession,
  SynthesisEvents,
  SynthesisStream,
  Synthesizer,
  SynthesizerName,
} from './speech-ports.js';
import { StreamingTurnClock, type EagerStamps } from './streaming-latency.js';
import { openingLine, streamingParties, type PreparedSynthesis, type StreamPreparations } from './stream-preparations.js';
import { renderedPrompt, type RenderedPrompt } from '../../agents/templates/call-context.js';
import { isKey } from '../keypad/keypad-presses.js';
import { CallerKeypad } from '../keypad/caller-keypad.js';
import { agentPressedLine, pressKeys } from '../keypad/dtmf-tones.js';
import type { TransferPort } from '../transfer/call-transfers.js';
import { returnedSection, TRANSFER_CALL_TOOL, transferredLine } from '../transfer/transfer-tool.js';
import { InterruptionRules, interruptionSettings } from '../interruptions.js';

/** μ-law at 8 kHz: one byte per sample, 8 bytes per millisecond. */
const BYTES_PER_MS = 8;
/** Caller audio kept while the recognizer's session opens (Twilio's 20 ms frames: 10 s). */
const MAX_QUEUED_FRAMES = 500;
const END_CALL_MARK = 'end_call';
/** How long an ending call waits for the carrier to say the goodbye was played, past its length. */
const END_CALL_GRACE_MS = 3000;
/** How long a turn cut at its limit waits for the recognizer's final before taking its interim words. */
const FINALIZE_WAIT_MS = 500;

/** The pipeline's timing rules; each has a default, tests and the benchmark may set them. */
export interface TurnRules {
  /** The least time between the end of the caller's speech and the agent's first audio: a natural pause, never a longer wait (providers slower than it add nothing). */
  graceMs: number;
  /** A caller turn longer than this (in the caller's audio) is cut: what was heard is made final and answered. */
  maxTurnMs: number;
  /** Keys pressed without `#` end the turn after this long without another key (keypad-presses.ts gathers them). */
  keysTimeoutMs: number;
  /** The caller silent this long (in the caller's audio) after the agent spoke: a reprompt, then, the second time, goodbye. */
  silenceMs: number;
  /** A reply whose first audio has not come this long after its turn ended fails the call (a hung provider). */
  replyTimeoutMs: number;
  /** A model whose first sentence has not come this long after it was asked: a short filler is said meanwhile (0: never). */
  fillerAfterMs: number;
}

export const DEFAULT_TURN_RULES: TurnRules = {
  graceMs: 200,
  maxTurnMs: 30_000,
  keysTimeoutMs: 2_000,
  silenceMs: 10_000,
  replyTimeoutMs: 15_000,
  fillerAfterMs: 1_500,
};

/** The carrier side of a call's media: a carrier's socket, or the simulator's caller in-process. */
import type { MediaEvent, MediaLink } from '../../telephony/carriers/media-link.js';

export interface StreamingDeps {
  conversations: CallConversations;
  tracker: CallTracker;
  knowledge: KnowledgePort;
  /** Runs database work of the agents and knowledge modules in a request context of its own. */
  withContext<T>(work: () => Promise<T>): Promise<T>;
  /** The agent's model, streamed (ModelService.stream). */
  model: { stream(request: StreamRequest): AsyncIterable<StreamPart> };
  recognizers: Partial<Record<RecognizerName, Recognizer>>;
  synthesizers: Partial<Record<SynthesizerName, Synthesizer>>;
  logger: Logger;
  rules?: Partial<TurnRules>;
  /** The simulator: every call hears and speaks through the builtin pair, whatever its agent names. */
  offline?: boolean;
  /** Told each agent turn's latency as it completes (the Prometheus histograms). */
  observeTurn?: (labels: { mode: 'streaming'; provider: string }, turn: CallTurnTiming) => void;
  /** The do-not-call list, for the agent's opt_out tool (DoNotCallService.optOut). */
  doNotCall: { optOut(organizationId: string, target: { callId: string }): Promise<unknown> };
  /** Ends the call's conversation as a typed one ends (its resolution criteria judged); without it, it is only closed. */
  endConversation?: (organizationId: string, conversationId: string, failed: boolean) => Promise<void>;
  /** The organization's tools (HTTP and MCP) the agent may call beside the built-in ones; none without it. */
  tools?: CallToolsPort;
  /** The agent's transfer_call (call-transfers.ts); without it (the simulator), the model is told transfers are not available. */
  transfers?: TransferPort;
  /** The first words prepared while the carrier fetched the call's instructions (stream-preparations.ts); without it, the stream's start opens everything. */
  preparations?: Pick<StreamPreparations, 'take'>;
}

/** The call a media stream carries, as the media route checked it. */
export interface StreamedCall {
  id: string;
  organizationId: string;
  agentId: string;
  contactId: string | null;
  to: string;
}

/** One agent reply in flight: its text as written, what was sent to the synthesizer, what the caller heard. */
interface Reply {
  id: number;
  abort: AbortController;
  synthesis: SynthesisStream | null;
  /** Text pushed to the synthesizer (all pushes joined). */
  spoken: string;
  /** Characters of `spoken` whose audio has been sent, and of those, heard (the carrier's marks). */
  sentChars: number;
  heardChars: number;
  /** Audio sent to the carrier for this reply, in ms, and when its first byte went. */
  sentMs: number;
  firstSentAt: number | null;
  /** Every push was synthesized; and all its audio was sent, with the last mark. */
  synthesized: boolean;
  allSent: boolean;
  /** Stored in the conversation (once). */
  stored: boolean;
  /** Said by the gateway itself (greeting, reprompt, goodbye), not the model: stored without a model label. */
  fixed: boolean;
  /** The call ends once this reply has been heard. */
  endsCall: boolean;
  /** The caller speaking does not cut it (the answer to a turn cut at its limit). */
  holdsFloor: boolean;
  /** Says the filler if the model is slow; cleared by the model's first words. */
  fillerTimer: NodeJS.Timeout | null;
  /** Characters of `spoken` that are the gateway's filler, said while the model was slow (not the model's words). */
  fillerChars: number;
  /** Where the reply goes in the model's memory of this call (after the caller's turn it answers); null for the gateway's own lines. */
  historyAt: number | null;
  /** Audio waiting for the grace period to pass. */
  held: { ulaw: Buffer; textEnd: number }[];
  holdTimer: NodeJS.Timeout | null;
  /** The caller's back-channels said over it: stored after it (the order they were said in against what was heard). */
  backChannels: string[];
  /**
   * Started at the recognizer's eager end of turn (Flux EagerEndOfTurn) and not yet confirmed by its
   * end of turn: the model and the synthesizer work, but nothing reaches the caller (its audio is
   * held), nothing is stored, and its tool calls wait (heldTools).
   */
  speculative: boolean;
  /** The caller's words it answers while they are not yet in the model's memory of the call (a speculative reply's). */
  pendingUser: string | null;
  /** When a speculative reply reached its stages before its turn ended (the turn's clock counts from the end of the turn). */
  eagerStamps: EagerStamps;
}

/** A reply started at an eager end of turn, waiting for the turn's end: kept if the caller's words are the same then, else cancelled. */
interface Speculation {
  /** The caller's turn as it would be answered (callerTurnText), compared with the turn's at its end. */
  said: string;
  reply: Reply;
  /** The length of the model's memory of the call when it started: a reply stored since makes it stale. */
  historyLength: number;
  synthesis: Promise<SynthesisStream | null> | null;
  /** Resolves true when the turn's end adopts it, false when it is cancelled. */
  confirmed: Promise<boolean>;
  settle(confirmed: boolean): void;
}

/** The caller's words and keys of one turn, as the model is given them (the keys as their lines: "[the caller pressed 42#]"). */
function callerTurnText(speech: string, keys: string): string {
  const said = speech.trim();
  if (!keys) return said;
  return said ? `${said} ${keys}` : keys;
}

/** The text up to `chars`, cut back to a whole word unless the cut falls at a word's end. */
function heardText(spoken: string, chars: number): string {
  if (chars >= spoken.length) return spoken.trim();
  const head = spoken.slice(0, chars);
  if (/\s/u.test(spoken[chars] ?? ' ')) return head.trim();
  const space = head.search(/\s\S*$/u);
  return space < 0 ? '' : head.slice(0, space).trim();
}

/**
 * One call's streaming voice pipeline: the carrier's media stream (a MediaLink) on one side; on the other a streaming
 * recognizer hearing the caller as the audio comes, the agent's model (the prompt path of typed
 * messages: instructions, hidden policy, passages, memory, resolution tools) streaming its reply, and
 * a streaming synthesizer speaking each sentence as it completes. The policy guard reads the reply
 * before any of it reaches the synthesizer. Barge-in clears the carrier's audio and cancels the
 * model and the synthesis; the agent's words are stored as far as the carrier said they were played
 * (its marks). Every database write goes through one queue, so turns are stored in the order heard.
 */
export class StreamingCall implements RecognizerEvents {
  private agent: Agent | null = null;
  /** The agent's prompt rendered for this call, and the policy its guard looks for. */
  private prompt: RenderedPrompt | null = null;
  /** When the call was answered, while the first message's first audio has not been sent (its latency), and that message's reply. */
  private openingSince: number | null = null;
  private openingReply: number | null = null;
  private conversationId: string | null = null;
  /** The conversation being opened: what is said meanwhile (the prepared first message) is stored in it once it is. */
  private conversationOpening: Promise<string> | null = null;
  private modelLabel: string | null = null;
  private recognizer: RecognizerSession | null = null;
  private synthesizer: Synthesizer | null = null;
  private voice = { voiceId: '', model: '' };
  private guard = new PolicyGuard(null);
  /** What the caller's words over the agent do to its reply (voiceConfig.interruptions). */
  private interruptions = new InterruptionRules(interruptionSettings(null));
  private readonly rules: TurnRules;
  private readonly clock: StreamingTurnClock;
  private providerLabel = '';
  /** Caller frames waiting for the recognizer, and the audio sent to it with when each frame arrived (audioEndMs → time). */
  private queued: Buffer[] = [];
  private audioMs = 0;
  private readonly frameTimes: { endMs: number; at: number }[] = [];
  /** Our own end of speech, for a recognizer that does not say where the words ended. */
  private readonly endOfSpeech: EndOfSpeechDetector;
  private lastSpeechEndAt: number | null = null;
  /** The caller's turn being heard. */
  private turnWords = '';
  private interimWords = '';
  /** The caller's keys: the lines of the turn being heard are held there; digits the agent pressed (send_digits), played once its reply was heard. */
  private readonly keypad: CallerKeypad;
  private digitsToPress = '';
  /** Where in the caller's audio (ms) the turn being heard started; null between turns. */
  private turnStartedAt: number | null = null;
  /** The turn was cut at maxTurnMs and waits for the recognizer's final. */
  private cutting = false;
  private turnTimer: NodeJS.Timeout | null = null;
  /** The next reply takes the floor (answers a turn cut at maxTurnMs); a turn that ended while the agent had the floor (its audio end). */
  private takeFloor = false;
  private turnEndWaiting: number | null | undefined = undefined;
  /** Messages of this call so far (for the model's memory), with the earlier calls' first. */
  private history: ChatMessage[] = [];
  /** Back from a transfer that reached no one: the call so far and what the model is told of it (transfer-tool.ts returnedSection). */
  private back = '';
  /** The agent's own tools (HTTP and MCP), read once the conversation is open. */
  private userTools: StreamTool[] = [];
  private reply: Reply | null = null;
  /** The reply started at the recognizer's eager end of turn, while the turn has not ended (at most one). */
  private speculation: Speculation | null = null;
  private replies = 0;
  /** Where in the caller's audio the agent last finished speaking (the silence counted from there); null while someone speaks. */
  private silenceFrom: number | null = null;
  private silencePrompts = 0;
  private endTimer: NodeJS.Timeout | null = null;
  private finished = false;
  /** Ended by fail(): a conversation opened after is closed `failed`. */
  private failed = false;
  /** Whether anything was said on the call (the agent's audio sent, or a turn stored): a call that fails before costs no credit. */
  private spoken = false;
  private writes: Promise<void> = Promise.resolve();

  constructor(
    private readonly deps: StreamingDeps,
    private readonly link: MediaLink,
    private readonly call: StreamedCall,
  ) {
    this.rules = { ...DEFAULT_TURN_RULES, ...deps.rules };
    this.clock = new StreamingTurnClock(this.rules.graceMs, (turn) => deps.observeTurn?.({ mode: 'streaming', provider: this.providerLabel }, turn));
    this.endOfSpeech = new EndOfSpeechDetector(() => {
      this.lastSpeechEndAt = performance.now();
    });
    this.keypad = new CallerKeypad((line) => this.keysTold(line), { rules: { quietMs: this.rules.keysTimeoutMs }, maxChars: 2000 });
  }

  /** Whether an agent speaks through this pipeline. */
  static handles(agent: Pick<Agent, 'voiceConfig'> | null): boolean {
    return agent?.voiceConfig?.pipelineMode === PipelineMode.streaming;
  }

  /**
   * Opens the conversation, the recognizer and the greeting; a failure ends the call `failed`. A
   * call whose agent is not a streaming one is not ours: `refuse` is told why and nothing is written.
   */
  async start(refuse: (reason: string) => void): Promise<void> {
    const { conversations, logger } = this.deps;
    /** The prepared first message, until the call's reply takes it: closed if the call never says it. */
    let unsaid: PreparedSynthesis | null = null;
    try {
      // Made while the carrier fetched the call's instructions, on this process: what it read is not read again, and its first message is already being spoken.
      const prepared = (await this.deps.preparations?.take(this.call.id)) ?? null;
      unsaid = prepared?.synthesis ?? null;
      this.agent = prepared ? prepared.agent : await conversations.agent(this.call.organizationId, this.call.agentId);
      if (this.agent && !StreamingCall.handles(this.agent)) {
        this.finished = true;
        refuse('the call’s agent is not a streaming agent');
        return;
      }
      if (!this.agent) throw new Error('The call’s agent no longer exists');
      if (this.agent.status === AgentStatus.archived) throw new Error('The call’s agent is archived');
      const voice = this.agent.voiceConfig!;
      this.interruptions = new InterruptionRules(interruptionSettings(voice));
      const parties = streamingParties(this.agent, this.deps);
      if ('missing' in parties) throw new Error(parties.missing);
      const { recognizer, recognizerName, synthesizerName } = parties;
      this.synthesizer = parties.synthesizer;
      this.voice = parties.voice;
      this.modelLabel = this.agent.modelConfig.model;
      this.providerLabel = `${recognizerName}+${synthesizerName}`;
      const { context, answeredAt } = prepared ?? (await conversations.callContext(this.call.organizationId, this.call.id, this.agent));
      this.prompt = renderedPrompt(this.agent, context);
      this.guard = new PolicyGuard(this.prompt.guardPolicy);
      const returned = prepared ? prepared.returned : await this.deps.transfers?.returned(this.call);
      // The first message is synthesized as it is (no model), timed from the answer; an agent that waits listens at once.
      // Back from a transfer that reached no one, the agent says so instead.
      const opening = openingLine(this.agent, context, returned);
      const ready = opening && unsaid?.line === opening ? unsaid : null;
      if (opening && ready) {
        // Its audio goes to the caller now, while the conversation and the recognizer are opened.
        unsaid = null;
        this.openingSince = (answeredAt ?? new Date()).getTime();
        this.say(opening, false, ready);
      }
      this.conversationOpening = conversations.open(this.call.id, this.call.organizationId, this.agent.id, `Call to ${this.call.to}`, context);
      this.conversationId = await this.conversationOpening;
      if (this.finished) {
        // Hung up, or failed (the opening line's synthesis), while the conversation was being opened: fail() had no id to close.
        const conversationId = this.conversationId;
        const status = this.failed ? ConversationStatus.failed : ConversationStatus.ended;
        this.queue(() => conversations.close(conversationId, status));
        return;
      }
      this.history = await conversations.memory(this.agent, this.call.organizationId, this.call.contactId, this.conversationId);
      if (returned) {
        const soFar = await conversations.transcript(this.conversationId);
        this.back = returnedSection(soFar, returned.destinationName, returned.dialStatus);
        this.history.push(...soFar);
      }
      this.userTools = await callUserTools(
        this.deps.tools,
        this.agent,
        {
          organizationId: this.call.organizationId,
          callId: this.call.id,
          conversationId: this.conversationId,
          context,
          guardPolicy: this.prompt.guardPolicy,
          callerSaid: () => userLines(this.history),
        },
        (work) => this.queue(work),
        logger,
      );
      if (this.finished) return;
      const session = await recognizer.open(
        {
          model: (this.deps.offline ? null : voice.sttModel) ?? recognizer.defaultModel,
          language: voice.language ?? 'en',
          turnDetection: voice.turnDetection ?? null,
        },
        this,
      );
      if (this.finished) {
        session.close();
        return;
      }
      this.recognizer = session;
      for (const frame of this.queued.splice(0)) session.send(frame);
      logger.info(
        { callId: this.call.id, conversationId: this.conversationId, recognizer: recognizerName, synthesizer: synthesizerName },
        'streaming voice pipeline open',
      );
      if (ready) return;
      if (opening) {
        this.openingSince = (answeredAt ?? new Date()).getTime();
        this.say(opening, false);
      } else this.startSilenceTimer();
    } catch (error) {
      this.fail(error instanceof Error ? error.message : String(error));
    } finally {
      unsaid?.cancel();
    }
  }

  /** One event of the call's media stream after its `start`. */
  fromCarrier(event: MediaEvent): void {
    if (this.finished) return;
    switch (event.kind) {
      case 'audio': {
        const frame = Buffer.from(event.payload, 'base64');
        this.endOfSpeech.push(frame);
        this.audioMs += frame.length / BYTES_PER_MS;
        this.frameTimes.push({ endMs: this.audioMs, at: performance.now() });
        if (this.frameTimes.length > 1000) this.frameTimes.splice(0, 500);
        if (this.recognizer) this.recognizer.send(frame);
        else if (this.queued.length < MAX_QUEUED_FRAMES) this.queued.push(frame);
        this.onAudioClock();
        return;
      }
      case 'dtmf':
        this.key(event.digit);
        return;
      case 'mark':
        this.marked(event.name);
        return;
      case 'stop':
        this.finish();
        return;
    }
  }

  /** The carrier's socket closed: the caller hung up (what was said is kept). */
  carrierClosed(): void {
    this.finish();
  }

  // What the recognizer says (RecognizerEvents).

  speechStarted(): void {
    // A sound is not yet a word: barge-in waits for the recognizer's words (a cough does not cut the agent).
  }

  interim(words: string): void {
    if (this.finished || !words.trim()) return;
    this.interimWords = words;
    this.callerSpeaking();
  }

  final(words: string, endOfTurn: boolean, audioEndMs?: number): void {
    if (this.finished) return;
    this.interimWords = '';
    if (words.trim()) {
      this.turnWords = this.turnWords ? `${this.turnWords} ${words.trim()}` : words.trim();
      this.callerSpeaking();
    }
    if (endOfTurn) this.endTurn(audioEndMs);
  }

  utteranceEnd(audioEndMs?: number): void {
    if (!this.finished) this.endTurn(audioEndMs);
  }

  /**
   * The recognizer judges the turn likely over (Flux EagerEndOfTurn): the reply to the words so far is
   * started now, unheard, and kept if the turn ends with the same words. Not while the agent speaks
   * (those words are a barge-in or a back-channel, decided at the end of the turn), a turn cut at its
   * limit is being answered, or keys are held: those turns are answered at their end, as before.
   */
  eagerEndOfTurn(words: string): void {
    if (this.finished || !this.agent || !this.prompt || !this.conversationId) return;
    if (this.reply || this.cutting || this.keypad.held().length > 0 || this.turnEndWaiting !== undefined) return;
    const heard = words.trim();
    const said = callerTurnText(this.turnWords && heard ? `${this.turnWords} ${heard}` : this.turnWords || heard, '');
    if (!said || this.speculation?.said === said) return;
    this.cancelSpeculation();
    this.speculate(said);
  }

  /** The caller went on after an eager end of turn (Flux TurnResumed): the reply started for it is cancelled, unheard and unstored. */
  turnResumed(): void {
    if (!this.finished) this.cancelSpeculation();
  }

  lost(reason: string): void {
    this.fail(reason);
  }

  // The caller's turn.

  /** The caller is saying words: the agent stops if it was speaking and the words cut it (interruptions.ts), the turn's clocks start. */
  private callerSpeaking(): void {
    this.stopSilenceTimer();
    this.silencePrompts = 0;
    // The turn's length is counted in the caller's audio (Twilio sends frames without a break), so it means the same on a busy server and on the simulator's faster line.
    if (this.turnStartedAt === null) this.turnStartedAt = this.audioMs;
    if (this.reply && this.cutsReply(this.reply)) this.bargeIn();
  }

  /** A goodbye is not cut, nor the answer that takes the floor from a caller who would not stop, nor any reply of an agent whose interruptions mode is never. */
  private cuttable(reply: Reply): boolean {
    return !reply.endsCall && !reply.holdsFloor && this.interruptions.mode !== InterruptionMode.never;
  }

  /** Whether what the caller said (or pressed) of the turn being heard cuts the reply: keys do; words as the agent's interruptions say (a back-channel does not). */
  private cutsReply(reply: Reply): boolean {
    if (!this.cuttable(reply)) return false;
    if (this.keypad.held().length > 0) return true;
    const heard = this.interimWords ? `${this.turnWords} ${this.interimWords}` : this.turnWords;
    return this.interruptions.cuts(heard, this.turnStartedAt === null ? 0 : this.audioMs - this.turnStartedAt);
  }

  /**
   * A caller who has not stopped after maxTurnMs: the recognizer is asked to make what it heard final
   * (its final ends the turn), and that answer is not cut by the caller's speaking on; what they say
   * meanwhile is their next turn. A recognizer that does not finalize: its interim words, a moment later.
   */
  private longTurn(): void {
    if (this.finished || this.cutting) return;
    this.cutting = true;
    this.deps.logger.info({ callId: this.call.id, maxTurnMs: this.rules.maxTurnMs }, 'a caller turn reached its limit: answered as heard so far');
    this.takeFloor = true;
    this.recognizer?.finalize();
    this.turnTimer = setTimeout(() => {
      this.turnTimer = null;
      if (this.finished || this.turnStartedAt === null) return;
      if (this.interimWords) this.turnWords = this.turnWords ? `${this.turnWords} ${this.interimWords}` : this.interimWords;
      this.interimWords = '';
      this.endTurn();
    }, FINALIZE_WAIT_MS);
  }

  /** A key cuts the agent as words do; the keys are answered as one line (`#`, or keysTimeoutMs after the last). */
  private key(digit: string): void {
    if (this.finished || !isKey(digit)) return;
    this.stopSilenceTimer();
    if (this.reply && this.cuttable(this.reply)) this.bargeIn();
    // Last: a `#` tells the line at once, and the reply to it must not be the one just cut.
    this.keypad.press(digit);
  }

  private keysTold(line: string): void {
    if (this.finished) return;
    // Lines come at most one a second (keypad-presses.ts); while the agent holds the floor they wait, bounded.
    this.keypad.hold(line);
    this.endTurn();
  }

  /** The caller's turn is over (the recognizer's endpointing, `#`, a key timeout, the turn limit): the agent answers it. */
  private endTurn(audioEndMs?: number): void {
    const keys = this.keypad.held().join(' ');
    const said = callerTurnText(this.turnWords, keys);
    if (this.finished) return;
    if (!said) {
      this.cancelSpeculation();
      return;
    }
    if (this.reply && !keys && this.interruptions.backChannel(this.turnWords)) {
      this.cancelSpeculation();
      this.backChannel(this.reply);
      return;
    }
    if (this.reply && !this.cutsReply(this.reply)) {
      // The agent has the floor (or the words were too few to cut it): this turn is answered once its reply has been heard.
      this.cancelSpeculation();
      this.turnEndWaiting = audioEndMs ?? null;
      return;
    }
    const now = performance.now();
    const endOfSpeech = this.speechEndAt(audioEndMs) ?? now;
    this.turnWords = '';
    this.keypad.take();
    this.turnStartedAt = null;
    this.cutting = false;
    if (this.turnTimer) clearTimeout(this.turnTimer);
    this.turnTimer = null;
    if (this.reply) this.bargeIn();
    this.turnEndWaiting = undefined;
    this.store(MessageRole.user, said);
    this.clock.begin(endOfSpeech, now);
    const speculation = this.speculation;
    // The reply started at the eager end of turn answers exactly these words, with the same memory: it is this turn's.
    if (speculation && speculation.said === said && speculation.historyLength === this.history.length) {
      this.speculation = null;
      this.adopt(speculation);
      return;
    }
    this.cancelSpeculation();
    void this.answer(said);
  }

  /** A reply to the words so far, started at the eager end of turn: unheard until the turn's end adopts it. */
  private speculate(said: string): void {
    const reply = this.newReply(false, true);
    let settle: (confirmed: boolean) => void = () => undefined;
    const confirmed = new Promise<boolean>((resolve) => {
      settle = resolve;
    });
    const speculation: Speculation = { said, reply, historyLength: this.history.length, synthesis: null, confirmed, settle };
    this.speculation = speculation;
    this.clock.eagerStarted();
    void this.answer(said, speculation);
  }

  /**
   * The turn ended with the words the speculative reply answers: it becomes the turn's reply. The
   * caller's words join the model's memory, the reply's timeout starts, the turn's clock counts from
   * the end of the turn, held tool calls run, and the audio already made goes to the caller (after the
   * grace period from the end of speech, as any reply's first audio).
   */
  private adopt(speculation: Speculation): void {
    const reply = speculation.reply;
    reply.speculative = false;
    reply.holdsFloor = this.takeFloor;
    this.takeFloor = false;
    this.history.push({ role: 'user', content: speculation.said });
    reply.historyAt = this.history.length;
    reply.pendingUser = null;
    this.stopSilenceTimer();
    this.reply = reply;
    this.armReplyTimeout(reply);
    this.clock.adopt(reply.id, reply.eagerStamps);
    speculation.settle(true);
    if (reply.eagerStamps.firstChunk === null && speculation.synthesis) this.fillIfSlow(reply, speculation.synthesis);
    if (reply.held.length > 0 || reply.synthesized) this.flushHeld(reply);
  }

  /** The speculative reply is dropped (the caller went on, the words changed, the call ended): its model request and synthesis are aborted, nothing of it was sent or is stored. */
  private cancelSpeculation(): void {
    const speculation = this.speculation;
    if (!speculation) return;
    this.speculation = null;
    const reply = speculation.reply;
    reply.abort.abort();
    reply.synthesis?.cancel();
    if (reply.holdTimer) clearTimeout(reply.holdTimer);
    reply.held.length = 0;
    speculation.settle(false);
    this.clock.eagerCancelled();
  }

  /** The reply is the one the caller hears now, or the speculative one being prepared. */
  private isLive(reply: Reply): boolean {
    return this.reply === reply || this.speculation?.reply === reply;
  }

  /** A provider failed for `reply`: the call fails if it is the one being heard; a speculative one is dropped (its turn's end asks again). */
  private replyFailed(reply: Reply, reason: string): void {
    if (this.reply === reply) return this.fail(reason);
    if (this.speculation?.reply !== reply) return;
    this.deps.logger.warn({ callId: this.call.id, reason }, 'a reply started at an eager end of turn failed: the turn is answered afresh at its end');
    this.cancelSpeculation();
  }

  /**
   * The agent's tools for a speculative reply: a call the model makes waits until the turn's end
   * confirms the reply, then runs (so no tool acts on words the caller has not finished); if the
   * reply is cancelled meanwhile, it never runs (the model's stream is aborted with it).
   */
  private heldTools(speculation: Speculation): StreamTool[] {
    return this.tools().map((tool) => ({
      ...tool,
      execute: async (args: Record<string, unknown>) => {
        if (speculation.reply.speculative)
          this.deps.logger.info(
            { callId: this.call.id, tool: tool.name },
            'a tool call of a reply started at an eager end of turn waits for the end of the turn',
          );
        return (await speculation.confirmed) ? tool.execute(args) : { error: 'the caller went on speaking: nothing was done' };
      },
    }));
  }

  /**
   * A turn of back-channels only ("mhm", "yeah") while the agent speaks: its reply goes on, uncut and
   * not restarted; the words are stored as the caller's, marked, after the reply (they are no turn of
   * the model's memory).
   */
  private backChannel(reply: Reply): void {
    const said = this.turnWords.trim();
    this.turnWords = '';
    this.interimWords = '';
    this.turnStartedAt = null;
    this.cutting = false;
    if (this.turnTimer) clearTimeout(this.turnTimer);
    this.turnTimer = null;
    // A caller who only says "mhm" while the agent talks is not silent: bounded, as a long reply could hear many.
    if (reply.backChannels.length < 50) reply.backChannels.push(said);
  }

  /** When the audio that ended at `audioEndMs` arrived (the recognizer's word timings), else our detector's last end of speech. */
  private speechEndAt(audioEndMs?: number): number | null {
    if (audioEndMs !== undefined && Number.isFinite(audioEndMs)) {
      const frame = this.frameTimes.find((each) => each.endMs >= audioEndMs);
      if (frame) return frame.at;
    }
    return this.lastSpeechEndAt;
  }

  // The agent's reply.

  /** Asks the model, streaming: each complete sentence the guard passes goes to the synthesizer while the model writes on. */
  private async answer(said: string, speculation: Speculation | null = null): Promise<void> {
    const agent = this.agent!;
    const reply = speculation?.reply ?? this.newReply(false);
    const window = memoryWindow(agent.memoryConfig);
    const history = window > 0 ? this.history.slice(-window) : [];
    if (speculation) reply.pendingUser = said;
    else {
      reply.holdsFloor = this.takeFloor;
      this.takeFloor = false;
      this.history.push({ role: 'user', content: said });
      reply.historyAt = this.history.length;
    }
    const synthesis = this.openSynthesis(reply);
    if (speculation) speculation.synthesis = synthesis;
    let written = '';
    try {
      const passages = await this.retrieve(said);
      if (!this.isLive(reply)) return;
      const chunker = new SentenceChunker();
      // A speculative reply's turn is timed from its end (adopt()), and its filler armed there.
      if (!reply.speculative) {
        this.clock.modelAsked(reply.id);
        this.fillIfSlow(reply, synthesis);
      }
      const stream = this.deps.model.stream({
        model: agent.modelConfig.model,
        system: buildSystemPrompt(this.prompt!.instructions, this.prompt!.policy, passages, this.prompt!.filled) + this.back,
        hidden: policySection(this.prompt!.policy),
        messages: [...history, { role: 'user', content: said }],
        settings: agent.modelConfig.modelSettings ?? null,
        providerOptions: agent.modelConfig.providerOptions ?? null,
        passages: passages.map((passage) => ({ content: passage.content, score: passage.score, title: passage.title })),
        signal: reply.abort.signal,
        tools: speculation ? this.heldTools(speculation) : this.tools(),
      });
      let leaked = false;
      for await (const part of stream) {
        if (!this.isLive(reply)) break;
        if (part.type !== 'text') continue;
        written += part.text;
        for (const chunk of chunker.push(part.text)) {
          if (!(await this.speak(reply, synthesis, chunk))) {
            leaked = true;
            break;
          }
        }
        if (leaked) break;
      }
      if (!this.isLive(reply)) return;
      const rest = leaked ? null : chunker.flush();
      if (rest) await this.speak(reply, synthesis, rest);
      const opened = await synthesis;
      if (!this.isLive(reply)) return;
      if (!reply.spoken.trim()) {
        // Nothing to say (an empty reply, or one the guard stopped before a word): the line stays quiet, once the turn is over.
        if (speculation && !(await speculation.confirmed)) return;
        if (this.reply !== reply) return;
        opened?.cancel();
        this.replyHeard(reply);
      } else opened?.end();
    } catch (error) {
      if (!this.isLive(reply)) return;
      const message = error instanceof Error ? error.message : String(error);
      if (reply.speculative) return this.replyFailed(reply, message);
      this.deps.logger.warn({ callId: this.call.id, error: message, wrote: written.length }, 'the agent’s model failed during a call turn');
      this.fail(message);
    }
  }

  /** Sends one chunk to the synthesizer unless, with what was already said, it says or begins the hidden policy (then false: the reply stops here). */
  private async speak(reply: Reply, synthesis: Promise<SynthesisStream | null>, chunk: string): Promise<boolean> {
    const history = reply.pendingUser === null ? this.history : [...this.history, { role: 'user' as const, content: reply.pendingUser }];
    if (this.guard.leaks(reply.spoken + chunk, userLines(history))) {
      this.deps.logger.warn({ callId: this.call.id }, 'the agent began to say its hidden policy: the reply was stopped before it reached the synthesizer');
      reply.abort.abort();
      return false;
    }
    if (reply.fillerTimer) clearTimeout(reply.fillerTimer);
    // The model's share ends here: waiting for the synthesizer's socket to open is the synthesizer's.
    if (reply.speculative) reply.eagerStamps.firstChunk ??= performance.now();
    else this.clock.firstChunk(reply.id);
    const opened = await synthesis;
    if (!this.isLive(reply) || !opened) return true;
    reply.spoken += chunk;
    opened.push(chunk);
    return true;
  }

  /**
   * A model slower than fillerAfterMs to write its first sentence (a slow provider, a tool call): the
   * caller hears a short filler meanwhile rather than silence. It is the reply's first words to the
   * synthesizer (the turn's model time ends there), and it is not stored as the model's words.
   */
  private fillIfSlow(reply: Reply, synthesis: Promise<SynthesisStream | null>): void {
    if (this.rules.fillerAfterMs <= 0 || reply.fillerTimer) return;
    const timer = setTimeout(() => {
      void synthesis.then((opened) => {
        if (!opened || this.reply !== reply || reply.spoken !== '' || reply.abort.signal.aborted) return;
        const filler = `${WORDS.filler} `;
        this.clock.firstChunk(reply.id);
        reply.spoken = filler;
        reply.fillerChars = filler.length;
        opened.push(filler);
      });
    }, this.rules.fillerAfterMs);
    timer.unref?.();
    reply.fillerTimer = timer;
    reply.abort.signal.addEventListener('abort', () => clearTimeout(timer), { once: true });
  }

  /** The gateway's own line (greeting, reprompt, goodbye): no model, the same synthesizer; the first message's may have been prepared (its line already pushed). */
  private say(line: string, endsCall: boolean, prepared: PreparedSynthesis | null = null): void {
    if (this.finished) {
      prepared?.cancel();
      return;
    }
    const reply = this.newReply(true);
    reply.endsCall = endsCall;
    if (this.openingSince !== null && this.openingReply === null) this.openingReply = reply.id;
    if (prepared) {
      // Set before its held audio is told, so the marks count in it.
      reply.spoken = line;
      void this.openSynthesis(reply, prepared);
      return;
    }
    const synthesis = this.openSynthesis(reply);
    void synthesis.then((opened) => {
      if (!opened || this.reply !== reply) return;
      reply.spoken = line;
      opened.push(line);
      opened.end();
    });
  }

  /** A reply, now the one the caller hears; a speculative one is not (speculate(), adopt()). */
  private newReply(fixed: boolean, speculative = false): Reply {
    if (!speculative) this.stopSilenceTimer();
    const reply: Reply = {
      id: ++this.replies,
      abort: new AbortController(),
      synthesis: null,
      spoken: '',
      sentChars: 0,
      heardChars: 0,
      sentMs: 0,
      firstSentAt: null,
      synthesized: false,
      allSent: false,
      stored: false,
      fixed,
      endsCall: false,
      holdsFloor: false,
      fillerChars: 0,
      fillerTimer: null,
      historyAt: null,
      held: [],
      holdTimer: null,
      backChannels: [],
      speculative,
      pendingUser: null,
      eagerStamps: { firstChunk: null, audioArrived: null },
    };
    if (speculative) return reply;
    this.reply = reply;
    this.armReplyTimeout(reply);
    return reply;
  }

  private armReplyTimeout(reply: Reply): void {
    // A model or synthesizer that never produces the reply's first audio (a hung provider) fails the call rather than leave the line silent.
    const timer = setTimeout(() => {
      if (this.reply === reply && reply.firstSentAt === null && !reply.synthesized) this.fail('The voice providers did not answer in time');
    }, this.rules.replyTimeoutMs);
    timer.unref?.();
    reply.abort.signal.addEventListener('abort', () => clearTimeout(timer), { once: true });
  }

  /** The reply's synthesis stream, opened at once so its setup overlaps the model's first words; a failure fails the call. */
  private openSynthesis(reply: Reply, prepared: PreparedSynthesis | null = null): Promise<SynthesisStream | null> {
    const events: SynthesisEvents = {
      audio: (ulaw, textEnd) => this.agentAudio(reply, ulaw, textEnd),
      done: () => {
        if (!this.isLive(reply)) return;
        reply.synthesized = true;
        // Sends what the grace period still holds, then the reply's last mark (a speculative reply's wait for adopt()).
        this.flushHeld(reply);
      },
      lost: (reason) => this.replyFailed(reply, reason),
    };
    return (prepared ? prepared.adopt(events) : this.synthesizer!.open(this.voice, events)).then(
      (opened) => {
        if (!this.isLive(reply) || this.finished) {
          opened.cancel();
          return null;
        }
        reply.synthesis = opened;
        return opened;
      },
      (error: unknown) => {
        this.replyFailed(reply, error instanceof Error ? error.message : String(error));
        return null;
      },
    );
  }

  /** Synthesized audio: to the carrier, after the grace period for a reply's first audio, each chunk followed by a mark naming how much of the text it ends. */
  private agentAudio(reply: Reply, ulaw: Buffer, textEnd: number): void {
    if (!this.isLive(reply) || this.finished || ulaw.length === 0) return;
    if (reply.speculative) {
      // Nothing reaches the caller before the turn's end confirms the reply: held for adopt().
      reply.eagerStamps.audioArrived ??= performance.now();
      reply.held.push({ ulaw, textEnd });
      return;
    }
    this.clock.audioArrived(reply.id);
    const earliest = this.clock.earliestAudio(reply.id);
    if (reply.held.length > 0 || (earliest !== null && performance.now() < earliest)) {
      reply.held.push({ ulaw, textEnd });
      if (!reply.holdTimer && earliest !== null) {
        reply.holdTimer = setTimeout(() => this.flushHeld(reply), Math.max(0, earliest - performance.now()));
      }
      return;
    }
    this.send(reply, ulaw, textEnd);
  }

  private flushHeld(reply: Reply): void {
    if (reply.holdTimer) clearTimeout(reply.holdTimer);
    reply.holdTimer = null;
    if (this.reply !== reply) return;
    const earliest = this.clock.earliestAudio(reply.id);
    if (earliest !== null && performance.now() < earliest && reply.held.length > 0) {
      reply.holdTimer = setTimeout(() => this.flushHeld(reply), Math.max(0, earliest - performance.now()));
      return;
    }
    for (const chunk of reply.held.splice(0)) this.send(reply, chunk.ulaw, chunk.textEnd);
    if (reply.synthesized) this.afterSent(reply);
  }

  private send(reply: Reply, ulaw: Buffer, textEnd: number): void {
    this.spoken = true;
    // Offline, the words travel beside their audio on the in-process line: the simulated caller hears them so (simulated-stream.ts).
    const caption = this.deps.offline ? reply.spoken.slice(reply.sentChars, Math.max(reply.sentChars, Math.min(textEnd, reply.spoken.length))) : undefined;
    this.link.audio(ulaw.toString('base64'), caption);
    if (reply.firstSentAt === null) {
      reply.firstSentAt = Date.now();
      this.clock.sent(reply.id);
    }
    // Only the first message's own audio: one cut before a word of it was sent was never heard (its firstAudioMs stays null).
    if (this.openingSince !== null && reply.id === this.openingReply) {
      this.clock.firstAudio(Date.now() - this.openingSince);
      this.openingSince = null;
    }
    reply.sentMs += ulaw.length / BYTES_PER_MS;
    reply.sentChars = Math.max(reply.sentChars, Math.min(textEnd, reply.spoken.length || textEnd));
    this.link.mark(`r${reply.id}:${reply.sentChars}`);
  }

  /** Every push was synthesized and sent: once the carrier has played it all (the last mark) the reply is heard. */
  private afterSent(reply: Reply): void {
    if (reply.held.length > 0 || !reply.synthesized || reply.allSent) return;
    reply.allSent = true;
    reply.sentChars = reply.spoken.length;
    if (reply.firstSentAt === null) this.replyHeard(reply);
    else this.link.mark(`r${reply.id}:done`);
  }

  /** The carrier played the audio before a mark: the caller heard that much of the reply. */
  private marked(name: string): void {
    if (name === END_CALL_MARK) {
      this.finish();
      return;
    }
    const match = /^r(\d+):(\d+|done)$/.exec(name);
    const reply = this.reply;
    if (!match || !reply || Number(match[1]) !== reply.id) return;
    if (match[2] === 'done') {
      reply.heardChars = reply.spoken.length;
      this.replyHeard(reply);
    } else reply.heardChars = Math.max(reply.heardChars, Number(match[2]));
  }

  /** The whole reply was heard: stored, then the call listens (or ends, after a goodbye). */
  private replyHeard(reply: Reply): void {
    if (this.reply !== reply) return;
    this.storeReply(reply, reply.spoken);
    this.reply = null;
    this.pressDigits();
    if (reply.endsCall) {
      this.endCall();
      return;
    }
    if (this.turnEndWaiting !== undefined) {
      this.endTurn(this.turnEndWaiting ?? undefined);
      return;
    }
    this.startSilenceTimer();
  }

  /** The caller spoke over the agent: the carrier's audio is dropped, the model and the synthesis stopped, the words kept as far as they were played. */
  private bargeIn(): void {
    const reply = this.reply;
    if (!reply) return;
    this.reply = null;
    reply.abort.abort();
    reply.synthesis?.cancel();
    if (reply.holdTimer) clearTimeout(reply.holdTimer);
    if (reply.firstSentAt !== null) {
      this.link.clear();
      this.clock.bargeIn();
    }
    this.storeReply(reply, heardText(reply.spoken, reply.heardChars));
    this.pressDigits();
    if (reply.endsCall) this.endCall();
  }

  /** The keys the model pressed in its reply (send_digits), as touch tones after it, and their line in the transcript. */
  private pressDigits(): void {
    const digits = this.digitsToPress;
    this.digitsToPress = '';
    if (!digits || this.finished) return;
    pressKeys(this.link, digits);
    this.store(MessageRole.assistant, agentPressedLine(digits), this.modelLabel);
  }

  private storeReply(reply: Reply, words: string): void {
    if (reply.stored) return;
    reply.stored = true;
    // The filler is the gateway's, not the model's words: what is stored and remembered starts after it.
    const said = (reply.fillerChars > 0 ? words.slice(Math.min(words.length, reply.fillerChars)) : words).trim();
    if (said) {
      // The model remembers what the caller heard of its reply, not what it wrote.
      if (reply.historyAt !== null && this.history.length >= reply.historyAt) {
        this.history.length = reply.historyAt;
        this.history.push({ role: 'assistant', content: said });
      }
      this.store(MessageRole.assistant, redactPolicy(said, this.prompt?.guardPolicy ?? null, userLines(this.history)), reply.fixed ? null : this.modelLabel);
    }
    for (const line of reply.backChannels.splice(0)) this.store(MessageRole.user, line, null, true);
  }

  // Silence, tools, the end.

  /** The agent finished speaking: the caller's silence is counted from here, in their audio. */
  private startSilenceTimer(): void {
    this.silenceFrom = this.finished || this.endTimer ? null : this.audioMs;
  }

  private stopSilenceTimer(): void {
    this.silenceFrom = null;
  }

  /** The rules counted in the caller's audio, checked on each frame: the turn limit, and silence. */
  private onAudioClock(): void {
    if (this.turnStartedAt !== null && !this.cutting && this.audioMs - this.turnStartedAt >= this.rules.maxTurnMs) this.longTurn();
    if (this.silenceFrom !== null && this.audioMs - this.silenceFrom >= this.rules.silenceMs) {
      this.silenceFrom = null;
      if (this.reply || this.turnStartedAt !== null || this.keypad.held().length > 0) return;
      this.silencePrompts += 1;
      if (this.silencePrompts === 1) this.say(WORDS.reprompt, false);
      else this.say(WORDS.noInputGoodbye, true);
    }
  }

  /**
   * The agent's tools on the phone, run as the model calls them: the built-in ones (call-tools.ts:
   * hang up or opt out after this reply, or record a resolution), then its own HTTP and MCP tools
   * (their records go through the call's queue of writes). While one runs past fillerAfterMs before
   * the reply's first words, the caller hears the filler (fillIfSlow).
   */
  private tools(): StreamTool[] {
    return [...this.builtInTools(), ...this.userTools];
  }

  private builtInTools(): StreamTool[] {
    return callTools(this.agent!).map((tool) => ({
      ...tool,
      execute: async (args: Record<string, unknown>) => {
        if (tool.name === TRANSFER_CALL_TOOL) return this.transfer(args);
        const effect = callToolEffect(this.agent, tool.name, args, this.prompt?.guardPolicy ?? null, userLines(this.history));
        if (effect.endsCall && this.reply) this.reply.endsCall = true;
        if (effect.digits && this.digitsToPress.length < 200) this.digitsToPress += effect.digits;
        if (effect.resolution) {
          const resolution = effect.resolution;
          this.queue(() => this.deps.conversations.resolve(this.conversationId!, resolution));
        }
        if (effect.optOut) {
          const optOut = this.deps.doNotCall;
          this.queue(async () => {
            await this.deps.withContext(() => optOut.optOut(this.call.organizationId, { callId: this.call.id }));
          });
        }
        return effect.output;
      },
    }));
  }

  /**
   * transfer_call, while the model's reply waits for its answer: once the carrier took it, what the
   * caller heard of the reply and the transfer are stored and the agent leaves (the reply stops, the
   * stream closes: the carrier plays the line and dials); else the model is told why and speaks on.
   */
  private async transfer(args: Record<string, unknown>): Promise<Record<string, unknown>> {
    const port = this.deps.transfers;
    if (!port) return { transferred: false, error: 'transfer is not available on this call' };
    // The caller's turn that asked for it is stored first: a warm transfer's briefing is written from the transcript.
    await this.writes;
    const outcome = await port.transfer(this.call, this.agent!, args).catch((error: unknown) => {
      this.deps.logger.warn({ callId: this.call.id, error: error instanceof Error ? error.message : String(error) }, 'a transfer failed');
      return { output: { transferred: false, error: 'the transfer could not be made; the call goes on with you' }, transferred: null };
    });
    // The conversation stays open: the caller may come back (a dial that reached no one); the call's end closes it.
    if (outcome.transferred) this.finish(transferredLine(outcome.transferred.name, outcome.transferred.briefing), true);
    return outcome.output;
  }

  /** The goodbye was heard (or cut): the carrier is asked to confirm it played, then the stream closes. */
  private endCall(): void {
    if (this.endTimer || this.finished) return;
    this.link.mark(END_CALL_MARK);
    this.endTimer = setTimeout(() => this.finish(), END_CALL_GRACE_MS);
  }

  private async retrieve(query: string): Promise<Passage[]> {
    const config = this.agent?.knowledgeBaseConfig;
    if (!config || !query.trim()) return [];
    try {
      return await this.deps.withContext(() =>
        this.deps.knowledge.retrieve(this.call.organizationId, config.knowledgeBaseId, query, {
          topK: config.topK,
          similarityThreshold: config.similarityThreshold,
        }),
      );
    } catch (error) {
      this.deps.logger.warn(
        { callId: this.call.id, error: error instanceof Error ? error.message : String(error) },
        'knowledge retrieval failed during a call; the turn is answered without passages',
      );
      return [];
    }
  }

  private store(role: MessageRole, content: string, model: string | null = null, backChannel = false): void {
    this.spoken = true;
    const conversation = this.conversationId ?? this.conversationOpening;
    if (!conversation) return;
    this.queue(async () => this.deps.conversations.add(await conversation, this.call.organizationId, role, content.slice(0, 10_000), model, backChannel));
  }

  private queue(work: () => Promise<void>): void {
    this.writes = this.writes.then(work).catch((error: unknown) => {
      this.deps.logger.error({ callId: this.call.id, error: error instanceof Error ? error.message : String(error) }, 'a call turn could not be stored');
    });
  }

  private stopEverything(): void {
    this.cancelSpeculation();
    this.finished = true;
    for (const timer of [this.endTimer, this.turnTimer, this.reply?.holdTimer ?? null]) if (timer) clearTimeout(timer);
    const reply = this.reply;
    if (reply) {
      this.reply = null;
      reply.abort.abort();
      reply.synthesis?.cancel();
      this.storeReply(reply, heardText(reply.spoken, reply.heardChars));
    }
    const keys = this.keypad.end().join(' ');
    const said = callerTurnText(this.turnWords + (this.interimWords ? ` ${this.interimWords}` : ''), keys);
    if (said && this.conversationId) this.store(MessageRole.user, said);
    this.recognizer?.close();
    const latency = this.clock.summary(this.providerLabel);
    if (latency) this.queue(() => this.deps.conversations.recordTurnLatency(this.call.id, latency));
  }

  /** The call is over (hang-up, end_call, a transfer: its `lastLine`, the conversation kept open): what was said is kept, the conversation ended. */
  private finish(lastLine?: string, keepConversation = false): void {
    if (this.finished) return;
    this.stopEverything();
    if (lastLine) this.store(MessageRole.assistant, lastLine, this.modelLabel);
    if (this.conversationId && !keepConversation) {
      const conversationId = this.conversationId;
      const end = this.deps.endConversation;
      this.queue(() => (end ? end(this.call.organizationId, conversationId, false) : this.deps.conversations.close(conversationId, ConversationStatus.ended)));
    }
    if (this.link.open) this.link.close(1000, 'call ended');
  }

  /**
   * A provider is gone or never came (a refused key, a dropped socket, a hung synthesizer, the model's
   * error): the call ends `failed` with the provider's words, what was said is kept, and closing the
   * stream makes the carrier ask what next, which is the apology (stream-ended); the contact is
   * retried per the program.
   */
  private fail(reason: string): void {
    if (this.finished) return;
    this.failed = true;
    this.deps.logger.warn({ callId: this.call.id, reason }, 'streaming voice call failed');
    this.stopEverything();
    const conversationId = this.conversationId;
    this.queue(async () => {
      if (conversationId) await this.deps.conversations.close(conversationId, ConversationStatus.failed);
      await this.deps.tracker.failLive(this.call.id, reason.slice(0, 500), { spoken: this.spoken });
    });
    // Closed once the failure is written (the carrier's stream-ended and its completed must find it), as the speech-to-speech bridge does.
    void closeAfter(this.writes, () => {
      if (this.link.open) this.link.close(1011, 'voice provider unavailable');
    });
  }

  /** Resolves once every turn was stored (tests and shutdown). */
  settled(): Promise<void> {
    return this.writes;
  }
}
