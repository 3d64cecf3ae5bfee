import { setImmediate as nextTurn } from 'node:timers/promises';

/** Items of a list mapped between two turns of the event loop: a 10,000-row import's per-row work in slices. */
export const TURN_SLICE = 500;

/**
 * `items` mapped by `map`, TURN_SLICE at a time with a turn of the event loop between two slices, so
 * that work per row on a large list (reading a phone number, say) never holds every tenant's requests
 * for the whole list at once.
 */
export async function mapInTurns<T, U>(items: readonly T[], map: (item: T, index: number) => U): Promise<U[]> {
  const out: U[] = [];
  for (let index = 0; index < items.length; index++) {
    if (index > 0 && index % TURN_SLICE === 0) await nextTurn();
    out.push(map(items[index]!, index));
  }
  return out;
}
