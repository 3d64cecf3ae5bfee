// Types only here: the SDK (and google-auth-library under it) loads when a call first needs it.
import { performance } from 'node:perf_hooks';
import type { Behavior, LiveConnectConfig, LiveServerMessage, Modality, Session } from '@google/genai';
import type { Agent } from '../../agents/agent.entity.js';
import { AgentAudio, CallerAudio } from './audio.js';
import { callTools } from './call-tools.js';
import type { SpeechEvents, SpeechProvider, SpeechSession } from './speech-provider.js';

/**
 * Google's current native-audio Live model, the default of Google's "Gemini 3.8 Live" model page
 * (ai.google.dev/gemini-api/docs/models/gemini-3.8-live, looked up 2026-11-26: "the default option
 * for most low-latency voice agent experiences", stable, updated September 2026).
 */
export const DEFAULT_GEMINI_LIVE_MODEL = 'gemini-3.8-live';
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
 * The Live model an agent talks with: its own `google/<model>` when that names a Live model (a name
 * with `live` or `native-audio` in it), else DEFAULT_GEMINI_LIVE_MODEL.
 */
export function geminiLiveModel(model: string): string {
  const [provider, name] = model.split('/', 2);
  return provider === 'google' && name && /(^|-)live(-|$)|native-audio/i.test(name) ? name : DEFAULT_GEMINI_LIVE_MODEL;
}

/**
 * Gemini's voices are capitalised names (Kore, Puck, Charon...); an OpenAI voice (alloy, marin) left
 * on an agent that moved to Google is not sent, so the call keeps Gemini's default voice.
 */
export function geminiVoice(voiceId: string | null | undefined): string | undefined {
  return voiceId && /^[A-Z][a-z]+$/.test(voiceId) ? voiceId : undefined;
}

/** The session's setup: audio replies with both sides transcribed, the agent's instructions, tools and voice. */
export function liveConfig(agent: Agent, instructions: string, resumeHandle?: string): LiveConnectConfig {
  const voice = geminiVoice(agent.voiceConfig?.voiceId);
  return {
    responseModalities: ['AUDIO' as Modality],
    systemInstruction: instructions,
    tools: [
      {
        // BLOCKING: the model waits for the answer (given at once), as OpenAI's tools do; 3.8 Live defaults to NON_BLOCKING.
        functionDeclarations: callTools(agent).map((tool) => ({ name: tool.name, description: tool.description, parametersJsonSchema: tool.parameters, behavior: 'BLOCKING' as Behavior })),
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
}

/**
 * One call's Gemini Live session through the official SDK (`ai.live.connect`). Caller audio is
 * transcoded μ-law 8 kHz → PCM16 16 kHz, the model's PCM16 24 kHz → μ-law 8 kHz. Each model turn is
 * one reply (one item); the caller's transcription fragments make one caller turn, stored when the
 * model starts to answer. On `goAway` the session is reopened with the last resumption handle and
 * the caller's audio is held meanwhile.
 */
class GeminiSpeechSession implements SpeechSession {
  private current: Opened;
  private readonly toGemini = new CallerAudio(INPUT_HZ);
  private readonly fromGemini = new AgentAudio(OUTPUT_HZ);
  private handle: string | null = null;
  private resuming = false;
  private held: string[] = [];
  private turn = 0;
  private replying = false;
  /** After `interrupted`, what the model still sends of that turn was never heard: dropped until the turn completes. */
  private dropping = false;
  private callerWords = '';
  private lost: ((reason: string) => void) | null = null;
  private closedByUs = false;

  constructor(
    private readonly provider: GeminiSpeechProvider,
    private readonly agent: Agent,
    private readonly instructions: string,
    private readonly events: SpeechEvents,
    first: Opened,
  ) {
    this.current = first;
    this.watch(first);
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
    if (update?.resumable && update.newHandle) this.handle = update.newHandle;
    if (message.goAway) void this.resume();
    const content = message.serverContent;
    if (content) {
      if (content.inputTranscription?.text) {
        // The caller's first words of a turn: if Twilio still plays a reply Gemini already finished
        // generating (Gemini sends `interrupted` only while it generates), that audio is cut too.
        if (!this.callerWords) this.events.callerStarted();
        this.callerWords += content.inputTranscription.text;
      }
      if (content.interrupted && this.replying) {
        this.dropping = true;
        this.events.interrupted();
      }
      const replyId = `turn-${this.turn}`;
      if (!this.dropping) {
        for (const part of content.modelTurn?.parts ?? []) {
          if (!part.inlineData?.data) continue;
          this.startReply();
          const ulaw = this.fromGemini.convert(Buffer.from(part.inlineData.data, 'base64'));
          if (ulaw.length > 0) this.events.agentAudio(replyId, replyId, ulaw.toString('base64'), receivedAt);
        }
        if (content.outputTranscription?.text) {
          this.startReply();
          this.events.agentWords(replyId, replyId, content.outputTranscription.text);
        }
      }
      if (content.turnComplete) {
        this.flushCaller();
        // Always: a turn that only called a tool (end_call) is over too.
        this.events.replyDone(replyId);
        this.replying = false;
        this.dropping = false;
        this.turn++;
      }
    }
    for (const call of message.toolCall?.functionCalls ?? []) {
      this.flushCaller();
      this.events.toolCall(call.name ?? '', call.id ?? '', call.args ?? {});
    }
  }

  /** The model began to answer: the caller's words before it are one turn, stored first. */
  private startReply(): void {
    if (this.replying) return;
    this.flushCaller();
    this.replying = true;
    this.events.replyStarted(`turn-${this.turn}`);
  }

  private flushCaller(): void {
    const words = this.callerWords.replace(/\s+/g, ' ').trim();
    this.callerWords = '';
    if (words) this.events.callerTurn(words);
  }

  /** The server will close soon: a new session resumes this one (same handle), the old one closed by us once the new is ready. */
  private async resume(): Promise<void> {
    if (this.resuming || this.closedByUs) return;
    if (!this.handle) {
      this.events.providerError('goAway', 'the session will end and no resumption handle was given yet');
      return;
    }
    this.resuming = true;
    const old = this.current;
    try {
      const next = await this.provider.connect(this.agent, this.instructions, (message) => this.receive(message), this.handle);
      if (this.closedByUs) {
        next.session.close();
        return;
      }
      this.current = next;
      this.watch(next);
      for (const audio of this.held.splice(0)) this.send(audio);
      old.session.close();
    } catch (error) {
      this.tellLost(`The Gemini Live session could not be resumed (${error instanceof Error ? error.message : String(error)})`);
    } finally {
      this.resuming = false;
    }
  }

  private watch(opened: Opened): void {
    opened.closed((code, reason) => {
      // A session we replaced (after goAway) or closed is not a loss.
      if (this.current !== opened || this.resuming) return;
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
    this.current.session.sendToolResponse({ functionResponses: [{ id: callId, name, response: output }] });
  }

  /** After a tool's answer Gemini goes on with its turn by itself. */
  replyAfterTools(): void {}

  /**
   * Not sent: the Live API's `contextUpdate` (SDK 3.x) is not in Google's Live reference for every
   * model yet, and a message the service does not take closes the session. The passages of the
   * session's start stay.
   */
  updateInstructions(): void {}

  onLost(listener: (reason: string) => void): void {
    this.lost = listener;
  }

  close(): void {
    this.closedByUs = true;
    this.current.session.close();
  }
}

/** Gemini Live as the bridge's speech provider: GEMINI_API_KEY, and GEMINI_BASE_URL for another endpoint. */
export class GeminiSpeechProvider implements SpeechProvider {
  readonly transcriptCutAtHeard = true;
  /** Live sends no end-of-speech event: the bridge's own detector times the turns. */
  readonly reportsEndOfSpeech = false;

  constructor(private readonly options: { apiKey: string | undefined; baseUrl?: string; timeoutMs?: number }) {}

  modelLabel(agent: Agent): string {
    return `google/${geminiLiveModel(agent.modelConfig.model)}`;
  }

  async open(agent: Agent, instructions: string, events: SpeechEvents): Promise<SpeechSession> {
    if (!this.options.apiKey) throw new Error('GEMINI_API_KEY is not set: the speech-to-speech provider cannot be reached');
    let session: GeminiSpeechSession | null = null;
    const early: LiveServerMessage[] = [];
    const opened = await this.connect(agent, instructions, (message) => (session ? session.receive(message) : early.push(message)));
    session = new GeminiSpeechSession(this, agent, instructions, events, opened);
    for (const message of early) session.receive(message);
    return session;
  }

  /**
   * Opens a Live session (resuming `handle` when given) and waits for its `setupComplete`; a
   * session the service closes before that rejects with its close code and words.
   */
  async connect(agent: Agent, instructions: string, onMessage: (message: LiveServerMessage) => void, handle?: string): Promise<Opened> {
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
      config: liveConfig(agent, instructions, handle),
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
        closed: (listener) => {
          closeListener = listener;
          if (closedEarly) listener(closedEarly.code, closedEarly.reason);
        },
      };
    } catch (error) {
      void connecting.then((session) => session.close()).catch(() => undefined);
      const early = closedEarly as { code: number; reason: string } | null;
      if (early && early.code !== 1006) throw new Error(`The realtime provider refused the session (code ${early.code}${early.reason ? `: ${early.reason.slice(0, 200)}` : ''})`);
      if (error instanceof Error && error.message === 'timeout') throw new Error('The realtime provider did not open the session in time');
      throw new Error(`The realtime provider could not be reached (${failure ?? (error instanceof Error ? error.message : String(error))})`);
    } finally {
      clearTimeout(timer);
    }
  }
}
