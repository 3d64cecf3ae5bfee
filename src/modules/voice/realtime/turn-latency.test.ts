import { jest } from '@jest/globals';
import type { CallTurnTiming } from '../../telephony/call-latency.types.js';
import { MAX_RECORDED_TURNS, TurnClock } from './turn-latency.js';

/** performance.now() as the test sets it. */
let now = 1000;
beforeEach(() => {
  now = 1000;
  jest.spyOn(performance, 'now').mockImplementation(() => now);
});
afterEach(() => jest.restoreAllMocks());

/** One reply's first audio: it arrives after `providerMs`, is written `gatewayMs` later. */
function reply(clock: TurnClock, responseId: string, providerMs: number, gatewayMs: number): void {
  now += providerMs;
  const first = clock.audio(responseId);
  now += gatewayMs;
  if (first !== null) clock.sent(first);
}

describe('TurnClock', () => {
  it('times a turn from the end of speech to the first audio written, the provider’s and the gateway’s shares apart', () => {
    const seen: CallTurnTiming[] = [];
    const clock = new TurnClock((turn) => seen.push(turn));
    clock.begin(true, null);
    reply(clock, 'resp_1', 250, 0.5);
    // Later deltas of the same reply are not a turn.
    reply(clock, 'resp_1', 5, 5);
    expect(seen).toEqual([{ endOfSpeechAt: expect.any(String), totalMs: 250.5, providerMs: 250, gatewayMs: 0.5 }]);
    expect(clock.summary('openai')).toEqual({ provider: 'openai', turns: seen, p50Ms: 250.5, maxMs: 250.5, firstAudioMs: null });
  });

  it('does not count audio of the reply in progress, or of the last one heard, as the next turn’s', () => {
    const clock = new TurnClock();
    clock.begin(true, null);
    reply(clock, 'resp_1', 100, 1);
    // The caller speaks again while resp_1's audio still arrives, and resp_2 is in progress.
    clock.begin(true, 'resp_2');
    reply(clock, 'resp_1', 10, 1);
    reply(clock, 'resp_2', 10, 1);
    reply(clock, 'resp_3', 300, 2);
    expect(clock.summary('openai')!.turns.map((turn) => turn.providerMs)).toEqual([100, 322]);
  });

  it('a turn our own request started has no end of speech; a turn with no reply is replaced by the next', () => {
    const clock = new TurnClock();
    clock.begin(true, null);
    now += 5000;
    clock.begin(false, 'resp_1');
    reply(clock, 'resp_2', 80, 1);
    const [turn] = clock.summary('openai')!.turns;
    expect(turn).toEqual({ endOfSpeechAt: null, totalMs: 81, providerMs: 80, gatewayMs: 1 });
  });

  it('ends the provider’s share when the audio arrived, as the provider’s session says (its transcoding is the gateway’s)', () => {
    const clock = new TurnClock();
    clock.begin(true, null);
    now += 200;
    const arrived = now;
    // 3 ms converting the audio before the bridge sees it.
    now += 3;
    const first = clock.audio('turn-0', arrived);
    now += 1;
    clock.sent(first!);
    expect(clock.summary('google')!.turns[0]).toMatchObject({ providerMs: 200, gatewayMs: 4, totalMs: 204 });
  });

  it('answers the lower middle total as the median and keeps the first MAX_RECORDED_TURNS turns', () => {
    const clock = new TurnClock();
    expect(clock.summary('openai')).toBeNull();
    for (const [index, providerMs] of [400, 100, 300, 200].entries()) {
      clock.begin(true, null);
      reply(clock, `resp_${index}`, providerMs, 0);
    }
    expect(clock.summary('openai')).toMatchObject({ p50Ms: 200, maxMs: 400 });
    for (let index = 4; index < MAX_RECORDED_TURNS + 10; index++) {
      clock.begin(true, null);
      reply(clock, `resp_${index}`, 1, 0);
    }
    expect(clock.summary('openai')!.turns).toHaveLength(MAX_RECORDED_TURNS);
  });
});
