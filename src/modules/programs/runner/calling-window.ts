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
