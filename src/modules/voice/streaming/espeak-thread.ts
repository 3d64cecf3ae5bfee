// The builtin voice's own thread: eSpeak NG, compiled to WebAssembly (@echogarden/espeak-ng-emscripten,
// GPL-3.0, loaded unmodified from node_modules at run time), speaks text here, so that no synthesis
// runs on the main thread's event loop. The main thread talks to it through EspeakVoices
// (espeak-voices.ts); each utterance comes back as μ-law 8 kHz with where each word starts.
//
// This file imports packages only (and types), so Node runs it as it is: as TypeScript with its types
// stripped when the tests run the sources, as the built JavaScript from dist/ otherwise.
import { parentPort } from 'node:worker_threads';
import alawmulaw from 'alawmulaw';
import type { EspeakReply, EspeakRequest } from './espeak-voices.js';

const port = parentPort!;
/** eSpeak NG's own rate. */
const FROM_HZ = 22_050;
const TO_HZ = 8_000;

interface EspeakEvent {
  type: string;
  text_position: number;
  audio_position: number;
}
interface EspeakWorker {
  set_voice(name: string, language: string, gender: number, age: number, variant: number): number;
  set_rate(wordsPerMinute: number): void;
  synthesize(text: string, callback: (samples: Int16Array | null, events: EspeakEvent[]) => boolean): void;
}

/**
 * A low-pass for 22.05 kHz below the telephone band's top (3.4 kHz), so that nothing aliases when the
 * samples are taken at 8 kHz: a Blackman-windowed sinc, 63 taps (about 2.9 ms).
 */
const TAPS = 63;
const CUTOFF = 3_500 / FROM_HZ;
const FILTER = (() => {
  const h = new Float64Array(TAPS);
  const middle = (TAPS - 1) / 2;
  let sum = 0;
  for (let i = 0; i < TAPS; i++) {
    const x = i - middle;
    const sinc = x === 0 ? 2 * CUTOFF : Math.sin(2 * Math.PI * CUTOFF * x) / (Math.PI * x);
    h[i] = sinc * (0.42 - 0.5 * Math.cos((2 * Math.PI * i) / (TAPS - 1)) + 0.08 * Math.cos((4 * Math.PI * i) / (TAPS - 1)));
    sum += h[i]!;
  }
  for (let i = 0; i < TAPS; i++) h[i]! /= sum;
  return h;
})();

/** 22.05 kHz samples → 8 kHz: low-passed, then read between samples (linear) at each output instant. */
export function to8k(input: Int16Array): Int16Array {
  const filtered = new Float64Array(input.length);
  const middle = (TAPS - 1) / 2;
  for (let n = 0; n < input.length; n++) {
    let sum = 0;
    for (let k = 0; k < TAPS; k++) {
      const at = n + middle - k;
      if (at >= 0 && at < input.length) sum += FILTER[k]! * input[at]!;
    }
    filtered[n] = sum;
  }
  const out = new Int16Array(Math.floor((input.length * TO_HZ) / FROM_HZ));
  for (let m = 0; m < out.length; m++) {
    const position = (m * FROM_HZ) / TO_HZ;
    const i = Math.floor(position);
    const fraction = position - i;
    const value = filtered[i]! * (1 - fraction) + (filtered[i + 1] ?? 0) * fraction;
    out[m] = value > 32767 ? 32767 : value < -32768 ? -32768 : Math.round(value);
  }
  return out;
}

interface Engine {
  worker: EspeakWorker;
  /** The module's memory (the view is replaced when it grows, so it is read each time). */
  heap(): Uint8Array;
}

async function load(): Promise<Engine> {
  // The package ships no types: what this file uses of its Emscripten module is typed here.
  // @ts-expect-error -- no declaration file
  const { default: createModule } = (await import('@echogarden/espeak-ng-emscripten')) as unknown as {
    default: () => Promise<{ eSpeakNGWorker: new () => EspeakWorker; HEAPU8: Uint8Array }>;
  };
  const module = await createModule();
  return { worker: new module.eSpeakNGWorker(), heap: () => module.HEAPU8 };
}

/**
 * eSpeak carries state from one utterance to the next (its pitch flutter, its filters), so the same
 * text would sound a few samples different each time, in an order set by every call of the process.
 * Each utterance therefore starts from the engine's memory as it was just after its voice was set
 * (one copy per voice, 17 MB): the same text in the same voice is the same audio, byte for byte,
 * whatever was said before — what keeps the offline campaigns deterministic.
 */
const snapshots = new Map<string, Uint8Array>();

function speak(engine: Engine, request: EspeakRequest): Extract<EspeakReply, { id: number }> {
  const snapshot = snapshots.get(request.voice);
  if (snapshot) engine.heap().set(snapshot);
  else {
    if (engine.worker.set_voice(request.voice, '', 0, 0, 0) !== 0) throw new Error(`eSpeak NG has no voice ${request.voice}`);
    snapshots.set(request.voice, engine.heap().slice());
  }
  const parts: Int16Array[] = [];
  const words: { textStart: number; sample: number }[] = [];
  let length = 0;
  engine.worker.synthesize(request.text, (samples, events) => {
    if (samples && samples.length > 0) {
      parts.push(samples);
      length += samples.length;
    }
    for (const event of events) {
      // Positions: the text's characters from 1, the audio's milliseconds.
      if (event.type === 'word') words.push({ textStart: Math.max(0, event.text_position - 1), sample: event.audio_position * (TO_HZ / 1000) });
    }
    return false;
  });
  const all = new Int16Array(length);
  let offset = 0;
  for (const part of parts) {
    all.set(part, offset);
    offset += part.length;
  }
  const ulaw = alawmulaw.mulaw.encode(to8k(all));
  return { id: request.id, ok: true, ulaw, words };
}

const engine = load();
engine.then(
  () => port.postMessage({ ready: true } satisfies EspeakReply),
  (error: unknown) => port.postMessage({ failed: error instanceof Error ? error.message : String(error) } satisfies EspeakReply),
);
port.on('message', (request: EspeakRequest) => {
  void engine.then((loaded) => {
    let reply: Extract<EspeakReply, { id: number }>;
    try {
      reply = speak(loaded, request);
    } catch (error) {
      reply = { id: request.id, ok: false, error: error instanceof Error ? error.message : String(error) };
    }
    port.postMessage(reply, reply.ok ? [reply.ulaw.buffer as ArrayBuffer] : []);
  });
});
