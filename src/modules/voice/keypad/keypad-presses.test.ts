import { jest } from '@jest/globals';
import { keypadLine, KeypadPresses } from './keypad-presses.js';

// How the caller's keys are gathered into lines, on jest's clock.

describe('KeypadPresses', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  function keypad(rules = {}) {
    const told: string[] = [];
    return { told, keys: new KeypadPresses((line) => told.push(line), rules) };
  }

  it('tells keys ended by # at once, as one line; keys after the # are the next line', () => {
    const { told, keys } = keypad({ minGapMs: 1000 });
    for (const key of '1234#56') keys.press(key);
    expect(told).toEqual(['[the caller pressed 1234#]']);
    jest.advanceTimersByTime(2000);
    expect(told).toEqual(['[the caller pressed 1234#]', '[the caller pressed 56]']);
  });

  it('tells keys without # once quietMs passed after the last, and ignores what is not a key', () => {
    const { told, keys } = keypad({ quietMs: 2000 });
    expect(keys.press('x')).toBe(false);
    keys.press('7');
    jest.advanceTimersByTime(1500);
    keys.press('0');
    jest.advanceTimersByTime(1999);
    expect(told).toEqual([]);
    jest.advanceTimersByTime(1);
    expect(told).toEqual(['[the caller pressed 70]']);
  });

  it('bounds a flood: at most maxKeys a line, the rest counted; a line at least minGapMs after the one before; one at the latest maxWaitMs after its first key', () => {
    const { told, keys } = keypad({ quietMs: 2000, maxWaitMs: 5000, minGapMs: 1000, maxKeys: 20 });
    // 100 keys a second for three seconds, a # among every ten.
    for (let index = 0; index < 300; index++) {
      keys.press(index % 10 === 9 ? '#' : String(index % 10));
      jest.advanceTimersByTime(10);
    }
    jest.advanceTimersByTime(5000);
    expect(told.length).toBeGreaterThanOrEqual(3);
    expect(told.length).toBeLessThanOrEqual(4);
    expect(told[0]).toBe('[the caller pressed 012345678#]');
    expect(told.slice(1).every((line) => /^\[the caller pressed [0-9#]{20} \(and \d+ more keys, not read\)\]$/.test(line))).toBe(true);
    // Keys with no # and never quiet for quietMs: still told, maxWaitMs after the first.
    const slow = keypad({ quietMs: 2000, maxWaitMs: 5000 });
    for (let index = 0; index < 15; index++) {
      slow.keys.press('5');
      jest.advanceTimersByTime(400);
    }
    expect(slow.told).toEqual([keypadLine('5'.repeat(13))]);
    jest.advanceTimersByTime(2000);
    expect(slow.told).toEqual([keypadLine('5'.repeat(13)), keypadLine('55')]);
  });

  it('end() gives the keys not yet told and stops the timer', () => {
    const { told, keys } = keypad();
    keys.press('9');
    expect(keys.end()).toBe('[the caller pressed 9]');
    jest.advanceTimersByTime(10_000);
    expect(told).toEqual([]);
    expect(keys.end()).toBeNull();
  });
});
