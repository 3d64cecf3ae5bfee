/**
 * A live call's media in no carrier's words: what its stream told us (`MediaEvent`), and what a call
 * session sends the caller through (`MediaLink`). Audio is 8 kHz μ-law, base64 as every carrier's
 * JSON framing carries it, so a frame passes through without being decoded and encoded again.
 */
export type MediaEvent =
  /** The stream's first message: the carrier's ids for the stream and the call, and our call id when the carrier carries it back. */
  | { kind: 'start'; streamId: string; carrierCallId: string; callId: string | null }
  /** One frame of the caller's audio (base64 μ-law). */
  | { kind: 'audio'; payload: string }
  /** The carrier played everything sent before the mark of this name (or dropped it on a clear). */
  | { kind: 'mark'; name: string }
  /** The caller pressed a key. */
  | { kind: 'dtmf'; digit: string }
  /** The carrier ended the stream. */
  | { kind: 'stop' };

/** What a live call session (the speech-to-speech bridge, the streaming pipeline) says to the caller through. */
export interface MediaLink {
  /**
   * Plays audio (base64 μ-law) after what was sent before. `caption`, the words of this audio, is
   * given offline only, for the in-process line (the simulated caller hears words, not sound); a
   * carrier's framing drops it.
   */
  audio(payload: string, caption?: string): void;
  /** Drops the audio sent and not yet played (the caller barged in). */
  clear(): void;
  /** Asks the carrier to tell (a `mark` event) once everything sent before this was played. */
  mark(name: string): void;
  /** Ends the stream (the carrier moves on past it). */
  close(code: number, reason: string): void;
  readonly open: boolean;
}

/** A carrier's media stream framing: its messages read as MediaEvents, and MediaLink's calls written as its messages. */
export interface MediaFraming {
  /** The event one text message carries, or null when it carries none the sessions use. */
  parse(text: string): MediaEvent | null;
  /** Writes the messages of one stream (the carrier's stream id, from its `start`). */
  writer(streamId: string): MediaWriter;
}

export interface MediaWriter {
  audio(payload: string): string;
  clear(): string;
  mark(name: string): string;
}
