// A row of the bench's voice section (issue #45): the interruption false positives on a scripted
// back-channel track. Streaming calls whose agent opens with a long first message; 1 s into it each
// caller says "Mhm." (300 ms of speech, then silence; the Deepgram double hears those words). Three
// tracks in the same run, the same calls and timing each:
//
// - back-channel, the agent's default interruptions (mode words): a cut here is a false positive;
// - back-channel, mode `any` (any recognized word cuts, the gateway before back-channels were
//   understood): the baseline, whose every call is cut;
// - a real interruption ("Wait, stop, I want to change the day.", 800 ms of speech), mode words:
//   the true positives the default keeps.
//
// The column is the false positives against the baseline's cuts (their ratio: 0 is the target),
// beside the real interruptions still cut. A call is read once its caller's words are stored (a
// back-channel after the reply it did not cut; a turn at once): by then the gateway has decided.
import { performance } from 'node:perf_hooks';
import type { ApiClient } from './client.js';
import { callerSpeech, type MediaStreamClient } from '../support/media-stream-client.js';

/** The agents' first message: long enough (several seconds of audio) that the caller speaks over it. */
export const BACK_CHANNEL_GREETING =
  'Hello, this is Ada from the Acme shop. I am calling about your delivery, which we would like to move to Monday morning between nine and eleven, if that suits you.';
export const BACK_CHANNEL_WORDS = 'Mhm.';
export const INTERRUPTION_WORDS = 'Wait, stop, I want to change the day.';
/** How long into the first message the caller speaks. */
const INTO_GREETING_MS = 1000;

export type BackChannelTrack = 'backChannel' | 'backChannelAny' | 'interruption';

export const BACK_CHANNEL_TRACKS: { track: BackChannelTrack; mode: 'words' | 'any'; words: string; speechMs: number }[] = [
  { track: 'backChannel', mode: 'words', words: BACK_CHANNEL_WORDS, speechMs: 300 },
  { track: 'backChannelAny', mode: 'any', words: BACK_CHANNEL_WORDS, speechMs: 300 },
  { track: 'interruption', mode: 'words', words: INTERRUPTION_WORDS, speechMs: 800 },
];

export interface BackChannelNumbers {
  calls: number;
  /** Per track: calls whose reply the gateway cut (a `clear` sent to the caller), and calls never read (no words stored in time). */
  cut: Record<BackChannelTrack, number>;
  unread: Record<BackChannelTrack, number>;
  /** False positives (back-channels cut, mode words) ÷ the baseline's cuts (mode any) in the same run. */
  falsePositiveRatio: number | null;
}

/** One caller of a track, once its media stream has started; `says` is set on its Deepgram session. */
export interface BackChannelCall {
  id: string;
  client: MediaStreamClient;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Speaks over the first message once it has played INTO_GREETING_MS, then waits for the caller's words to be stored; true: the reply was cut. */
export async function runBackChannelCall(api: ApiClient, call: BackChannelCall, speechMs: number, timeoutMs = 20_000): Promise<boolean | null> {
  const { client } = call;
  await client.waitFor(
    () => {
      const first = client.frames[0];
      return first !== undefined && first.startsAt + INTO_GREETING_MS <= Date.now();
    },
    'the first message playing',
    timeoutMs,
  );
  // In real time, as a caller speaks.
  await client.sendAudio(callerSpeech(speechMs, 700), 20);
  const deadline = performance.now() + timeoutMs;
  let conversationId: string | null = null;
  while (performance.now() < deadline) {
    conversationId ??= (await api.get<{ conversationId: string | null }>(`/api/calls/${call.id}`)).conversationId;
    if (conversationId) {
      const messages = await api.get<{ data: { role: string }[] }>(`/api/conversations/${conversationId}/messages?limit=20`);
      if (messages.data.some((message) => message.role === 'user')) return client.events('clear').length > 0;
    }
    await sleep(100);
  }
  return null;
}

export function backChannelNumbers(calls: number, results: Record<BackChannelTrack, (boolean | null)[]>): BackChannelNumbers {
  const count = (track: BackChannelTrack, value: boolean | null) => results[track].filter((result) => result === value).length;
  const cut = { backChannel: count('backChannel', true), backChannelAny: count('backChannelAny', true), interruption: count('interruption', true) };
  const unread = { backChannel: count('backChannel', null), backChannelAny: count('backChannelAny', null), interruption: count('interruption', null) };
  return { calls, cut, unread, falsePositiveRatio: cut.backChannelAny > 0 ? cut.backChannel / cut.backChannelAny : null };
}

export function backChannelMarkdown(numbers: BackChannelNumbers | null): string {
  if (!numbers) return '';
  const { calls, cut, unread } = numbers;
  const ratio = numbers.falsePositiveRatio === null ? 'n/a' : `${numbers.falsePositiveRatio.toFixed(2)}${numbers.falsePositiveRatio === 0 ? ' ✓' : ' ✗'}`;
  return [
    `Back-channels (streaming, ${calls} concurrent calls a track): each caller says "${BACK_CHANNEL_WORDS}" ${INTO_GREETING_MS} ms into the agent's long first message; ` +
      `the baseline is the same track with interruptions mode \`any\` (every recognized word cuts), and a real interruption ("${INTERRUPTION_WORDS}") is still to cut.`,
    '',
    '| calls | back-channels cut (false positives, mode words) | back-channels cut (baseline, mode any) | false positives ÷ baseline (target 0) | real interruptions cut (mode words) | calls not read |',
    '|---:|---:|---:|---:|---:|---:|',
    `| ${calls} | ${cut.backChannel} | ${cut.backChannelAny} | ${ratio} | ${cut.interruption} of ${calls}${cut.interruption === calls ? ' ✓' : ' ✗'} | ${unread.backChannel + unread.backChannelAny + unread.interruption} |`,
  ].join('\n');
}
