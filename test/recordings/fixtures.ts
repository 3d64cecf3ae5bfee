import { pcmToUlaw } from '../../src/modules/voice/realtime/audio.js';
import { decodeSpeech } from '../../src/modules/voice/streaming/builtin-speech.js';

/** A WAV's format and its samples per channel (16-bit PCM only). */
export function readWav(bytes: Buffer): { channels: number; sampleRate: number; samples: Int16Array[] } {
  expect(bytes.subarray(0, 4).toString('ascii')).toBe('RIFF');
  expect(bytes.subarray(8, 12).toString('ascii')).toBe('WAVE');
  const channels = bytes.readUInt16LE(22);
  const sampleRate = bytes.readUInt32LE(24);
  expect(bytes.readUInt16LE(34)).toBe(16);
  const data = bytes.subarray(44, 44 + bytes.readUInt32LE(40));
  const frames = data.length / (2 * channels);
  const samples = Array.from({ length: channels }, (_, channel) => Int16Array.from({ length: frames }, (_unused, frame) => data.readInt16LE((frame * channels + channel) * 2)));
  return { channels, sampleRate, samples };
}

/** What the builtin modem's speech in a channel says (the simulator's recordings are made of it). */
export function wordsIn(samples: Int16Array): string {
  return decodeSpeech(pcmToUlaw(samples)).join(' ');
}

/** The bytes of a download. */
export async function download(baseUrl: string, path: string, headers: Record<string, string>): Promise<{ status: number; type: string | null; length: string | null; body: Buffer; json: Record<string, unknown> | null }> {
  const res = await fetch(`${baseUrl}${path}`, { headers });
  const body = Buffer.from(await res.arrayBuffer());
  const type = res.headers.get('content-type');
  return { status: res.status, type, length: res.headers.get('content-length'), body, json: type?.includes('json') ? JSON.parse(body.toString('utf8')) : null };
}
