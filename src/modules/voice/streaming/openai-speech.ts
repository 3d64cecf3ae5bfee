import type OpenAI from 'openai';

/** The official SDK, loaded when an agent first speaks through OpenAI (like the Twilio client: a process that never does, never loads it). */
let sdk: typeof import('openai') | null = null;
import { bytesToPcm, pcmToUlaw, Resampler } from '../realtime/audio.js';
import { realtimeVoice } from '../realtime/openai-realtime.js';
import { openAiWords } from './openai-words.js';
import type { SynthesisEvents, SynthesisOptions, SynthesisStream, Synthesizer } from './speech-ports.js';
import { DEFAULT_SPEECH_MODEL } from '../../models/voice-models.js';

// OpenAI as the streaming pipeline's synthesizer: one `POST /audio/speech` per sentence pushed, its
// body read as it comes. `response_format: "pcm"` is raw 16-bit little-endian mono at 24 kHz (no
// header, so the first bytes are already audio); it is resampled to 8 kHz and μ-law encoded for
// Twilio as it streams. The service has no text-streaming input, so the pipeline's sentences are
// the unit: each may be requested as soon as it is pushed, and their audio is played strictly in
// the order they were pushed. Through the official SDK, with its retries off: a call cannot wait
// out a backoff, and a failed sentence is the pipeline's to handle (it is told `lost`).

export { DEFAULT_SPEECH_MODEL } from '../../models/voice-models.js';
/** A built-in voice every speech model has (marin and cedar are gpt-4o-mini-tts only). */
export const DEFAULT_SPEECH_VOICE = 'alloy';
export const DEFAULT_OPENAI_BASE_URL = 'https://api.openai.com/v1';
/** The rate of `response_format: "pcm"`. */
const PCM_HZ = 24_000;
/** The service refuses an `input` longer than this. */
const MAX_INPUT = 4096;
/** Sentences requested at once, the one playing included: enough to hide a request's latency, few enough not to meet the rate limit. */
const MAX_IN_FLIGHT = 3;

/** One pushed text (or a 4096-character piece of a longer one): its request and the audio not yet played. */
interface Sentence {
  text: string;
  controller: AbortController;
  started: boolean;
  finished: boolean;
  /** PCM bytes received and not yet played (the sentence waits here until those before it have played). */
  pcm: Buffer[];
  /** The odd byte of a chunk, kept for the next one: a sample may be split across two chunks. */
  carry: Buffer;
  /** Why its request failed: told (as `lost`) when its turn to play comes, after the audio before it. */
  failure?: string;
}

/** Splits text the service would refuse for its length, at a space where there is one. */
function pieces(text: string): string[] {
  const out: string[] = [];
  let rest = text;
  while (rest.length > MAX_INPUT) {
    const space = rest.lastIndexOf(' ', MAX_INPUT);
    const cut = space > 0 ? space + 1 : MAX_INPUT;
    out.push(rest.slice(0, cut));
    rest = rest.slice(cut);
  }
  out.push(rest);
  return out;
}

/** A failure in OpenAI's words (its error JSON's message when it sent one), without the key. */
function reason(error: unknown, apiKey: string): string {
  let said: string;
  const { APIConnectionError, APIConnectionTimeoutError, APIError } = sdk!;
  if (error instanceof APIConnectionTimeoutError) said = `OpenAI's speech service did not answer in time`;
  else if (error instanceof APIConnectionError)
    said = `OpenAI's speech service could not be reached (${error.cause instanceof Error ? error.cause.message : error.message})`;
  else if (error instanceof APIError && error.status) {
    const body = error.error as { message?: unknown } | undefined;
    const message = typeof body?.message === 'string' ? body.message : '';
    said = `OpenAI refused the speech request (HTTP ${error.status}${message ? `: ${message}` : ''})`;
  } else said = `OpenAI's speech stream broke off (${error instanceof Error ? error.message : String(error)})`;
  return openAiWords(said, apiKey);
}

class OpenAiSynthesisStream implements SynthesisStream {
  private readonly sentences: Sentence[] = [];
  /** The sentence playing: every one before it has played to its end. */
  private head = 0;
  /** Characters of the pushes whose audio has all been played (the `textEnd` of what plays now). */
  private spoken = 0;
  /** One resampler for the whole reply: its sentences play as one stream, with no seam between them. */
  private readonly resampler = new Resampler(PCM_HZ, 8000);
  /**
   * The last μ-law chunk of the playing sentence, held until the next one or the sentence's end: its
   * end is known only when the body ends, and its last audio is what says "this push is spoken".
   */
  private held: Buffer | null = null;
  private ended = false;
  private stopped = false;

  constructor(
    private readonly client: OpenAI,
    private readonly request: { model: string; voice: string | { id: string } },
    private readonly events: SynthesisEvents,
    private readonly timeoutMs: number,
    private readonly apiKey: string,
  ) {}

  push(text: string): void {
    if (this.stopped || this.ended) return;
    for (const piece of pieces(text))
      this.sentences.push({ text: piece, controller: new AbortController(), started: false, finished: false, pcm: [], carry: Buffer.alloc(0) });
    this.startMore();
  }

  end(): void {
    if (this.stopped || this.ended) return;
    this.ended = true;
    this.play();
  }

  cancel(): void {
    if (this.stopped) return;
    this.stopped = true;
    for (const sentence of this.sentences) sentence.controller.abort();
  }

  private startMore(): void {
    const last = Math.min(this.sentences.length, this.head + MAX_IN_FLIGHT);
    for (let index = this.head; index < last; index++) {
      const sentence = this.sentences[index]!;
      if (!sentence.started) {
        sentence.started = true;
        void this.fetch(sentence);
      }
    }
  }

  private async fetch(sentence: Sentence): Promise<void> {
    // Text the service would refuse as empty has nothing to say: it is spoken at once.
    if (!sentence.text.trim()) {
      sentence.finished = true;
      return this.play();
    }
    // One watchdog for the whole request: no answer, or no audio for a while once answering, ends it.
    // (The SDK's own timeout stays as a backstop: it ends with the headers, and a test runner's
    // realm can hide which abort it was.)
    let idle: NodeJS.Timeout | undefined;
    let stalled = false;
    let answered = false;
    const watch = () => {
      clearTimeout(idle);
      idle = setTimeout(() => {
        stalled = true;
        sentence.controller.abort();
      }, this.timeoutMs);
    };
    try {
      watch();
      const response = await this.client.audio.speech.create(
        { model: this.request.model, voice: this.request.voice, input: sentence.text, response_format: 'pcm' },
        { signal: sentence.controller.signal, timeout: this.timeoutMs + 1000, maxRetries: 0 },
      );
      answered = true;
      if (!response.body) throw new Error('the response had no body');
      const reader = response.body.getReader();
      for (;;) {
        const { done, value } = await reader.read();
        if (this.stopped) return;
        if (done) break;
        watch();
        sentence.pcm.push(Buffer.from(value.buffer, value.byteOffset, value.byteLength));
        this.play();
      }
      clearTimeout(idle);
      sentence.finished = true;
      this.play();
    } catch (error) {
      if (this.stopped) return;
      if (!stalled) sentence.failure = reason(error, this.apiKey);
      else if (answered) sentence.failure = `OpenAI's speech stream stalled (no audio for ${this.timeoutMs} ms)`;
      else sentence.failure = `OpenAI's speech service did not answer within ${this.timeoutMs} ms`;
      this.play();
    } finally {
      clearTimeout(idle);
    }
  }

  private fail(why: string): void {
    this.cancel();
    this.events.lost(why);
  }

  /** Plays what can be played, in push order: the head sentence's audio, then the next once it has ended. */
  private play(): void {
    while (!this.stopped && this.head < this.sentences.length) {
      const sentence = this.sentences[this.head]!;
      for (const chunk of sentence.pcm.splice(0)) {
        const bytes = sentence.carry.length > 0 ? Buffer.concat([sentence.carry, chunk]) : chunk;
        const even = bytes.length & ~1;
        sentence.carry = Buffer.from(bytes.subarray(even));
        this.emit(pcmToUlaw(this.resampler.push(bytesToPcm(bytes.subarray(0, even)))));
        if (this.stopped) return;
      }
      if (sentence.failure) {
        // What came of the broken sentence is played; its text is not counted as spoken.
        this.release();
        return this.stopped ? undefined : this.fail(sentence.failure);
      }
      if (!sentence.finished) return;
      // This sentence has all come: its last audio says it is spoken.
      this.spoken += sentence.text.length;
      this.release();
      if (this.stopped) return;
      this.head++;
      this.startMore();
    }
    if (this.ended && !this.stopped && this.head === this.sentences.length) {
      // The filter holds its last few milliseconds until more comes: a little silence brings them out.
      const tail = this.resampler.push(new Int16Array(Math.ceil(this.resampler.delaySeconds * PCM_HZ) + 3));
      this.held = Buffer.concat([this.held ?? Buffer.alloc(0), pcmToUlaw(tail)]);
      this.release();
      if (this.stopped) return;
      this.stopped = true;
      this.events.done();
    }
  }

  /** Audio of the playing sentence: what was held goes out (it is not the sentence's last), this is held. */
  private emit(ulaw: Buffer): void {
    if (ulaw.length === 0) return;
    const previous = this.held;
    this.held = ulaw;
    if (previous) this.events.audio(previous, this.spoken);
  }

  private release(): void {
    const held = this.held;
    this.held = null;
    if (held && held.length > 0) this.events.audio(held, this.spoken);
  }
}

/**
 * OpenAI's speech endpoint as the streaming pipeline's synthesizer: OPENAI_API_KEY and
 * OPENAI_BASE_URL. open() checks only that it can run and resolves: the service has no session to
 * open, and each sentence's request reports its own refusal (a refused key, a rate limit) as `lost`.
 */
export class OpenAiSynthesizer implements Synthesizer {
  readonly name = 'openai' as const;
  readonly defaultModel = DEFAULT_SPEECH_MODEL;
  readonly defaultVoice = DEFAULT_SPEECH_VOICE;
  private client: OpenAI | null = null;

  constructor(private readonly options: { apiKey?: string; baseUrl?: string; timeoutMs?: number }) {}

  missing(): string | null {
    return this.options.apiKey ? null : 'OPENAI_API_KEY is not set';
  }

  async open(options: SynthesisOptions, events: SynthesisEvents): Promise<SynthesisStream> {
    const apiKey = this.options.apiKey;
    if (!apiKey) throw new Error('OPENAI_API_KEY is not set: the OpenAI synthesizer cannot be reached');
    // One client for every call: it keeps its connections to the service warm between sentences.
    sdk ??= await import('openai');
    this.client ??= new sdk.default({ apiKey, baseURL: this.options.baseUrl ?? DEFAULT_OPENAI_BASE_URL, maxRetries: 0 });
    const request = { model: options.model || DEFAULT_SPEECH_MODEL, voice: realtimeVoice(options.voiceId || DEFAULT_SPEECH_VOICE) };
    return new OpenAiSynthesisStream(this.client, request, events, this.options.timeoutMs ?? 10_000, apiKey);
  }
}
