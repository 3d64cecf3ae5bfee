// The caller's key presses (a carrier's `dtmf` events, a web call's keypad), gathered into one line
// the agent's model reads: "[the caller pressed 1234#]". A batch is told `quietMs` after its last
// key, at once on `#`, or `maxWaitMs` after its first key, whichever comes first; never sooner than
// `minGapMs` after the line before (a flood of `#` makes one line a second, not one per key). A batch
// keeps at most `maxKeys` keys; more are counted and the line says how many were not read.

export interface KeypadRules {
  /** A batch is told this long after its last key (no `#`). */
  quietMs: number;
  /** ...and at the latest this long after its first key, however fast keys keep coming. */
  maxWaitMs: number;
  /** Two lines are at least this far apart. */
  minGapMs: number;
  /** Keys one line holds; the rest of the batch is counted, not read. */
  maxKeys: number;
}

export const KEYPAD_RULES: KeypadRules = { quietMs: 2000, maxWaitMs: 5000, minGapMs: 1000, maxKeys: 20 };

const KEY = /^[0-9*#]$/;

/** Whether a carrier's digit is a key of a phone's keypad (0–9, *, #). */
export function isKey(digit: string): boolean {
  return KEY.test(digit);
}

/** The line the model reads (and the transcript stores) for keys the caller pressed. */
export function keypadLine(keys: string, ignored = 0): string {
  return ignored > 0 ? `[the caller pressed ${keys} (and ${ignored} more keys, not read)]` : `[the caller pressed ${keys}]`;
}

export class KeypadPresses {
  private keys = '';
  private ignored = 0;
  private firstAt = 0;
  private lastToldAt = -Infinity;
  private timer: NodeJS.Timeout | null = null;
  private readonly rules: KeypadRules;

  /** `tell` is given each batch's line. */
  constructor(
    private readonly tell: (line: string) => void,
    rules: Partial<KeypadRules> = {},
  ) {
    this.rules = { ...KEYPAD_RULES, ...rules };
  }

  /** One key; false (and nothing kept) for anything that is not a key of a phone's keypad. */
  press(digit: string): boolean {
    if (!isKey(digit)) return false;
    const now = Date.now();
    if (!this.keys && this.ignored === 0) this.firstAt = now;
    if (this.keys.length < this.rules.maxKeys) this.keys += digit;
    else this.ignored += 1;
    const full = this.keys.length >= this.rules.maxKeys;
    const due = Math.max(
      Math.min(digit === '#' || full ? now : now + this.rules.quietMs, this.firstAt + this.rules.maxWaitMs),
      this.lastToldAt + this.rules.minGapMs,
    );
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    // Due now (`#`, or a full line, and the last line a gap ago): told before the next key is read, so keys after a `#` are the next line's.
    if (due <= now) this.flush();
    else {
      this.timer = setTimeout(() => this.flush(), due - now);
      this.timer.unref?.();
    }
    return true;
  }

  /** The call is over: the line of the keys not yet told (to be stored), or null; nothing is told after. */
  end(): string | null {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    const line = this.keys ? keypadLine(this.keys, this.ignored) : null;
    this.keys = '';
    this.ignored = 0;
    return line;
  }

  private flush(): void {
    this.timer = null;
    const line = this.end();
    if (!line) return;
    this.lastToldAt = Date.now();
    this.tell(line);
  }
}
