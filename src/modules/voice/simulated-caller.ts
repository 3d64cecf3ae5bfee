import type { AnsweredBy } from '../telephony/carrier.js';
import type { VoiceAction } from './voice-actions.js';
import type { VoiceEngine } from './voice-session.js';
import type { SimulatedStreams } from './streaming/simulated-stream.js';

/** What the simulated caller says when its program sets nothing (the same lines every run). */
export const DEFAULT_UTTERANCES = ['Hello, who is calling?', 'Yes, that works for me.', 'Thank you, goodbye.'];

/** An utterance of keys only is pressed as DTMF. */
const KEYS = /^[0-9*#]+$/;

/** What a simulated call heard, and how it ended. */
export interface SimulatedConversation {
  heard: string[];
  transfers: string[];
  /** A streaming call: how many times the caller spoke over the agent. */
  bargeIns: number;
  /** What the caller said, in order (silences left out). */
  said: string[];
  /** Where in `heard` and `said` a recording the call started (consent given) begins; null when it started none. */
  recordedFrom: { heard: number; said: number } | null;
}

/**
 * Plays a caller against the voice engine, in-process, as the fake Twilio does over HTTP: the
 * answer, then each gather answered with the next utterance (silence once they run out), each
 * redirect followed, until the call hangs up, transfers or streams. A call that streams to a
 * streaming agent goes on over the simulated media stream with the lines left (`streams`); one that
 * streams to a speech-to-speech agent ends there (the simulator has no speech-to-speech model).
 */
export async function playCaller(
  engine: VoiceEngine,
  callId: string,
  answeredBy: AnsweredBy,
  utterances: readonly string[],
  streams?: SimulatedStreams,
): Promise<SimulatedConversation> {
  const lines = [...utterances];
  const heard: string[] = [];
  const transfers: string[] = [];
  const said: string[] = [];
  let recordedFrom: SimulatedConversation['recordedFrom'] = null;
  let bargeIns = 0;
  let actions: VoiceAction[] = await engine.answer(callId, answeredBy);
  for (let hops = 0; hops < 100; hops++) {
    let next: (() => Promise<VoiceAction[]>) | null = null;
    for (const action of actions) {
      if (action.kind === 'say') heard.push(action.text);
      else if (action.kind === 'gather') {
        if (action.prompt) heard.push(action.prompt);
        const line = lines.shift()?.trim() ?? '';
        if (line) said.push(line);
        const keys = KEYS.test(line);
        next = () => engine.gather(callId, { speech: keys ? null : line || null, digits: keys ? line : null, silence: !line });
        break;
      } else if (action.kind === 'redirect') {
        next = () => engine.reply(callId);
        break;
      } else if (action.kind === 'dial') transfers.push(action.number);
      else if (action.kind === 'record') recordedFrom ??= { heard: heard.length, said: said.length };
      else if (action.kind === 'stream' && streams) {
        const streamed = await streams.play(callId, lines);
        heard.push(...(streamed?.heard ?? []));
        said.push(...(streamed?.said ?? []));
        bargeIns += streamed?.bargeIns ?? 0;
      }
      if (action.kind === 'dial' || action.kind === 'hangup' || action.kind === 'stream') break;
    }
    if (!next) break;
    actions = await next();
  }
  return { heard, transfers, bargeIns, said, recordedFrom };
}
