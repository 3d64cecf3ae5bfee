import { mapInTurns, TURN_SLICE } from './in-turns.js';

describe('mapInTurns', () => {
  it('maps every item in order, with its index', async () => {
    const items = Array.from({ length: 2 * TURN_SLICE + 3 }, (_, i) => i);
    expect(await mapInTurns(items, (item, index) => item * 10 + (index === item ? 1 : 0))).toEqual(items.map((i) => i * 10 + 1));
    expect(await mapInTurns([], () => 1)).toEqual([]);
  });

  it('lets the event loop turn between two slices, not inside one', async () => {
    const seenAt: number[] = [];
    let mapped = 0;
    const ticker = setInterval(() => seenAt.push(mapped), 0);
    setImmediate(() => seenAt.push(mapped));
    await mapInTurns(
      Array.from({ length: 3 * TURN_SLICE }, (_, i) => i),
      () => mapped++,
    );
    clearInterval(ticker);
    // Something else ran after the first slice and before the last one ended.
    expect(seenAt.some((count) => count >= TURN_SLICE && count < 3 * TURN_SLICE)).toBe(true);
    expect(seenAt.every((count) => count % TURN_SLICE === 0)).toBe(true);
  });
});
