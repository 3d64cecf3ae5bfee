import type { CallingWindow } from '../program.types.js';

const ISO_WEEKDAY: Record<string, number> = { Mon: 1, Tue: 2, Wed: 3, Thu: 4, Fri: 5, Sat: 6, Sun: 7 };
const formatters = new Map<string, Intl.DateTimeFormat>();

/** One formatter per zone: building them is the expensive part. An unknown zone reads as UTC. */
function formatter(timeZone: string): Intl.DateTimeFormat {
  let found = formatters.get(timeZone);
  // Stryker disable next-line ConditionalExpression: equivalent, the cache only saves building a formatter again
  if (!found) {
    const options = { weekday: 'short', hour: '2-digit', minute: '2-digit', hourCycle: 'h23' } as const;
    try {
      found = new Intl.DateTimeFormat('en-US', { ...options, timeZone });
    } catch {
      found = new Intl.DateTimeFormat('en-US', { ...options, timeZone: 'UTC' });
    }
    // Stryker disable next-line all: equivalent, the cache only saves building a formatter again
    formatters.set(timeZone, found);
  }
  return found;
}

/** The ISO weekday (1 = Monday) and minutes since midnight at `now` in `timeZone`. */
export function localTime(now: Date, timeZone: string | null | undefined): { weekday: number; minutes: number } {
  // Stryker disable next-line StringLiteral: equivalent, a zone of '' is refused by Intl and read as UTC all the same
  const parts = formatter(timeZone || 'UTC').formatToParts(now);
  // Stryker disable next-line OptionalChaining,StringLiteral: equivalent, formatToParts always answers weekday, hour and minute
  const part = (type: string) => parts.find((p) => p.type === type)?.value ?? '';
  return { weekday: ISO_WEEKDAY[part('weekday')], minutes: Number(part('hour')) * 60 + Number(part('minute')) };
}

function minutesOf(hhmm: string): number {
  const [hours, minutes] = hhmm.split(':').map(Number);
  return hours * 60 + minutes;
}

/**
 * True when `now`, read on the contact's own clock (UTC when it has no zone), falls on one of
 * the window's weekdays and in [startTime, endTime). An endTime of 24:00 (1440 minutes) takes
 * the day to its end. No window means any time.
 */
export function isWithinWindow(now: Date, timeZone: string | null | undefined, window: CallingWindow | null | undefined): boolean {
  if (!window) return true;
  const local = localTime(now, timeZone);
  if (!window.daysOfWeek.includes(local.weekday)) return false;
  return local.minutes >= minutesOf(window.startTime) && local.minutes < minutesOf(window.endTime);
}

const MINUTE = 60_000;
/** How far either side of a start that a spring-forward skips its jump is looked for (more than any daylight-saving shift). */
const JUMP_SEARCH_MS = 180 * MINUTE;

/**
 * The first instant at or after `from` inside the window on the contact's clock: `from` itself when
 * it is inside (or there is no window), else the next startTime on one of its weekdays; a startTime
 * that a spring-forward skips opens at the jump when the jump lands inside the window, and one that
 * a fall-back repeats at its first occurrence after `from`. Null when the window never opens.
 */
export function nextWindowOpening(from: Date, timeZone: string | null | undefined, window: CallingWindow | null | undefined): Date | null {
  if (!window || isWithinWindow(from, timeZone, window)) return from;
  const start = minutesOf(window.startTime);
  const minute = new Date(Math.floor(from.getTime() / MINUTE) * MINUTE);
  const local = localTime(minute, timeZone);
  for (let day = 0; day <= 7; day++) {
    // Stryker disable next-line ConditionalExpression: equivalent, a day off the window finds no opening either (this only saves the search)
    if (!window.daysOfWeek.includes(((local.weekday - 1 + day) % 7) + 1)) continue;
    const opening = openingOn(new Date(minute.getTime() + (day * 1440 + start - local.minutes) * MINUTE), from, start, timeZone, window);
    if (opening) return opening;
  }
  return null;
}

/** The first instant after `from` near `guess` (startTime as if the zone's offset never changed) at which the window opens. */
function openingOn(guess: Date, from: Date, start: number, timeZone: string | null | undefined, window: CallingWindow): Date | null {
  const opens = (at: Date) =>
    // Stryker disable next-line EqualityOperator: equivalent, `from` is outside the window, so it never opens there
    at.getTime() > from.getTime() && isWithinWindow(at, timeZone, window) && !isWithinWindow(new Date(at.getTime() - MINUTE), timeZone, window);
  let at = guess;
  // Moved by what the local clock reads there, until it reads startTime (an offset changed between `from` and then).
  // Stryker disable next-line EqualityOperator: equivalent, a fourth step never runs (two converge, or the start is skipped and they alternate)
  for (let step = 0; step < 3; step++) {
    const drift = ((((localTime(at, timeZone).minutes - start) % 1440) + 2160) % 1440) - 720;
    if (drift === 0) break;
    at = new Date(at.getTime() - drift * MINUTE);
  }
  // A start inside the hour a fall-back repeats happens twice: the first after `from` (the second, when `from` is between them).
  for (const hours of [0, 1]) {
    const candidate = new Date(at.getTime() + hours * 60 * MINUTE);
    if (opens(candidate)) return candidate;
  }
  // A start a spring-forward skips: the window opens at the jump, if the jump lands inside it.
  const jump = jumpNear(at, timeZone);
  return jump && opens(jump) ? jump : null;
}

/** The zone's offset from UTC at `at`, in minutes (0 to 1439). */
function offsetAt(at: Date, timeZone: string | null | undefined): number {
  return (((localTime(at, timeZone).minutes - (at.getUTCHours() * 60 + at.getUTCMinutes())) % 1440) + 1440) % 1440;
}

/** The minute the zone's offset changed within JUMP_SEARCH_MS either side of `at` (a bisection), if it did. */
function jumpNear(at: Date, timeZone: string | null | undefined): Date | null {
  let low = at.getTime() - JUMP_SEARCH_MS;
  let high = at.getTime() + JUMP_SEARCH_MS;
  const after = offsetAt(new Date(high), timeZone);
  if (offsetAt(new Date(low), timeZone) === after) return null;
  while (high - low > MINUTE) {
    const middle = low + Math.floor((high - low) / 2 / MINUTE) * MINUTE;
    if (offsetAt(new Date(middle), timeZone) === after) high = middle;
    else low = middle;
  }
  return new Date(high);
}
