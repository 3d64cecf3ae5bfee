// Types only here: the SDK (and google-auth-library under it) loads when a call first needs it.
import { performance } from 'node:perf_hooks';
import type {
  ActivityHandling,
  Behavior,
  FunctionResponseScheduling,
  LiveConnectConfig,
  LiveServerMessage,
  Modality,
  RealtimeInputConfig,
  Session,
  ThinkingLevel,
} from '@google/genai';
import { InterruptionMode } from '../../agents/agent.enums.js';
import type { VoiceConfig } from '../../agents/agent.types.js';
import { interruptionSettings } from '../interruptions.js';
import type { Agent } from '../../agents/agent.entity.js';
import { AgentAudio, CallerAudio } from './audio.js';
import { callTools, type CallTool } from './call-tools.js';
import { firstLineInstructions, type SpeechEvents, type SpeechProvider, type SpeechSession } from './speech-provider.js';

import { DEFAULT_GEMINI_LIVE_MODEL, LIVE_MODELS, unlistedModel } from '../../models/voice-models.js';
import { EndOfSpeechDetector } from './end-of-speech.js';

export { DEFAULT_GEMINI_LIVE_MODEL };
/** Gemini Live hears 16-bit PCM at 16 kHz and speaks it at 24 kHz. */
const INPUT_HZ = 16_000;
const OUTPUT_HZ = 24_000;
const INPUT_MIME = `audio/pcm;rate=${INPUT_HZ}`;
const CONNECT_TIMEOUT_MS = 10_000;
/** The SDK's own default for the Gemini API. */
const DEFAULT_GEMINI_BASE_URL = 'https://generativelanguage.googleapis.com/';
/** Caller audio kept while a session resumes (Twilio's 20 ms frames: 10 s). */
const MAX_QUEUED_FRAMES = 500;
/**
 * Google's session-management page: "The lifetime of a connection is limited to around 10 minutes";
 * a `goAway` comes before the end, but a connection closed without one past this age was at its
 * limit, not lost: it is resumed with the last handle like a goAway.
 */
export const CONNECTION_LIFETIME_MS = 9 * 60_000;
/**
 * The caller's transcription comes "independently of the other server messages" (Live API reference):
 * a reply whose caller words are not yet finished waits this long for them before it is stored.
 */
export const CALLER_WORDS_GRACE_MS = 1500;
/**
 * A completed reply whose own words (`outputTranscription`, not said `finished`) may still come after
 * its turnComplete waits this long for them once no caller words are awaited: short, since a tool's
 * follow-up and the goodbye's hang-up wait for the reply to be done.
 */
export const REPLY_WORDS_GRACE_MS = 300;
/** Google's Live guide: gemini-3.8-live-extended-thinking takes thinkingLevel low, medium or high (not minimal), and calls tools asynchronously only. */
const EXTENDED_THINKING = /-extended-thinking$/;
/** The background reasoning asked of an extended-thinking Live model: the middle of the three levels it takes. */
export const EXTENDED_THINKING_LEVEL = 'MEDIUM';
/** The Live models that take `contextUpdate` (new instructions mid-session): Gemini 3.8 Live's (Google's session page); the others are sent the passages as context. */
const TAKES_CONTEXT_UPDATE = /^gemini-3\.8-live/;
/**
 * The other 3.x Live models take clientContent only to seed the history before the first model turn
 * (a later one closes the session, 1007), and realtime text asks for a reply: new instructions reach
 * them as a session resumed with them in its setup (as LiveKit's reconnect on update does).
 */
const SEEDS_HISTORY_ONLY = /^gemini-3\./;

/**
 * The Live model an agent talks with: its own `google/<model>` (checked against Google's Live models
 * when saved and when the session opens), else, for a model of another provider, DEFAULT_GEMINI_LIVE_MODEL.
 */
export function geminiLiveModel(model: string): string {
  const slash = model.indexOf('/');
  return slash > 0 && model.slice(0, slash) === 'google' && slash < model.length - 1 ? model.slice(slash + 1) : DEFAULT_GEMINI_LIVE_MODEL;
}

/**
 * Gemini's voices are capitalised names (Kore, Puck, Charon...); an OpenAI voice (alloy, marin) left
 * on an agent that moved to Google is not sent, so the call keeps Gemini's default voice.
 */
export function geminiVoice(voiceId: string | null | undefined): string | undefined {
  return voiceId && /^[A-Z][a-z]+$/.test(voiceId) ? voiceId : undefined;
}

/**
 * The caller's activity as the agent's settings say: mode never is Google's NO_INTERRUPTION (the
 * reply is not cut); the others leave Google's default, START_OF_ACTIVITY_INTERRUPTS (the Live API
 * has no client cancel to decide on the caller's words). A turn ended by `silenceMs` of silence is
 * its automatic activity detection's silenceDurationMs; it has no semantic end of turn (its own
 * detection stays).
 */
export function realtimeInput(voice: Pick<VoiceConfig, 'interruptions' | 'language' | 'turnDetection'> | null | undefined): RealtimeInputConfig | null {
  const never = interruptionSettings(voice).mode === InterruptionMode.never;
  const silenceMs = voice?.turnDetection?.silenceMs ?? null;
  if (!never && silenceMs === null) return null;
  return {
    ...(never ? { activityHandling: 'NO_INTERRUPTION' as ActivityHandling } : {}),
    ...(silenceMs !== null ? { automaticActivityDetection: { silenceDurationMs: silenceMs } } : {}),
  };
}

/** The session's setup: audio replies with both sides transcribed, the agent's instructions, tools and voice. */
export function liveConfig(agent: Agent, instructions: string, resumeHandle?: string, own: CallTool[] = []): LiveConnectConfig {
  const voice = geminiVoice(agent.voiceConfig?.voiceId);
  const thinking = EXTENDED_THINKING.test(geminiLiveModel(agent.modelConfig.model));
  const input = realtimeInput(agent.voiceConfig);
  return {
    ...(input ? { realtimeInputConfig: input } : {}),
    responseModalities: ['AUDIO' as Modality],
    systemInstruction: instructions,
    // An extended-thinking model reasons in the background at the level asked; the others take none (3.8 Live refuses one).
    ...(thinking ? { thinkingConfig: { thinkingLevel: EXTENDED_THINKING_LEVEL as ThinkingLevel } } : {}),
    tools: [
      {
        // BLOCKING: the model waits for the answer (given at once), as OpenAI's tools do; 3.8 Live defaults to NON_BLOCKING.
        // An extended-thinking model calls tools asynchronously only: NON_BLOCKING, answered to be spoken when idle.
        functionDeclarations: [...callTools(agent), ...own].map((tool) => ({
          name: tool.name,
          description: tool.description,
          parametersJsonSchema: tool.parameters,
          behavior: (thinking ? 'NON_BLOCKING' : 'BLOCKING') as Behavior,
        })),
      },
    ],
    inputAudioTranscription: {},
    outputAudioTranscription: {},
    ...(voice ? { speechConfig: { voiceConfig: { prebuiltVoiceConfig: { voiceName: voice } } } } : {}),
    // Resumable (goAway, the connection's time limit) and compressed past the context window, so a long call does not drop.
    sessionResumption: resumeHandle ? { handle: resumeHandle } : {},
    contextWindowCompression: { slidingWindow: {} },
  };
}

interface Opened {
  session: Session;
  closed: (listener: (code: number, reason: string) => void) => void;
  /** When the connection was set up (Date.now()), for its documented lifetime. */
  openedAt: number;
}

/**
 * One call's Gemini Live session through the official SDK (`ai.live.connect`). Caller audio is
 * transcoded μ-law 8 kHz → PCM16 16 kHz, the model's PCM16 24 kHz → μ-law 8 kHz. Each model turn is
 * one reply (one item). The caller's transcription comes independently of the model's turn (before,
 * among or after its audio and words), so a caller turn stays open until its words are `finished`,
 * the caller speaks again, the model calls a tool or starts its next turn, or CALLER_WORDS_GRACE_MS
 * after the reply completed; the reply is stored only after the caller's words (`replyDone` waits).
 * On `goAway`, or a close past the connection's documented lifetime, the session is reopened with
 * the last resumption handle and the caller's audio is held meanwhile.
 */
class GeminiSpeechSession implements SpeechSession {
  private current: Opened;
  private readonly toGemini = new CallerAudio(INPUT_HZ);
  private readonly fromGemini = new AgentAudio(OUTPUT_HZ);
  private handle: string | null = null;
  private resuming = false;
  /** New instructions wait for a resumption handle (SEEDS_HISTORY_ONLY models). */
  private instructionsWaiting = false;
  private held: string[] = [];
  /** The caller's keys' lines told while a session resumes (a few: at most one a second). */
  private heldKeys: string[] = [];
  private turn = 0;
  private replying = false;
  /** After `interrupted`, the audio the model still sends of that turn was never heard: dropped until the turn completes (its late words are kept, for the cut). */
  private dropping = false;
  /** The caller's words of the turn being heard or answered; null when none is open (the next fragment starts one). */
  private callerWords: string | null = null;
  /** A completed reply waiting for the caller's words before it is told done (and stored). */
  private pendingDone: { replyId: string; timer: NodeJS.Timeout } | null = null;
  /** The current (or last) reply answers a caller turn whose words may still come: it is told done only after them. */
  private answering = false;
  /** The current reply's audio came, and its output transcription said it was `finished`: a reply whose words may still lag past its turnComplete waits for them. */
  private replyAudio = false;
  private replyWordsFinished = false;
  /** Caller fragments since the current reply began; the reply answers speech none of whose words had come when it began (they may come after it, even after it was cut). */
  private fragmentsSinceReply = 0;
  private answeredUnheard = false;
  /** The open caller words are those of the turn the reply answers, come after it began: their fragments stay one turn until finished. */
  private lateWords = false;
  /** The caller's speech onsets (our energy detector), and their count when the current reply began. */
  private onsets = 0;
  private onsetsAtReply = 0;
  private readonly onsetDetector = new EndOfSpeechDetector(
    () => undefined,
    () => this.callerSpoke(),
  );
  private lost: ((reason: string) => void) | null = null;
  private closedByUs = false;

  constructor(
    private readonly provider: GeminiSpeechProvider,
    private readonly agent: Agent,
    private instructions: string,
    private readonly events: SpeechEvents,
    first: Opened,
    private readonly tools: CallTool[] = [],
  ) {
    this.current = first;
    this.watch(first);
  }

  private get model(): string {
    return geminiLiveModel(this.agent.modelConfig.model);
  }

  /** Every message of the session the SDK hands over, in order (the SDK's callbacks must not throw: they run unawaited). */
  receive(message: LiveServerMessage): void {
    try {
      this.dispatch(message, performance.now());
    } catch (error) {
      this.events.providerError('bridge', error instanceof Error ? error.message : String(error));
    }
  }

  /** `receivedAt`: the reply's first audio ends the provider's share of a turn there, before our transcoding. */
  private dispatch(message: LiveServerMessage, receivedAt: number): void {
    const update = message.sessionResumptionUpdate;
    if (update?.resumable && update.newHandle) {
      this.handle = update.newHandle;
      if (this.instructionsWaiting && !message.goAway) this.resumeWithInstructions();
    }
    if (message.goAway) void this.resume();
    const content = message.serverContent;
    if (content) {
      if (content.inputTranscription) this.callerFragment(content.inputTranscription.text ?? '', content.inputTranscription.finished === true);
      if (content.interrupted && this.replying) {
        this.dropping = true;
        // The caller spoke over the reply: the words before it were their whole turn (unless none of
        // them has come yet: the next are theirs).
        if (!this.answeredUnheard) this.finishCaller();
        this.events.interrupted();
      }
      const replyId = `turn-${this.turn}`;
      if (!this.dropping) {
        for (const part of content.modelTurn?.parts ?? []) {
          if (!part.inlineData?.data) continue;
          this.startReply();
          this.replyAudio = true;
          const ulaw = this.fromGemini.convert(Buffer.from(part.inlineData.data, 'base64'));
          if (ulaw.length > 0) this.events.agentAudio(replyId, replyId, ulaw.toString('base64'), receivedAt);
        }
      }
      const words = content.outputTranscription;
      if (words?.text) {
        if (!this.replying && this.pendingDone) {
          // The output transcription is "independent to the model turn": words lagging past turnComplete are the completed reply's.
          this.events.agentWords(this.pendingDone.replyId, this.pendingDone.replyId, words.text);
        } else {
          // Words of audio already generated (the transcription lags it), heard or cut by the bridge.
          if (!this.dropping) this.startReply();
          this.events.agentWords(replyId, replyId, words.text);
        }
      }
      if (words?.finished) this.replyWordsFinished = true;
      if (content.turnComplete) {
        this.replying = false;
        this.dropping = false;
        this.turn++;
        // The caller spoke again since the reply began: the words it answered are all in.
        if (this.answering && this.onsets > this.onsetsAtReply && !this.lateWords && !this.answeredUnheard) this.finishCaller();
        // Always: a turn that only called a tool (end_call) is over too; once the words it answered are
        // told, and the words of its audio (their transcription not said finished) have had time to come.
        const wordsMayLag = this.replyAudio && !this.replyWordsFinished;
        if (this.answering || wordsMayLag) {
          const graceMs = this.answering ? this.provider.callerWordsGraceMs : REPLY_WORDS_GRACE_MS;
          this.pendingDone = { replyId, timer: setTimeout(() => this.finishCaller(), graceMs).unref() };
        } else this.events.replyDone(replyId);
      } else if (words?.finished && !this.replying && !this.answering && this.pendingDone) {
        // The completed reply's words are all in, and no caller words wait: it is done.
        this.finishCaller();
      }
    }
    for (const call of message.toolCall?.functionCalls ?? []) {
      this.finishCaller();
      this.events.toolCall(call.name ?? '', call.id ?? '', call.args ?? {});
    }
  }

  /** One fragment of the caller's words: of the open turn, or the first of a new one. */
  private callerFragment(text: string, finished: boolean): void {
    const spokeSinceReply = this.onsets > this.onsetsAtReply;
    this.fragmentsSinceReply++;
    // Speech begun after the reply started is the next turn's: the open one is over.
    if (this.callerWords !== null && spokeSinceReply && this.answering && !this.lateWords) this.finishCaller();
    if (this.callerWords === null && text.trim()) {
      // A new turn's words while the last reply waits only for its own words: that reply is done first (stored before them).
      if (!this.answering && this.pendingDone) this.finishCaller();
      this.callerWords = '';
      // The first words of the turn the reply answers, come after it began (after the caller spoke over it, too, when none had come): no new turn.
      const late = this.answering && (!spokeSinceReply || this.answeredUnheard);
      this.lateWords = late;
      this.answeredUnheard = false;
      // A new turn's first words while Twilio may still play a reply Gemini already finished generating
      // (Gemini sends `interrupted` only while it generates): that audio is cut too.
      if (!late && !this.replying) this.events.callerStarted();
    }
    if (this.callerWords !== null) this.callerWords += text;
    // The caller's words are all in; the reply they wait for may still wait for its own.
    if (finished) this.finishCaller('when-its-words-are-in');
  }

  /** Our detector heard the caller begin to speak (before the provider transcribes it). */
  private callerSpoke(): void {
    this.onsets++;
    // A reply waiting for the caller's last words: the caller speaking again ends that turn.
    if (this.pendingDone) this.finishCaller();
  }

  /** The model began to answer: the caller's words so far stay open (more may come), stored before the reply. */
  private startReply(): void {
    if (this.replying) return;
    // A completed reply still waiting for its caller words: the model's next turn closes that exchange.
    if (this.pendingDone) this.finishCaller();
    this.replying = true;
    this.replyAudio = false;
    this.replyWordsFinished = false;
    // It answers the caller's open words, or speech whose words have not come yet.
    this.answering = this.callerWords !== null || this.onsets > this.onsetsAtReply;
    this.answeredUnheard = this.answering && this.callerWords === null && this.fragmentsSinceReply === 0;
    this.fragmentsSinceReply = 0;
    this.onsetsAtReply = this.onsets;
    this.events.replyStarted(`turn-${this.turn}`);
  }

  /**
   * The open caller turn is over: stored, then the reply that waited for it told done; with
   * `when-its-words-are-in`, a completed reply whose words may still lag waits on for them (or its timer).
   */
  private finishCaller(release: 'now' | 'when-its-words-are-in' = 'now'): void {
    const words = (this.callerWords ?? '').replace(/\s+/g, ' ').trim();
    this.callerWords = null;
    this.answering = false;
    this.answeredUnheard = false;
    this.lateWords = false;
    if (words) this.events.callerTurn(words);
    const pending = this.pendingDone;
    const wordsMayLag = !this.replying && this.replyAudio && !this.replyWordsFinished;
    if (pending && (release === 'now' || !wordsMayLag)) {
      this.pendingDone = null;
      clearTimeout(pending.timer);
      this.events.replyDone(pending.replyId);
    } else if (pending) {
      // The caller's words are in: the reply waits only for its own now, as briefly as any.
      clearTimeout(pending.timer);
      pending.timer = setTimeout(() => this.finishCaller(), REPLY_WORDS_GRACE_MS).unref();
    }
  }

  /** What the session still holds is told now, in order (the call is ending). */
  flush(): void {
    this.finishCaller();
  }

  /**
   * The server will close soon (goAway), or closed at the connection's limit: a new session resumes
   * this one (same handle), the old one closed by us once the new is ready.
   */
  private async resume(atLimit = false): Promise<void> {
    if (this.resuming || this.closedByUs) return;
    if (!this.handle) {
      if (atLimit) this.tellLost('The Gemini Live session reached its connection time limit (about 10 minutes) before Gemini gave a resumption handle');
      else this.events.providerError('goAway', 'the session will end and no resumption handle was given yet');
      return;
    }
    this.resuming = true;
    const old = this.current;
    try {
      const next = await this.provider.connect(this.agent, this.instructions, (message) => this.receive(message), this.handle, this.tools);
      if (this.closedByUs) {
        next.session.close();
        return;
      }
      this.current = next;
      this.watch(next);
      for (const audio of this.held.splice(0)) this.send(audio);
      for (const line of this.heldKeys.splice(0)) next.session.sendRealtimeInput({ text: line });
      old.session.close();
    } catch (error) {
      const why = atLimit ? 'reached its connection time limit and could not be resumed' : 'could not be resumed';
      this.tellLost(`The Gemini Live session ${why} (${error instanceof Error ? error.message : String(error)})`);
    } finally {
      this.resuming = false;
    }
  }

  private watch(opened: Opened): void {
    opened.closed((code, reason) => {
      // A session we replaced (after goAway) or closed is not a loss.
      if (this.current !== opened || this.resuming || this.closedByUs) return;
      // Closed without goAway at the connection's documented lifetime: its limit, resumed.
      if (Date.now() - opened.openedAt >= this.provider.connectionLifetimeMs) {
        void this.resume(true);
        return;
      }
      this.tellLost(`The realtime provider closed the session (code ${code}${reason ? `: ${reason.slice(0, 200)}` : ''})`);
    });
  }

  private tellLost(reason: string): void {
    if (this.closedByUs || !this.lost) return;
    const listener = this.lost;
    this.lost = null;
    listener(reason);
  }

  private send(ulaw: string): void {
    const pcm = this.toGemini.convert(Buffer.from(ulaw, 'base64'));
    this.current.session.sendRealtimeInput({ audio: { data: pcm.toString('base64'), mimeType: INPUT_MIME } });
  }

  appendCallerAudio(ulaw: string): void {
    this.onsetDetector.push(Buffer.from(ulaw, 'base64'));
    if (this.resuming) {
      if (this.held.length < MAX_QUEUED_FRAMES) this.held.push(ulaw);
      return;
    }
    this.send(ulaw);
  }

  /** Gemini stops a reply by itself when the caller speaks, and has no cancel: what it still sends is not played (the bridge suppresses it). */
  cancelReply(): void {}

  /** Gemini keeps no item to truncate: the bridge cuts the stored words where the caller stopped hearing. */
  truncate(): void {}

  answerTool(callId: string, name: string, output: Record<string, unknown>): void {
    // An asynchronous (NON_BLOCKING) call's answer is spoken once the model is idle, not over what it is saying.
    const scheduling = EXTENDED_THINKING.test(this.model) ? { scheduling: 'WHEN_IDLE' as FunctionResponseScheduling } : {};
    this.current.session.sendToolResponse({ functionResponses: [{ id: callId, name, response: output, ...scheduling }] });
  }

  /**
   * Realtime text input, not clientContent: Gemini 3.x Live models take clientContent only to seed
   * the history before the first model turn, and close the session (1007) on it later.
   */
  sayFirst(line: string): void {
    this.current.session.sendRealtimeInput({ text: firstLineInstructions(line) });
  }

  /** The caller's keys as realtime text (clientContent is refused mid-session by the 3.x models): Gemini answers it by itself. */
  callerKeys(line: string): void {
    if (this.resuming) this.heldKeys.push(line);
    else this.current.session.sendRealtimeInput({ text: line });
  }

  /** After a tool's answer Gemini goes on with its turn by itself. */
  replyAfterTools(): void {}

  /**
   * New instructions (fresh passages): Gemini 3.8 Live's take them as `contextUpdate` (they replace the
   * setup's system instruction); the other 3.x Live models, in a session resumed with them
   * (SEEDS_HISTORY_ONLY; once a resumption handle is known); older models, as a `clientContent` turn
   * that does not ask for a reply (`turnComplete: false`). A resumed session is set up with them.
   */
  updateInstructions(instructions: string): void {
    this.instructions = instructions;
    if (this.resuming) return;
    if (TAKES_CONTEXT_UPDATE.test(this.model)) {
      this.current.session.sendContextUpdate({ systemInstruction: instructions });
      return;
    }
    if (SEEDS_HISTORY_ONLY.test(this.model)) {
      this.instructionsWaiting = true;
      if (this.handle) this.resumeWithInstructions();
      return;
    }
    this.current.session.sendClientContent({
      turns: [{ role: 'user', parts: [{ text: `Updated instructions for the rest of this call (context, not the caller speaking):\n${instructions}` }] }],
      turnComplete: false,
    });
  }

  private resumeWithInstructions(): void {
    this.instructionsWaiting = false;
    void this.resume();
  }

  onLost(listener: (reason: string) => void): void {
    this.lost = listener;
  }

  close(): void {
    this.closedByUs = true;
    if (this.pendingDone) clearTimeout(this.pendingDone.timer);
    this.pendingDone = null;
    this.current.session.close();
  }
}

/** Gemini Live as the bridge's speech provider: GEMINI_API_KEY, and GEMINI_BASE_URL for another endpoint. */
export class GeminiSpeechProvider implements SpeechProvider {
  readonly transcriptCutAtHeard = true;
  /** Live sends no end-of-speech event: the bridge's own detector times the turns. */
  readonly reportsEndOfSpeech = false;

  readonly connectionLifetimeMs: number;
  readonly callerWordsGraceMs: number;

  /** `connectionLifetimeMs` and `callerWordsGraceMs`: Google's limit and our wait, shorter in tests. */
  constructor(
    private readonly options: { apiKey: string | undefined; baseUrl?: string; timeoutMs?: number; connectionLifetimeMs?: number; callerWordsGraceMs?: number },
  ) {
    this.connectionLifetimeMs = options.connectionLifetimeMs ?? CONNECTION_LIFETIME_MS;
    this.callerWordsGraceMs = options.callerWordsGraceMs ?? CALLER_WORDS_GRACE_MS;
  }

  modelLabel(agent: Agent): string {
    return `google/${geminiLiveModel(agent.modelConfig.model)}`;
  }

  async open(agent: Agent, instructions: string, events: SpeechEvents, tools: CallTool[] = []): Promise<SpeechSession> {
    if (!this.options.apiKey) throw new Error('GEMINI_API_KEY is not set: the speech-to-speech provider cannot be reached');
    const unlisted = unlistedModel(LIVE_MODELS, geminiLiveModel(agent.modelConfig.model));
    if (unlisted) throw new Error(`The agent's model ${unlisted}`);
    let session: GeminiSpeechSession | null = null;
    const early: LiveServerMessage[] = [];
    const opened = await this.connect(agent, instructions, (message) => (session ? session.receive(message) : early.push(message)), undefined, tools);
    session = new GeminiSpeechSession(this, agent, instructions, events, opened, tools);
    for (const message of early) session.receive(message);
    return session;
  }

  /**
   * Opens a Live session (resuming `handle` when given) and waits for its `setupComplete`; a
   * session the service closes before that rejects with its close code and words.
   */
  async connect(agent: Agent, instructions: string, onMessage: (message: LiveServerMessage) => void, handle?: string, tools: CallTool[] = []): Promise<Opened> {
    // The SDK builds the socket on baseUrl: `{baseUrl as ws/wss}/ws/google.ai.generativelanguage.v1beta.GenerativeService.BidiGenerateContent?key=…`.
    const { GoogleGenAI } = await import('@google/genai');
    // Everything explicit, so the SDK's own environment variables (GOOGLE_GENAI_USE_VERTEXAI,
    // GOOGLE_GEMINI_BASE_URL, GOOGLE_GENAI_API_VERSION, GOOGLE_API_KEY) cannot change where the call goes.
    const ai = new GoogleGenAI({
      vertexai: false,
      apiKey: this.options.apiKey,
      apiVersion: 'v1beta',
      httpOptions: { baseUrl: this.options.baseUrl ?? DEFAULT_GEMINI_BASE_URL },
    });
    let closeListener: ((code: number, reason: string) => void) | null = null;
    let closedEarly: { code: number; reason: string } | null = null;
    let failure: string | null = null;
    const connecting = ai.live.connect({
      model: geminiLiveModel(agent.modelConfig.model),
      config: liveConfig(agent, instructions, handle, tools),
      callbacks: {
        onmessage: onMessage,
        onerror: (event: { message?: string }) => {
          failure ??= event?.message || 'connection error';
        },
        onclose: (event: { code?: number; reason?: string }) => {
          const closed = { code: event?.code ?? 1006, reason: String(event?.reason ?? '') };
          if (closeListener) closeListener(closed.code, closed.reason);
          else closedEarly = closed;
        },
      },
    });
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_resolve, reject) => {
      timer = setTimeout(() => reject(new Error('timeout')), this.options.timeoutMs ?? CONNECT_TIMEOUT_MS);
    });
    try {
      const session = await Promise.race([connecting, timeout]);
      return {
        session,
        openedAt: Date.now(),
        closed: (listener) => {
          closeListener = listener;
          if (closedEarly) listener(closedEarly.code, closedEarly.reason);
        },
      };
    } catch (error) {
      void connecting.then((session) => session.close()).catch(() => undefined);
      const early = closedEarly as { code: number; reason: string } | null;
      if (early && early.code !== 1006)
        throw new Error(`The realtime provider refused the session (code ${early.code}${early.reason ? `: ${early.reason.slice(0, 200)}` : ''})`, {
          cause: error,
        });
      if (error instanceof Error && error.message === 'timeout') throw new Error('The realtime provider did not open the session in time', { cause: error });
      throw new Error(`The realtime provider could not be reached (${failure ?? (error instanceof Error ? error.message : String(error))})`, { cause: error });
    } finally {
      clearTimeout(timer);
    }
  }
}
