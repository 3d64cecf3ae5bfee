import { ulawToPcm } from '../../src/modules/voice/realtime/audio.js';
import { AGENT_VOICE, builtinVoice } from '../../src/modules/voice/streaming/espeak-voices.js';
import { isSpeech, speechReport } from '../support/speech-detector.js';

/** A WAV's format and its samples per channel (16-bit PCM only). */
export function readWav(bytes: Buffer): { channels: number; sampleRate: number; samples: Int16Array[] } {
  expect(bytes.subarray(0, 4).toString('ascii')).toBe('RIFF');
  expect(bytes.subarray(8, 12).toString('ascii')).toBe('WAVE');
  const channels = bytes.readUInt16LE(22);
  const sampleRate = bytes.readUInt32LE(24);
  expect(bytes.readUInt16LE(34)).toBe(16);
  const data = bytes.subarray(44, 44 + bytes.readUInt32LE(40));
  const frames = data.length / (2 * channels);
  const samples = Array.from({ length: channels }, (_, channel) =>
    Int16Array.from({ length: frames }, (_unused, frame) => data.readInt16LE((frame * channels + channel) * 2)),
  );
  return { channels, sampleRate, samples };
}

/** Loudness per 20 ms frame (RMS), the outline of what a channel says. */
function envelope(samples: Int16Array): number[] {
  const out: number[] = [];
  for (let start = 0; start + 160 <= samples.length; start += 160) {
    let sum = 0;
    for (let i = start; i < start + 160; i++) sum += samples[i]! * samples[i]!;
    out.push(Math.sqrt(sum / 160));
  }
  return out;
}

/**
 * Whether a channel is speech saying `text` in `voice`: the speech detector says speech, and its
 * loudness outline follows the builtin voice's own rendering of the text (same length within 60 ms,
 * correlation over 0.9) from its first sound on. eSpeak's audio differs by a few samples from one
 * rendering to the next, so no bytes are compared.
 */
export async function says(samples: Int16Array, text: string, voice = AGENT_VOICE): Promise<{ speech: boolean; sameLength: boolean; correlation: number }> {
  const fromFirstSound = (audio: Int16Array) =>
    audio.subarray(
      Math.max(
        0,
        audio.findIndex((sample) => Math.abs(sample) > 64),
      ),
    );
  const heard = envelope(fromFirstSound(samples));
  const reference = envelope(fromFirstSound(ulawToPcm((await builtinVoice().speak(text, voice)).ulaw)));
  while (heard.length > 0 && heard[heard.length - 1]! < 8) heard.pop();
  while (reference.length > 0 && reference[reference.length - 1]! < 8) reference.pop();
  const n = Math.min(heard.length, reference.length);
  const mean = (values: number[]) => values.slice(0, n).reduce((sum, value) => sum + value, 0) / n;
  const [mh, mr] = [mean(heard), mean(reference)];
  let cross = 0;
  let vh = 0;
  let vr = 0;
  for (let i = 0; i < n; i++) {
    cross += (heard[i]! - mh) * (reference[i]! - mr);
    vh += (heard[i]! - mh) ** 2;
    vr += (reference[i]! - mr) ** 2;
  }
  return { speech: isSpeech(speechReport(samples)), sameLength: Math.abs(heard.length - reference.length) <= 3, correlation: cross / Math.sqrt(vh * vr) };
}

/** The bytes of a download. */
export async function download(
  baseUrl: string,
  path: string,
  headers: Record<string, string>,
): Promise<{ status: number; type: string | null; length: string | null; body: Buffer; json: Record<string, unknown> | null }> {
  const res = await fetch(`${baseUrl}${path}`, { headers });
  const body = Buffer.from(await res.arrayBuffer());
  const type = res.headers.get('content-type');
  return { status: res.status, type, length: res.headers.get('content-length'), body, json: type?.includes('json') ? JSON.parse(body.toString('utf8')) : null };
}
