import { jest } from '@jest/globals';
import { CallerKeypad } from './caller-keypad.js';

// The lines a live call holds while it cannot take them, and what is left of them at its end.

describe('CallerKeypad', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  it('holds told lines in order until taken, and ends with the held lines and the keys not yet told', () => {
    const keypad: CallerKeypad = new CallerKeypad((line) => keypad.hold(line), { rules: { minGapMs: 0 } });
    for (const key of '12#3') keypad.press(key);
    expect(keypad.held()).toEqual(['[the caller pressed 12#]']);
    expect(keypad.take()).toEqual(['[the caller pressed 12#]']);
    expect(keypad.held()).toEqual([]);
    for (const key of '4#56') keypad.press(key);
    expect(keypad.end()).toEqual(['[the caller pressed 34#]', '[the caller pressed 56]']);
    jest.advanceTimersByTime(10_000);
    expect(keypad.held()).toEqual([]);
    expect(keypad.end()).toEqual([]);
  });

  it('bounds what it holds, by lines or by characters', () => {
    const byLines = new CallerKeypad(() => undefined, { maxLines: 2 });
    for (const line of ['a', 'b', 'c']) byLines.hold(line);
    expect(byLines.held()).toEqual(['a', 'b']);
    const byChars = new CallerKeypad(() => undefined, { maxChars: 5 });
    for (const line of ['abc', 'd', 'e', 'f']) byChars.hold(line);
    // 'abc d' is five characters: nothing more is held.
    expect(byChars.held()).toEqual(['abc', 'd']);
    expect(byChars.press('x')).toBe(false);
  });
});
