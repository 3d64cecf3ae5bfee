import { SPEECH_END_MS } from '../realtime/end-of-speech.js';
import { encodeSegment, type Segment, SpeechDecoder } from './builtin-modem.js';
import { SpokenSynthesisStream } from './builtin-spoken-stream.js';
import { builtinVoice, type EspeakVoices } from './espeak-voices.js';
import type {
  Recognizer,
  RecognizerEvents,
  RecognizerOptions,
  RecognizerSession,
  SynthesisEvents,
  SynthesisOptions,
  SynthesisStream,
  Synthesizer,
} from './speech-ports.js';

// The builtin recognizer and synthesizer: a deterministic pair that needs no network and no account,
// so the offline simulator, the tests and the voice benchmark drive a `streaming` agent through the
// same pipeline classes as real providers. The synthesizer speaks (eSpeak NG, espeak-voices.ts); the
// recognizer hears the code of builtin-modem.ts (text as dual tones, about as long and as loud as
// speech), which is what the simulated caller speaks, and what the synthesizer says with `voice: 'modem'`
// where a test decodes the agent's audio exactly. The simulated caller hears the agent's speech by
// its text, sent beside the audio on the in-process line (simulated-stream.ts).

export { BUILTIN_MS_PER_BYTE, BUILTIN_PREAMBLE_MS, decodeSpeech, encodeSpeech, speechDurationMs } from './builtin-modem.js';

/** μ-law at 8 kHz: eight samples a millisecond (positions below are in samples since the session opened). */
const SAMPLES_PER_MS = 8;

/** The caller's turn is over after this much audio without code (300 ms, as our own end-of-speech VAD judges). */
const FINAL_AFTER = SPEECH_END_MS * SAMPLES_PER_MS;
/** No code for this long after an utterance: utteranceEnd, as Deepgram sends it after `utterance_end_ms` (1000 here). */
const UTTERANCE_END_AFTER = 1000 * SAMPLES_PER_MS;

/**
 * Events delivered in order, each on a later turn of the event loop (as a network provider's would
 * be, so a handler may call back into the session); a delayed one holds those behind it.
 */
class EventQueue {
  private readonly tasks: { delayMs: number; fire: () => void }[] = [];
  private timer: NodeJS.Timeout | NodeJS.Immediate | null = null;
  private closed = false;

  push(fire: () => void, delayMs = 0): void {
    if (this.closed) return;
    this.tasks.push({ delayMs, fire });
    if (!this.timer) this.schedule();
  }

  private schedule(): void {
    const next = this.tasks[0];
    if (!next) {
      this.timer = null;
      return;
    }
    const run = () => {
      this.timer = null;
      if (this.closed) return;
      this.tasks.shift();
      next.fire();
      if (!this.timer) this.schedule();
    };
    this.timer = next.delayMs > 0 ? setTimeout(run, next.delayMs) : setImmediate(run);
  }

  close(): void {
    this.closed = true;
    this.tasks.length = 0;
    if (this.timer) {
      clearTimeout(this.timer as NodeJS.Timeout);
      clearImmediate(this.timer as NodeJS.Immediate);
      this.timer = null;
    }
  }
}

/**
 * One session: segments make utterances. A segment starting less than 300 ms of audio after the last
 * one ended continues its utterance (a pause mid-sentence; two pushes of the synthesizer back to back),
 * its text joined with a space; 300 ms without code make the utterance final, 1000 ms send utteranceEnd.
 */
class BuiltinRecognizerSession implements RecognizerSession {
  private readonly decoder: SpeechDecoder;
  private readonly queue = new EventQueue();
  private closed = false;
  /** speechStarted was sent and the utterance's 300 ms have not passed. */
  private speaking = false;
  private pending = '';
  private lastInterim = '';
  /** Where the last code ended, and the last character. */
  private codeEnd = 0;
  private characterEnd = 0;
  private awaitingUtteranceEnd = false;
  private joinWithSpace = false;

  constructor(
    private readonly events: RecognizerEvents,
    private readonly finalDelayMs: number,
  ) {
    this.decoder = new SpeechDecoder({
      segmentStarted: (sample) => this.segmentStarted(sample),
      character: (text, sample) => this.character(text, sample),
      segmentEnded: (sample) => this.segmentEnded(sample),
    });
  }

  send(ulaw: Buffer): void {
    if (this.closed) return;
    this.decoder.push(ulaw);
    this.checkSilence(this.decoder.earliestNextStart);
  }

  finalize(): void {
    if (this.closed || this.pending === '') return;
    this.emitFinal(this.characterEnd);
  }

  close(): void {
    this.closed = true;
    this.queue.close();
  }

  /** Closes the utterance (final) and sends utteranceEnd once no segment can start before their time. */
  private checkSilence(earliestStart: number): void {
    if (this.speaking && earliestStart >= this.codeEnd + FINAL_AFTER) {
      this.speaking = false;
      this.awaitingUtteranceEnd = true;
      if (this.pending !== '') this.emitFinal(this.codeEnd);
    }
    if (this.awaitingUtteranceEnd && earliestStart >= this.codeEnd + UTTERANCE_END_AFTER) {
      this.awaitingUtteranceEnd = false;
      const audioEndMs = toMs(this.codeEnd);
      this.queue.push(() => this.events.utteranceEnd(audioEndMs));
    }
  }

  private segmentStarted(sample: number): void {
    this.checkSilence(sample);
    // Speech again before utteranceEnd: the turn was not over after all, as Deepgram sends none then.
    this.awaitingUtteranceEnd = false;
    if (!this.speaking) {
      this.speaking = true;
      this.queue.push(() => this.events.speechStarted());
    }
    this.joinWithSpace = this.pending !== '' && !/\s$/.test(this.pending);
  }

  private character(text: string, sample: number): void {
    if (this.joinWithSpace && !/^\s/.test(text)) this.pending += ' ';
    this.joinWithSpace = false;
    this.pending += text;
    this.characterEnd = sample;
    if (/\s/.test(text)) this.emitInterim();
  }

  private segmentEnded(sample: number): void {
    this.codeEnd = sample;
    this.emitInterim();
  }

  /** The text so far, at the end of each word, when it has changed. */
  private emitInterim(): void {
    if (this.pending.trim() === '' || this.pending === this.lastInterim) return;
    const text = (this.lastInterim = this.pending);
    this.queue.push(() => this.events.interim(text));
  }

  private emitFinal(sample: number): void {
    const text = this.pending;
    const audioEndMs = toMs(sample);
    this.pending = '';
    this.lastInterim = '';
    this.queue.push(() => this.events.final(text, true, audioEndMs), this.finalDelayMs);
  }
}

function toMs(sample: number): number {
  return Math.round(sample / SAMPLES_PER_MS);
}

export interface BuiltinSpeechOptions {
  /** A fixed delay (ms): before each final (recognizer), before each push's first audio (synthesizer); 0 by default. */
  delayMs?: number;
  /** The synthesizer's sound: `speech` (eSpeak NG, the default) or `modem` (the code the builtin recognizer decodes). */
  voice?: 'speech' | 'modem';
  /** The speech's engine; the process's shared one by default. */
  voices?: EspeakVoices;
}

/** The builtin recognizer: hears what BuiltinSynthesizer (or encodeSpeech) says; anything else is ignored. */
export class BuiltinRecognizer implements Recognizer {
  readonly name = 'builtin' as const;
  readonly defaultModel = 'builtin';
  private readonly delayMs: number;

  constructor(options: BuiltinSpeechOptions = {}) {
    this.delayMs = options.delayMs ?? 0;
  }

  missing(): string | null {
    return null;
  }

  /** Model, language and keyterms change nothing: the code has one alphabet, UTF-8. */
  open(_options: RecognizerOptions, events: RecognizerEvents): Promise<RecognizerSession> {
    return Promise.resolve(new BuiltinRecognizerSession(events, this.delayMs));
  }
}

/** Audio is handed over in chunks of up to 60 ms. */
const CHUNK = 60 * SAMPLES_PER_MS;

/**
 * One reply's stream: each push is encoded at once (a copy of precomputed symbols) and handed over in 60 ms chunks, one per turn of
 * the event loop (faster than real time, as a provider streams), textEnd growing per character.
 */
class BuiltinSynthesisStream implements SynthesisStream {
  private readonly queue: { text: string; readyAt: number }[] = [];
  private timer: NodeJS.Timeout | NodeJS.Immediate | null = null;
  private ended = false;
  private stopped = false;
  /** Characters (UTF-16 units) of the pushes already emitted in full. */
  private textBase = 0;

  constructor(
    private readonly events: SynthesisEvents,
    private readonly delayMs: number,
  ) {}

  push(text: string): void {
    // Text after end() or cancel() has nowhere to go.
    if (this.ended || this.stopped) return;
    this.queue.push({ text, readyAt: Date.now() + this.delayMs });
    if (!this.timer) this.next();
  }

  end(): void {
    if (this.ended || this.stopped) return;
    this.ended = true;
    if (!this.timer) this.next();
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

  /** Starts the next push (after its delay), or says done when none is left after end(). */
  private next(): void {
    const item = this.queue.shift();
    if (!item) {
      this.timer = this.ended ? setImmediate(() => !this.stopped && this.events.done()) : null;
      return;
    }
    const start = () => this.emit(item.text, item.text === '' ? null : encodeSegment(item.text), 0);
    const wait = item.readyAt - Date.now();
    this.timer = wait > 0 ? setTimeout(start, wait) : setImmediate(start);
  }

  /** Emits one chunk of a push from `offset`, then schedules the rest. */
  private emit(text: string, spoken: Segment | null, offset: number): void {
    if (this.stopped) return;
    if (!spoken) {
      this.next();
      return;
    }
    const end = Math.min(offset + CHUNK, spoken.audio.length);
    const last = end === spoken.audio.length;
    let textEnd = 0;
    for (const mark of spoken.marks) if (mark.end <= end) textEnd = mark.textEnd;
    this.events.audio(spoken.audio.subarray(offset, end), this.textBase + (last ? text.length : textEnd));
    if (this.stopped) return;
    if (!last) {
      this.timer = setImmediate(() => this.emit(text, spoken, end));
      return;
    }
    this.textBase += text.length;
    this.next();
  }
}

/** The builtin synthesizer: speaks text in eSpeak NG's voice (or as the builtin code, see encodeSpeech), no network, no account. */
export class BuiltinSynthesizer implements Synthesizer {
  readonly name = 'builtin' as const;
  readonly defaultModel = 'builtin';
  readonly defaultVoice = 'builtin';
  /** Pushes of its streams still being synthesized (the simulated line holds still meanwhile). */
  readonly busy = { count: 0 };
  private readonly delayMs: number;
  private readonly voice: 'speech' | 'modem';
  private readonly voices: EspeakVoices | undefined;

  constructor(options: BuiltinSpeechOptions = {}) {
    this.delayMs = options.delayMs ?? 0;
    this.voice = options.voice ?? 'speech';
    this.voices = options.voices;
  }

  missing(): string | null {
    return null;
  }

  /** Voice and model change nothing: there is one agent voice. */
  open(_options: SynthesisOptions, events: SynthesisEvents): Promise<SynthesisStream> {
    if (this.voice === 'modem') return Promise.resolve(new BuiltinSynthesisStream(events, this.delayMs));
    return Promise.resolve(new SpokenSynthesisStream(this.voices ?? builtinVoice(), events, this.delayMs, this.busy));
  }
}
