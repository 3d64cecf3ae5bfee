// The streaming pipeline's two outside parties, in the pipeline's words: a recognizer that hears the
// caller's audio as it comes and a synthesizer that speaks the agent's text as it is written. Each
// provider's class (Deepgram, OpenAI, ElevenLabs, the builtin pair) translates its own protocol to
// these. Audio is always μ-law 8 kHz mono, one byte per sample. The names are the descriptors'
// (voice/speech-providers.ts).

import type { RecognizerName, SynthesizerName } from '../speech-providers.js';

export type { RecognizerName, SynthesizerName };

export interface RecognizerOptions {
  /** The provider's model, e.g. `nova-3`; the recognizer's `defaultModel` when the agent names none. */
  model: string;
  /** BCP-47 language of the call, e.g. `en`. */
  language: string;
  /** Keys the recognizer should favour (the agent's vocabulary), where the provider takes them. */
  keyterms?: string[];
  /** The agent's voiceConfig.turnDetection, where the recognizer has its own (Deepgram: Flux for semantic, endpointing for silence). */
  turnDetection?: { type: 'silence' | 'semantic'; eagerness?: 'low' | 'medium' | 'high' | 'auto' | null; silenceMs?: number | null } | null;
}

export interface RecognizerEvents {
  /** The recognizer heard speech begin (Deepgram `SpeechStarted`, OpenAI `speech_started`). */
  speechStarted(): void;
  /** Words of the segment being heard, not final: a later message may change them. */
  interim(text: string): void;
  /**
   * Words that will not change. `endOfTurn`: the recognizer judges the caller's turn over (Deepgram
   * `speech_final`, OpenAI's completed transcript of a committed turn). `audioEndMs`: where the last
   * word ended, in milliseconds of the audio sent since the session opened, when the provider says.
   */
  final(text: string, endOfTurn: boolean, audioEndMs?: number): void;
  /**
   * The recognizer judges the turn likely over, not yet surely (Flux `EagerEndOfTurn`, only asked for
   * with turnDetection semantic): `text` is the turn's words so far, as its `final` would tell them.
   * Either `turnResumed` or `final(…, true)` follows. Recognizers without it never call it.
   */
  eagerEndOfTurn?(text: string, audioEndMs?: number): void;
  /** The caller went on after `eagerEndOfTurn` (Flux `TurnResumed`): the turn is not over. */
  turnResumed?(): void;
  /** No words for a while after the last final (Deepgram `UtteranceEnd`): the turn is over if it was not already. */
  utteranceEnd(audioEndMs?: number): void;
  /** The session ended without our closing it (a refused key, a dropped socket): the provider's words, no secret. */
  lost(reason: string): void;
}

export interface RecognizerSession {
  /** One frame of the caller's audio, as Twilio sent it (μ-law 8 kHz, usually 20 ms = 160 bytes). */
  send(ulaw: Buffer): void;
  /** Asks for what was heard so far to be made final now (Deepgram `Finalize`); a provider without it does nothing. */
  finalize(): void;
  /** Closes the session gracefully (Deepgram `CloseStream`); no event follows. */
  close(): void;
}

export interface Recognizer {
  readonly name: RecognizerName;
  /** The model used when the agent names none. */
  readonly defaultModel: string;
  /** What is missing for it to run (e.g. `DEEPGRAM_API_KEY is not set`), or null when it can. */
  missing(): string | null;
  /** Opens one call's session; rejects with a message fit for the call record (the provider's words, never the key). */
  open(options: RecognizerOptions, events: RecognizerEvents): Promise<RecognizerSession>;
}

export interface SynthesisOptions {
  /** The provider's voice, e.g. an ElevenLabs voice id or an OpenAI voice name; the synthesizer's `defaultVoice` when unset. */
  voiceId: string;
  /** The provider's model, e.g. `eleven_flash_v2_5`; `defaultModel` when unset. */
  model: string;
}

export interface SynthesisEvents {
  /**
   * μ-law 8 kHz audio of the text pushed, in order. `textEnd`: how many characters of the text
   * pushed so far (all pushes concatenated) this audio and all before it speak, as far as the
   * provider says (ElevenLabs' alignment); one that does not say reports a push's length once its
   * last audio has come.
   */
  audio(ulaw: Buffer, textEnd: number): void;
  /** Everything pushed before `end()` has been spoken: no more audio for this reply. */
  done(): void;
  /** The stream ended without our closing it, before `done` (a refused key, a dropped socket): the provider's words, no secret. */
  lost(reason: string): void;
}

export interface SynthesisStream {
  /** Text to speak, in order: a sentence or clause judged complete, to be spoken now rather than held for more. */
  push(text: string): void;
  /** No more text for this reply: what was pushed is spoken to the end, then `done`. */
  end(): void;
  /** Stops at once (the caller spoke over the agent): no more events, the provider's stream closed. */
  cancel(): void;
}

export interface Synthesizer {
  readonly name: SynthesizerName;
  readonly defaultModel: string;
  readonly defaultVoice: string;
  /** What is missing for it to run (e.g. `ELEVENLABS_API_KEY is not set`), or null when it can. */
  missing(): string | null;
  /** Opens one reply's stream (called as the caller's turn ends, so its setup overlaps the model's); rejects with the provider's words. */
  open(options: SynthesisOptions, events: SynthesisEvents): Promise<SynthesisStream>;
}
