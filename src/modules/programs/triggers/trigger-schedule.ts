/**
 * When a live program calls a contact: a date attribute, moved by offsetDays, at a local time of
 * day in the contact's IANA zone. Pure and library-free: zone offsets come from Intl.
 */
const DATE_ONLY = /^(\d{4})-(\d{2})-(\d{2})$/;
const DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(?<offset>Z|[+-]\d{2}:?\d{2})?$/i;
const TIME_OF_DAY = /^([01]\d|2[0-3]):([0-5]\d)$/;
const DAY_MS = 86_400_000;

const formatters = new Map<string, Intl.DateTimeFormat>();

function formatterFor(timeZone: string): Intl.DateTimeFormat {
  let formatter = formatters.get(timeZone);
  // Stryker disable next-line ConditionalExpression: equivalent, the cache only saves building a formatter again
  if (!formatter) {
    formatter = new Intl.DateTimeFormat('en-US', {
      timeZone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
    // Stryker disable next-line all: equivalent, the cache only saves building a formatter again
    formatters.set(timeZone, formatter);
  }
  return formatter;
}

/** The zone's wall clock at an instant, as if it were UTC (milliseconds). */
function wallClock(instant: number, timeZone: string): number {
  const parts: Record<string, number> = {};
  for (const part of formatterFor(timeZone).formatToParts(new Date(instant))) {
    // Stryker disable next-line ConditionalExpression,LogicalOperator,StringLiteral: equivalent, a literal or era part lands under a key nothing reads
    if (part.type !== 'literal' && part.type !== 'era') parts[part.type] = Number(part.value);
  }
  const year = parts.year!;
  return Date.UTC(year, parts.month! - 1, parts.day!, parts.hour!, parts.minute!, parts.second!) + (((instant % 1000) + 1000) % 1000);
}

/** The zone's offset from UTC at an instant, in milliseconds. */
function offsetAt(instant: number, timeZone: string): number {
  return wallClock(instant, timeZone) - instant;
}

/**
 * The instant a local wall-clock time happens in a zone. In a fall-back overlap, the first of
 * the two; in a spring-forward gap, the first valid instant after it (the transition itself).
 */
export function zonedInstant(wall: number, timeZone: string): number {
  const before = offsetAt(wall - DAY_MS, timeZone);
  const after = offsetAt(wall + DAY_MS, timeZone);
  const candidates = [wall - before, wall - after].filter((instant) => wallClock(instant, timeZone) === wall);
  if (candidates.length > 0) return Math.min(...candidates);
  // A gap: the offset changes between lo (old offset) and hi (new one); find the change to the millisecond.
  let lo = Math.min(wall - before, wall - after);
  let hi = Math.max(wall - before, wall - after);
  const loOffset = offsetAt(lo, timeZone);
  while (hi - lo > 1) {
    const mid = Math.floor((lo + hi) / 2);
    if (offsetAt(mid, timeZone) === loOffset) lo = mid;
    else hi = mid;
  }
  return hi;
}

/** Year, month (1-12) and day of the attribute value in the zone; null when it is not a real date. */
function calendarDate(value: string, timeZone: string): [number, number, number] | null {
  const dateOnly = DATE_ONLY.exec(value);
  const dateTime = dateOnly ? null : DATE_TIME.exec(value);
  const match = dateOnly ?? dateTime;
  // Stryker disable next-line ConditionalExpression: equivalent, without it match[1] throws and computeTriggerAt's catch answers null
  if (!match) return null;
  const [year, month, day] = [Number(match[1]), Number(match[2]), Number(match[3])];
  const check = new Date(Date.UTC(year, month - 1, day));
  if (check.getUTCFullYear() !== year || check.getUTCMonth() !== month - 1 || check.getUTCDate() !== day) return null;
  // A date-time with an offset is an instant: its date is the one on the contact's calendar.
  // Stryker disable next-line OptionalChaining: equivalent, dateTime?. already short-circuits the whole chain
  if (dateTime?.groups?.offset) {
    const instant = Date.parse(value);
    // Stryker disable next-line ConditionalExpression: equivalent, an invalid instant makes formatToParts throw and the catch answers null
    if (Number.isNaN(instant)) return null;
    const local = new Date(wallClock(instant, timeZone));
    return [local.getUTCFullYear(), local.getUTCMonth() + 1, local.getUTCDate()];
  }
  return [year, month, day];
}

/**
 * When the trigger for a date attribute fires: `timeOfDay` (HH:MM) local time on the attribute's
 * date plus `offsetDays`, in `timeZone` (UTC when null). Null for a value that is not a date
 * (YYYY-MM-DD or ISO 8601 date-time), a bad time of day or an unknown zone.
 */
export function computeTriggerAt(attributeValue: string, offsetDays: number, timeOfDay: string, timeZone: string | null): Date | null {
  const zone = timeZone ?? 'UTC';
  const time = TIME_OF_DAY.exec(timeOfDay);
  if (typeof attributeValue !== 'string' || !time || !Number.isInteger(offsetDays)) return null;
  try {
    const date = calendarDate(attributeValue.trim(), zone);
    // Stryker disable next-line ConditionalExpression: equivalent, without it date[0] throws and the catch answers null
    if (!date) return null;
    const wall = Date.UTC(date[0], date[1] - 1, date[2] + offsetDays, Number(time[1]), Number(time[2]));
    const instant = zonedInstant(wall, zone);
    return Number.isNaN(instant) ? null : new Date(instant);
  } catch {
    return null; // RangeError: an unknown time zone
  }
}
