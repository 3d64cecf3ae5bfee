import { ulawToPcm } from './audio.js';

// Our own end-of-speech signal, for a provider that sends none (Gemini Live): an energy detector
// over the caller's μ-law frames, so its agent turns are timed from the end of the caller's speech
// as OpenAI's are from its speech_stopped. It runs on every frame of every such call, so it is kept
// to a table lookup and an add per byte (no decoding buffer, no allocation).

/** A frame is speech when its RMS (16-bit scale) is above this: about −36 dBFS, above line noise, below quiet speech (−20 to −30 dBFS on a phone line). */
export const SPEECH_RMS = 500;
/** Speech starts after this much audio above SPEECH_RMS without a break (3 of Twilio's 20 ms frames: a click or a pop is not speech). */
export const SPEECH_ONSET_MS = 60;
/** Speech ends after this much audio below SPEECH_RMS (OpenAI's server VAD waits 200–500 ms; a shorter pause mid-sentence only restarts the turn's clock). */
export const SPEECH_END_MS = 300;
/** μ-law at 8 kHz: one byte per sample. */
const BYTES_PER_MS = 8;

/** Each μ-law byte's decoded sample, squared. */
const SQUARES = Float64Array.from(ulawToPcm(Buffer.from(Array.from({ length: 256 }, (_, byte) => byte))), (sample) => sample * sample);
const THRESHOLD_SQUARED = SPEECH_RMS * SPEECH_RMS;

/** Calls `ended` once each time the caller's speech (SPEECH_ONSET_MS of it or more) is followed by SPEECH_END_MS of quiet. */
export class EndOfSpeechDetector {
  private speaking = false;
  private loudMs = 0;
  private quietMs = 0;

  /** `started`: told when speech begins (SPEECH_ONSET_MS of it), for a recognizer that finds the turns itself. */
  constructor(
    private readonly ended: () => void,
    private readonly started?: () => void,
  ) {}

  /** One frame of the caller's audio, μ-law 8 kHz as Twilio sends it. */
  push(ulaw: Uint8Array): void {
    if (ulaw.length === 0) return;
    let sum = 0;
    for (let i = 0; i < ulaw.length; i++) sum += SQUARES[ulaw[i]!]!;
    const ms = ulaw.length / BYTES_PER_MS;
    if (sum > THRESHOLD_SQUARED * ulaw.length) {
      this.quietMs = 0;
      if (!this.speaking) {
        this.loudMs += ms;
        if (this.loudMs >= SPEECH_ONSET_MS) {
          this.speaking = true;
          this.started?.();
        }
      }
    } else if (this.speaking) {
      this.quietMs += ms;
      if (this.quietMs >= SPEECH_END_MS) {
        this.speaking = false;
        this.loudMs = 0;
        this.quietMs = 0;
        this.ended();
      }
    } else {
      this.loudMs = 0;
    }
  }
}
