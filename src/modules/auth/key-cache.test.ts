import type { ApiKey } from './api-key.entity.js';
import { KeyCache } from './key-cache.js';

const key = (id: string) => ({ id }) as ApiKey;

describe('KeyCache', () => {
  let now = 0;
  const clock = () => now;
  beforeEach(() => {
    now = 1_000;
  });

  it('keeps a key for its TTL and not a millisecond more', () => {
    const cache = new KeyCache(500, 10, clock);
    cache.set('a', key('1'), cache.mark());
    now += 499;
    expect(cache.get('a')?.id).toBe('1');
    now += 1;
    expect(cache.get('a')).toBeUndefined();
  });

  it('keeps nothing with a TTL of 0', () => {
    const cache = new KeyCache(0, 10, clock);
    cache.set('a', key('1'), cache.mark());
    expect(cache.get('a')).toBeUndefined();
  });

  it('forgets everything on clear()', () => {
    const cache = new KeyCache(500, 10, clock);
    cache.set('a', key('1'), cache.mark());
    cache.set('b', key('2'), cache.mark());
    cache.clear();
    expect(cache.get('a')).toBeUndefined();
    expect(cache.get('b')).toBeUndefined();
  });

  it('does not keep a lookup that started before a clear (it may have read the row the change replaced)', () => {
    const cache = new KeyCache(500, 10, clock);
    const mark = cache.mark();
    cache.clear();
    cache.set('a', key('stale'), mark);
    expect(cache.get('a')).toBeUndefined();
    cache.set('a', key('fresh'), cache.mark());
    expect(cache.get('a')?.id).toBe('fresh');
  });

  it('holds at most maxEntries, dropping the oldest first', () => {
    const cache = new KeyCache(500, 2, clock);
    cache.set('a', key('1'), cache.mark());
    cache.set('b', key('2'), cache.mark());
    cache.set('c', key('3'), cache.mark());
    expect(cache.get('a')).toBeUndefined();
    expect(cache.get('b')?.id).toBe('2');
    expect(cache.get('c')?.id).toBe('3');
  });
});
