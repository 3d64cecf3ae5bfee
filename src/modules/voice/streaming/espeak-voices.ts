import { Worker } from 'node:worker_threads';

// The builtin voice: eSpeak NG (WebAssembly, @echogarden/espeak-ng-emscripten 0.3.5, GPL-3.0) in one
// thread of its own (espeak-thread.ts), started on first use and shared by every call of the process.
// Synthesis never runs on the event loop; what a call may ask is bounded: an utterance is at most
// MAX_UTTERANCE_CHARACTERS (longer text is spoken in pieces, cut between words), a reply keeps at most
// two at the thread (builtin-spoken-stream.ts), and at most MAX_WAITING utterances wait at once (more is refused, and that call's reply fails; no other's does).
// A thread that dies is started again for the next utterance; the one it was speaking is tried once
// more there, so the call goes on, and fails cleanly (an error, no audio) if it dies again.

/** eSpeak's voices for the two sides of an offline call: the agent, and the simulated caller. */
export const AGENT_VOICE = 'en-us';
export const CALLER_VOICE = 'en-us+f3';
export const MAX_UTTERANCE_CHARACTERS = 600;
/** Every call's replies together (a reply keeps at most two at the thread): 100 concurrent calls of a program fit twice over. */
export const MAX_WAITING = 256;

export type EspeakRequest = { id: number; text: string; voice: string };
export type EspeakReply =
  | { id: number; ok: true; ulaw: Uint8Array; words: { textStart: number; sample: number }[] }
  | { id: number; ok: false; error: string }
  | { ready: true }
  | { failed: string };

/** One utterance: μ-law 8 kHz, and the sample at which each word of the text (its first character) starts. */
export interface Utterance {
  ulaw: Buffer;
  words: { textStart: number; sample: number }[];
}

interface Waiting {
  request: EspeakRequest;
  attempts: number;
  resolve(utterance: Utterance): void;
  reject(error: Error): void;
}

function threadFile(): URL {
  return new URL(import.meta.url.endsWith('.ts') ? './espeak-thread.ts' : './espeak-thread.js', import.meta.url);
}

/** Text cut into pieces of at most `max` characters, between words where it can be. */
export function utterancePieces(text: string, max = MAX_UTTERANCE_CHARACTERS): string[] {
  const pieces: string[] = [];
  let rest = text;
  while (rest.length > max) {
    const space = rest.lastIndexOf(' ', max);
    const cut = space > max / 2 ? space + 1 : max;
    pieces.push(rest.slice(0, cut));
    rest = rest.slice(cut);
  }
  if (rest.length > 0) pieces.push(rest);
  return pieces;
}

export interface EspeakVoicesOptions {
  /** The thread's file (a test's thread that crashes on demand); espeak-thread by default. */
  threadUrl?: URL;
  maxWaiting?: number;
}

export class EspeakVoices {
  private worker: Worker | null = null;
  private nextId = 1;
  /** Sent to the thread, in order; the thread answers in order. */
  private readonly sent = new Map<number, Waiting>();
  private readonly threadUrl: URL;
  private readonly maxWaiting: number;
  /** Threads started (a restart adds one). */
  starts = 0;

  constructor(options: EspeakVoicesOptions = {}) {
    this.threadUrl = options.threadUrl ?? threadFile();
    this.maxWaiting = options.maxWaiting ?? MAX_WAITING;
  }

  /** Speaks `text` in `voice` (longer than an utterance: piece by piece, joined). */
  async speak(text: string, voice: string = AGENT_VOICE): Promise<Utterance> {
    const pieces = utterancePieces(text);
    if (pieces.length === 1) return this.utterance(pieces[0]!, voice);
    const spoken: Utterance[] = [];
    for (const piece of pieces) spoken.push(await this.utterance(piece, voice));
    let samples = 0;
    let characters = 0;
    const words: Utterance['words'] = [];
    spoken.forEach((utterance, index) => {
      for (const word of utterance.words) words.push({ textStart: word.textStart + characters, sample: word.sample + samples });
      samples += utterance.ulaw.length;
      characters += pieces[index]!.length;
    });
    return { ulaw: Buffer.concat(spoken.map((utterance) => utterance.ulaw)), words };
  }

  private utterance(text: string, voice: string): Promise<Utterance> {
    if (this.sent.size >= this.maxWaiting) return Promise.reject(new Error(`The builtin voice is busy: ${this.maxWaiting} utterances are waiting`));
    return new Promise<Utterance>((resolve, reject) => {
      const waiting: Waiting = { request: { id: this.nextId++, text, voice }, attempts: 0, resolve, reject };
      this.sent.set(waiting.request.id, waiting);
      this.post(waiting);
    });
  }

  private post(waiting: Waiting): void {
    waiting.attempts += 1;
    const worker = this.thread();
    // The thread holds the process open only while an utterance waits on it.
    worker.ref();
    worker.postMessage(waiting.request);
  }

  private thread(): Worker {
    if (this.worker) return this.worker;
    this.starts += 1;
    const worker = new Worker(this.threadUrl, { workerData: { start: this.starts } });
    worker.unref();
    worker.on('message', (reply: EspeakReply) => {
      if ('ready' in reply) return;
      if ('failed' in reply) {
        this.lost(worker, new Error(`The builtin voice could not start: ${reply.failed}`), false);
        return;
      }
      const waiting = this.sent.get(reply.id);
      if (!waiting) return;
      this.sent.delete(reply.id);
      if (this.sent.size === 0) worker.unref();
      if (reply.ok) waiting.resolve({ ulaw: Buffer.from(reply.ulaw.buffer, reply.ulaw.byteOffset, reply.ulaw.byteLength), words: reply.words });
      else waiting.reject(new Error(`The builtin voice could not speak: ${reply.error}`));
    });
    worker.on('error', (error: unknown) => this.lost(worker, error instanceof Error ? error : new Error(String(error)), true));
    worker.on('exit', (code) => this.lost(worker, new Error(`The builtin voice’s thread stopped (exit code ${code})`), true));
    this.worker = worker;
    return worker;
  }

  /** The thread died: what it held is tried once more on a new one (or fails, the second time, or when it could not start). */
  private lost(worker: Worker, error: Error, retry: boolean): void {
    if (this.worker !== worker) return;
    this.worker = null;
    void worker.terminate();
    const held = [...this.sent.values()];
    for (const waiting of held) {
      if (retry && waiting.attempts < 2) this.post(waiting);
      else {
        this.sent.delete(waiting.request.id);
        waiting.reject(new Error(`${error.message}; the utterance was not spoken`));
      }
    }
  }

  /** Stops the thread (tests; a process that ends needs nothing: the thread holds it open only while busy). */
  async close(): Promise<void> {
    const worker = this.worker;
    this.worker = null;
    for (const waiting of this.sent.values()) waiting.reject(new Error('The builtin voice was closed'));
    this.sent.clear();
    await worker?.terminate();
  }
}

let shared: EspeakVoices | null = null;

/** The process's one builtin voice (one thread, one copy of eSpeak's 24 MB of data). */
export function builtinVoice(): EspeakVoices {
  shared ??= new EspeakVoices();
  return shared;
}
