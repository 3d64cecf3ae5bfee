import type { Agent } from '../../agents/agent.entity.js';
import type { CallTool } from './call-tools.js';

/**
 * What a speech-to-speech provider tells the bridge, in the bridge's words (the provider's own
 * events are translated by its session class). Audio is always Twilio's: μ-law 8 kHz, base64.
 */
export interface SpeechEvents {
  /** The provider heard the caller start to speak: a reply being played is cut (barge-in). */
  callerStarted(): void;
  /**
   * The caller stopped speaking (the end of the caller's turn): the agent's turn is timed from here.
   * Said by the provider when it has the signal (OpenAI's speech_stopped); for one without it (Gemini
   * Live, `reportsEndOfSpeech` false) the bridge's own detector says it (end-of-speech.ts).
   */
  callerStopped(): void;
  /** The provider stopped its reply itself because the caller spoke over it (Gemini's `interrupted`). */
  interrupted(): void;
  /** One finished caller turn, as the provider transcribed it. */
  callerTurn(text: string): void;
  replyStarted(replyId: string): void;
  /** `receivedAt`: when the provider's message carrying it arrived (performance.now()), when converting it took time of ours; else now. */
  agentAudio(replyId: string, itemId: string, ulaw: string, receivedAt?: number): void;
  /** The agent's words as they are generated, with its audio. */
  agentWords(replyId: string, itemId: string, delta: string): void;
  /** One spoken item of a reply is complete; `transcript` is the provider's whole text of it, when it sends one. */
  agentItemDone(replyId: string, itemId: string, transcript: string): void;
  /** The reply is over (done, cancelled or interrupted); '' when the provider did not name it. */
  replyDone(replyId: string): void;
  toolCall(name: string, callId: string, args: Record<string, unknown>): void;
  /** An error the provider reported while the session goes on. */
  providerError(code: unknown, message: unknown): void;
}

/** A text request apart from the call: the instructions it is answered under, its one input (data), how many tokens it may write. */
export interface OutOfBandText {
  instructions: string;
  input: string;
  maxOutputTokens: number;
}

/** One call's open session with a speech-to-speech provider. */
export interface SpeechSession {
  appendCallerAudio(ulaw: string): void;
  /** Stops the reply being generated (a provider that stops on its own does nothing). */
  cancelReply(): void;
  /** Tells the provider how much of an item the caller heard, when it keeps that in its context. */
  truncate(itemId: string, heardMs: number): void;
  answerTool(callId: string, name: string, output: Record<string, unknown>): void;
  /** The agent opens the call with this line, word for word (its first message), before the caller has said anything. */
  sayFirst(line: string): void;
  /** A line the model reads as the caller's (their keys: "[the caller pressed 2]"); the bridge asks for the reply (replyAfterTools) as after a tool. */
  callerKeys(line: string): void;
  /** After a tool the model should speak to: OpenAI is asked for a new reply; Gemini goes on by itself. */
  replyAfterTools(): void;
  /** The caller's last turn is answered now (a provider whose own reply on the end of speech is off: SpeechProvider.gatewayDecides). */
  answerCaller?(): void;
  /** New instructions (fresh passages) for the replies to come, where the provider takes them mid-session. */
  updateInstructions(instructions: string): void;
  /** The call is ending: what the session still holds back (a caller turn not yet told, a reply waiting for it) is told now, in order. */
  flush?(): void;
  /**
   * A text answer apart from the call (a warm transfer's summary): asked out of band, with its own
   * instructions and input, so nothing of it joins the call's conversation or reaches the caller;
   * rejects when the provider fails it or the session ends first. Absent where the provider answers
   * in audio only (Gemini Live).
   */
  answerText?(request: OutOfBandText): Promise<string>;
  /** Called once when the session ends without us closing it. */
  onLost(listener: (reason: string) => void): void;
  close(): void;
}

export interface SpeechProvider {
  /** What the agent's messages on the phone are labelled with, e.g. `openai/gpt-realtime`. */
  modelLabel(agent: Agent): string;
  /**
   * Whether a cut reply is stored as far as the caller heard it (the provider's transcript is what
   * it generated and it cannot be told where the caller stopped), rather than as the words generated.
   */
  readonly transcriptCutAtHeard: boolean;
  /** Whether the provider says when the caller stopped speaking (`callerStopped`); when not, the bridge detects it on the caller's audio. */
  readonly reportsEndOfSpeech: boolean;
  /**
   * Whether, for this agent, the provider's own cut and reply on the caller's voice are off and the
   * bridge decides on the caller's words (voiceConfig.interruptions: OpenAI, every mode but any);
   * when not, the provider cuts and answers as its voice activity detection says.
   */
  gatewayDecides?(agent: Agent): boolean;
  /** Opens and configures the call's session, with the agent's own tools beside the built-in ones; rejects with a message fit for the call record. */
  open(agent: Agent, instructions: string, events: SpeechEvents, tools?: CallTool[]): Promise<SpeechSession>;
}

/**
 * What a speech-to-speech model is told to open the call with: the line as a JSON string (so
 * nothing in it, a contact's name among it, can end the quote or read as another instruction).
 */
export function firstLineInstructions(line: string): string {
  return `Open the call now: say exactly the words of this JSON string to the caller, word for word, adding nothing, then stop and listen: ${JSON.stringify(line)}`;
}
