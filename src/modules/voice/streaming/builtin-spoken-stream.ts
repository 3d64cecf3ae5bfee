import { AGENT_VOICE, type EspeakVoices, type Utterance } from './espeak-voices.js';
import type { SynthesisEvents, SynthesisStream } from './speech-ports.js';

/** Audio is handed over in chunks of up to 60 ms (8 bytes a millisecond). */
const CHUNK = 60 * 8;
/** Pushes of one reply at the voice's thread at once: the one playing and the next (the rest wait here, as text). */
const AHEAD = 2;

/** Of `text` spoken as `utterance`, the characters whose words are over by byte `end` (all of it at the end). */
function textEndAt(text: string, utterance: Utterance, end: number): number {
  if (end >= utterance.ulaw.length) return text.length;
  let textEnd = 0;
  // A word is over once the next one has started.
  for (const word of utterance.words) if (word.sample > 0 && word.sample <= end) textEnd = word.textStart;
  return textEnd;
}

/**
 * One reply's stream in the builtin voice (eSpeak NG, espeak-voices.ts): a push is sent to the voice's
 * thread as soon as fewer than AHEAD of the reply's are there, so the next sentence is synthesized while
 * one plays and no reply holds more than AHEAD of the thread's places; its audio is
 * handed over in order, in 60 ms chunks, one per turn of the event loop, textEnd growing word by word.
 * A push the voice could not speak ends the stream with `lost` (the pipeline fails the call cleanly).
 * `busy` counts the pushes still being synthesized, for the simulator's line (simulated-stream.ts).
 */
export class SpokenSynthesisStream implements SynthesisStream {
  private readonly queue: { text: string; spoken: Promise<Utterance> | null; readyAt: number }[] = [];
  /** Pushes sent to the thread and not yet played out. */
  private ahead = 0;
  private timer: NodeJS.Timeout | NodeJS.Immediate | null = null;
  private running = false;
  private ended = false;
  private stopped = false;
  /** Characters (UTF-16 units) of the pushes already emitted in full. */
  private textBase = 0;

  constructor(
    private readonly voices: EspeakVoices,
    private readonly events: SynthesisEvents,
    private readonly delayMs: number,
    private readonly busy: { count: number },
  ) {}

  push(text: string): void {
    if (this.ended || this.stopped) return;
    this.queue.push({ text, spoken: null, readyAt: Date.now() + this.delayMs });
    this.sendAhead();
    if (!this.running) this.next();
  }

  end(): void {
    if (this.ended || this.stopped) return;
    this.ended = true;
    if (!this.running) this.next();
  }

  cancel(): void {
    this.stopped = true;
    this.queue.length = 0;
    if (this.timer) {
      clearTimeout(this.timer as NodeJS.Timeout);
      clearImmediate(this.timer as NodeJS.Immediate);
      this.timer = null;
    }
  }

  /** Sends the waiting pushes to the voice's thread while fewer than AHEAD of this reply's are there. */
  private sendAhead(): void {
    for (const item of this.queue) {
      if (this.ahead >= AHEAD) return;
      if (item.spoken) continue;
      this.ahead += 1;
      if (item.text.trim() === '') item.spoken = Promise.resolve({ ulaw: Buffer.alloc(0), words: [] });
      else {
        this.busy.count += 1;
        item.spoken = this.voices.speak(item.text, AGENT_VOICE).finally(() => (this.busy.count -= 1));
      }
      item.spoken.catch(() => undefined); // reported when its turn comes
    }
  }

  /** The next push (after its delay and its synthesis), or done when none is left after end(). */
  private next(): void {
    const item = this.queue.shift();
    if (!item) {
      this.running = false;
      if (this.ended) this.timer = setImmediate(() => !this.stopped && this.events.done());
      return;
    }
    this.running = true;
    const wait = item.readyAt - Date.now();
    const spoken = item.spoken!;
    const start = () => {
      this.timer = null;
      spoken.then(
        (utterance) => this.emit(item.text, utterance, 0),
        (error: unknown) => {
          if (!this.stopped) this.events.lost(error instanceof Error ? error.message : String(error));
          this.cancel();
        },
      );
    };
    if (wait > 0) this.timer = setTimeout(start, wait);
    else start();
  }

  /** Emits one chunk of a push from `offset`, then schedules the rest. */
  private emit(text: string, utterance: Utterance, offset: number): void {
    if (this.stopped) return;
    if (utterance.ulaw.length === 0) {
      this.textBase += text.length;
      this.played();
      return;
    }
    const end = Math.min(offset + CHUNK, utterance.ulaw.length);
    this.events.audio(utterance.ulaw.subarray(offset, end), this.textBase + textEndAt(text, utterance, end));
    if (this.stopped) return;
    if (end < utterance.ulaw.length) {
      this.timer = setImmediate(() => this.emit(text, utterance, end));
      return;
    }
    this.textBase += text.length;
    this.played();
  }

  /** A push has played out: its place at the thread goes to the next, then the next plays. */
  private played(): void {
    this.ahead -= 1;
    this.sendAhead();
    this.next();
  }
}
