// The caller's keypad on a live call, as both live sessions keep it (the speech-to-speech bridge,
// the streaming call): the presses gathered into lines (keypad-presses.ts), and the lines told while
// the call cannot take them yet (the provider's session still opening; the agent holding the floor),
// held in order and bounded. When the call ends, what is held and the keys not yet told are what
// the transcript keeps.

import { KeypadPresses, type KeypadRules } from './keypad-presses.js';

export interface CallerKeypadOptions {
  rules?: Partial<KeypadRules>;
  /** Lines held at the most; the rest are dropped. */
  maxLines?: number;
  /** Characters the held lines (joined by a space) reach before the rest are dropped. */
  maxChars?: number;
}

export class CallerKeypad {
  private readonly presses: KeypadPresses;
  private lines: string[] = [];
  private readonly maxLines: number;
  private readonly maxChars: number;

  /** `told` is given each batch's line (it may hold it). */
  constructor(told: (line: string) => void, options: CallerKeypadOptions = {}) {
    this.presses = new KeypadPresses(told, options.rules);
    this.maxLines = options.maxLines ?? Infinity;
    this.maxChars = options.maxChars ?? Infinity;
  }

  /** One key; false for anything that is not a key of a phone's keypad. */
  press(digit: string): boolean {
    return this.presses.press(digit);
  }

  /** Keeps a told line until the call can take it (lines come a second apart at most: a few). */
  hold(line: string): void {
    if (this.lines.length < this.maxLines && this.lines.join(' ').length < this.maxChars) this.lines.push(line);
  }

  /** The lines held, in order. */
  held(): readonly string[] {
    return this.lines;
  }

  /** The lines held, in order; none are held after. */
  take(): string[] {
    return this.lines.splice(0);
  }

  /** The call is over: the lines held and those of the keys not yet told; nothing is told after. */
  end(): string[] {
    const left = this.presses.end();
    return left === null ? this.take() : [...this.take(), left];
  }
}
