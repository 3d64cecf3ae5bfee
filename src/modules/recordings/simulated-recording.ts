import { ulawToPcm } from '../voice/realtime/audio.js';
import { AGENT_VOICE, builtinVoice, CALLER_VOICE } from '../voice/streaming/espeak-voices.js';

const SAMPLE_RATE = 8000;
/** Each side's words are cut to this many characters (about 12 s of speech), so the recording stays short. */
const MAX_CHARACTERS = 200;
/** The pause between the two sides on a mono recording. */
const GAP_SAMPLES = SAMPLE_RATE / 5;

/** A WAV file (RIFF, 16-bit little-endian PCM) of the channels given, interleaved; they are padded to one length. */
export function wavFile(channels: Int16Array[]): Buffer {
  const frames = Math.max(...channels.map((channel) => channel.length));
  const data = Buffer.alloc(frames * channels.length * 2);
  for (let frame = 0; frame < frames; frame++) {
    channels.forEach((channel, index) => data.writeInt16LE(channel[frame] ?? 0, (frame * channels.length + index) * 2));
  }
  const header = Buffer.alloc(44);
  header.write('RIFF', 0, 'ascii');
  header.writeUInt32LE(36 + data.length, 4);
  header.write('WAVE', 8, 'ascii');
  header.write('fmt ', 12, 'ascii');
  header.writeUInt32LE(16, 16);
  header.writeUInt16LE(1, 20); // PCM
  header.writeUInt16LE(channels.length, 22);
  header.writeUInt32LE(SAMPLE_RATE, 24);
  header.writeUInt32LE(SAMPLE_RATE * channels.length * 2, 28);
  header.writeUInt16LE(channels.length * 2, 32);
  header.writeUInt16LE(16, 34);
  header.write('data', 36, 'ascii');
  header.writeUInt32LE(data.length, 40);
  return Buffer.concat([header, data]);
}

/** `text` spoken by the builtin voice (eSpeak NG, in its own thread) in `voice`; nothing for no text. */
async function speech(text: string, voice: string): Promise<Int16Array> {
  const words = text.trim().slice(0, MAX_CHARACTERS);
  return words === '' ? new Int16Array(0) : ulawToPcm((await builtinVoice().speak(words, voice)).ulaw);
}

/**
 * The simulator's recording of an answered call, made from its transcript: the first words the
 * callee heard and the first they said, spoken by the builtin voice (eSpeak NG), the gateway's side
 * in the agent's voice and the callee in another (CALLER_VOICE). Mono: one after the other; dual: the
 * callee on the first channel, the gateway's side on the second, each where it was said.
 */
export async function simulatedRecording(
  heard: readonly string[],
  said: readonly string[],
  channels: 'mono' | 'dual',
): Promise<{ wav: Buffer; durationSeconds: number }> {
  const [agent, callee] = await Promise.all([
    speech(heard.find((line) => line.trim()) ?? 'This is a simulated call.', AGENT_VOICE),
    speech(said.find((line) => line.trim()) ?? '', CALLER_VOICE),
  ]);
  let tracks: Int16Array[];
  if (channels === 'dual') {
    const calleeTrack = new Int16Array(agent.length + GAP_SAMPLES + callee.length);
    calleeTrack.set(callee, agent.length + GAP_SAMPLES);
    tracks = [calleeTrack, agent];
  } else {
    const mixed = new Int16Array(agent.length + GAP_SAMPLES + callee.length);
    mixed.set(agent, 0);
    mixed.set(callee, agent.length + GAP_SAMPLES);
    tracks = [mixed];
  }
  const frames = Math.max(...tracks.map((track) => track.length));
  return { wav: wavFile(tracks), durationSeconds: Math.max(1, Math.round(frames / SAMPLE_RATE)) };
}
