import { isWithinWindow, localTime, nextWindowOpening } from './calling-window.js';

const WEEKDAYS_9_TO_5 = { startTime: '09:00', endTime: '17:00', daysOfWeek: [1, 2, 3, 4, 5] };
const at = (iso: string) => new Date(iso);

describe('isWithinWindow: the contact’s own clock', () => {
  it('an endTime of 24:00 takes the window to midnight: 23:59 is inside', () => {
    const allDay = { startTime: '00:00', endTime: '24:00', daysOfWeek: [1, 2, 3, 4, 5, 6, 7] };
    expect(isWithinWindow(at('2026-03-06T23:59:30Z'), null, allDay)).toBe(true);
    expect(isWithinWindow(at('2026-03-06T00:00:00Z'), null, allDay)).toBe(true);
    expect(isWithinWindow(at('2026-03-06T23:59:30Z'), null, { ...allDay, endTime: '23:59' })).toBe(false);
  });

  it('New York: the same UTC time is outside before spring-forward and inside after', () => {
    // Friday 2026-03-06 13:30Z is 08:30 EST; Monday 2026-03-09 13:30Z is 09:30 EDT.
    expect(localTime(at('2026-03-06T13:30:00Z'), 'America/New_York')).toEqual({ weekday: 5, minutes: 8 * 60 + 30 });
    expect(isWithinWindow(at('2026-03-06T13:30:00Z'), 'America/New_York', WEEKDAYS_9_TO_5)).toBe(false);
    expect(isWithinWindow(at('2026-03-09T13:30:00Z'), 'America/New_York', WEEKDAYS_9_TO_5)).toBe(true);
  });

  it('New York: and inside before fall-back, outside after', () => {
    // Friday 2026-10-30 13:30Z is 09:30 EDT; Monday 2026-11-02 13:30Z is 08:30 EST.
    expect(isWithinWindow(at('2026-10-30T13:30:00Z'), 'America/New_York', WEEKDAYS_9_TO_5)).toBe(true);
    expect(isWithinWindow(at('2026-11-02T13:30:00Z'), 'America/New_York', WEEKDAYS_9_TO_5)).toBe(false);
  });

  it('Paris: CET then CEST in spring, CEST then CET in autumn', () => {
    expect(isWithinWindow(at('2026-03-27T07:30:00Z'), 'Europe/Paris', WEEKDAYS_9_TO_5)).toBe(false); // 08:30 CET
    expect(isWithinWindow(at('2026-03-30T07:30:00Z'), 'Europe/Paris', WEEKDAYS_9_TO_5)).toBe(true); // 09:30 CEST
    expect(isWithinWindow(at('2026-10-23T15:30:00Z'), 'Europe/Paris', WEEKDAYS_9_TO_5)).toBe(false); // 17:30 CEST
    expect(isWithinWindow(at('2026-10-26T15:30:00Z'), 'Europe/Paris', WEEKDAYS_9_TO_5)).toBe(true); // 16:30 CET
  });

  it('a local hour that the spring-forward skips is never inside a window of that hour', () => {
    const window = { startTime: '02:00', endTime: '03:00', daysOfWeek: [1, 2, 3, 4, 5, 6, 7] };
    const start = at('2026-03-08T04:00:00Z').getTime(); // Sunday 2026-03-08, 23:00 EST the evening before
    const inside = Array.from({ length: 12 * 60 }, (_, i) => new Date(start + i * 60_000)).filter((now) => isWithinWindow(now, 'America/New_York', window));
    expect(inside).toEqual([]);
    // The day after, 02:00–02:59 EDT is 06:00–06:59Z.
    expect(isWithinWindow(at('2026-03-09T06:30:00Z'), 'America/New_York', window)).toBe(true);
  });

  it('weekdays are the contact’s: Tuesday morning in Tokyo is Monday evening in Los Angeles', () => {
    const now = at('2026-03-10T01:00:00Z');
    const tuesdayMorning = { startTime: '09:00', endTime: '12:00', daysOfWeek: [2] };
    expect(isWithinWindow(now, 'Asia/Tokyo', tuesdayMorning)).toBe(true);
    expect(isWithinWindow(now, 'America/Los_Angeles', tuesdayMorning)).toBe(false);
    expect(isWithinWindow(now, 'America/Los_Angeles', { startTime: '18:00', endTime: '19:00', daysOfWeek: [1] })).toBe(true);
    expect(isWithinWindow(at('2026-03-14T01:00:00Z'), 'Asia/Tokyo', WEEKDAYS_9_TO_5)).toBe(false); // Saturday 10:00
  });

  it('start is inclusive, end exclusive', () => {
    expect(isWithinWindow(at('2026-03-09T09:00:00Z'), 'UTC', WEEKDAYS_9_TO_5)).toBe(true);
    expect(isWithinWindow(at('2026-03-09T08:59:59Z'), 'UTC', WEEKDAYS_9_TO_5)).toBe(false);
    expect(isWithinWindow(at('2026-03-09T16:59:00Z'), 'UTC', WEEKDAYS_9_TO_5)).toBe(true);
    expect(isWithinWindow(at('2026-03-09T17:00:00Z'), 'UTC', WEEKDAYS_9_TO_5)).toBe(false);
  });

  it('no zone (or an unknown one) reads UTC; no window means any time; an empty window means never', () => {
    expect(isWithinWindow(at('2026-03-09T09:30:00Z'), null, WEEKDAYS_9_TO_5)).toBe(true);
    expect(isWithinWindow(at('2026-03-09T08:30:00Z'), null, WEEKDAYS_9_TO_5)).toBe(false);
    expect(isWithinWindow(at('2026-03-09T09:30:00Z'), 'Not/AZone', WEEKDAYS_9_TO_5)).toBe(true);
    expect(isWithinWindow(at('2026-03-08T03:00:00Z'), 'Europe/Paris', null)).toBe(true);
    expect(isWithinWindow(at('2026-03-09T12:00:00Z'), 'UTC', { startTime: '00:00', endTime: '00:00', daysOfWeek: [1, 2, 3, 4, 5, 6, 7] })).toBe(false);
    expect(isWithinWindow(at('2026-03-09T12:00:00Z'), 'UTC', { startTime: '00:00', endTime: '23:59', daysOfWeek: [] })).toBe(false);
  });
});

describe('window times with minutes', () => {
  const window = { startTime: '09:30', endTime: '17:45', daysOfWeek: [1] };

  it('opens at HH:MM and closes at HH:MM, minutes included', () => {
    // Monday 2026-03-09, UTC
    expect(isWithinWindow(new Date('2026-03-09T09:29:00Z'), 'UTC', window)).toBe(false);
    expect(isWithinWindow(new Date('2026-03-09T09:30:00Z'), 'UTC', window)).toBe(true);
    expect(isWithinWindow(new Date('2026-03-09T17:44:00Z'), 'UTC', window)).toBe(true);
    expect(isWithinWindow(new Date('2026-03-09T17:45:00Z'), 'UTC', window)).toBe(false);
  });
});

describe('nextWindowOpening: when the next call may be placed', () => {
  const EVERY_DAY = [1, 2, 3, 4, 5, 6, 7];

  /**
   * The answer found the slow way: the first inside quarter hour from `from` on, over eight days. Exact
   * for the windows and zones below: their starts, offsets and daylight-saving jumps fall on quarter hours.
   */
  function scanned(from: Date, timeZone: string | null, window: { startTime: string; endTime: string; daysOfWeek: number[] }): Date | null {
    if (isWithinWindow(from, timeZone, window)) return from;
    const quarter = 15 * 60_000;
    const first = Math.floor(from.getTime() / quarter) * quarter + quarter;
    for (let step = 0; step < 8 * 96; step++) {
      const candidate = new Date(first + step * quarter);
      if (isWithinWindow(candidate, timeZone, window)) return candidate;
    }
    return null;
  }

  it('inside the window (or without one) it is now', () => {
    const now = at('2026-03-09T10:15:27Z');
    expect(nextWindowOpening(now, 'UTC', WEEKDAYS_9_TO_5)).toEqual(now);
    expect(nextWindowOpening(now, 'Europe/Paris', null)).toEqual(now);
  });

  it('before the start on a weekday: today’s start; after the end: the next weekday’s, over the weekend', () => {
    expect(nextWindowOpening(at('2026-03-09T08:59:59.500Z'), 'UTC', WEEKDAYS_9_TO_5)).toEqual(at('2026-03-09T09:00:00Z'));
    expect(nextWindowOpening(at('2026-03-09T17:00:00Z'), 'UTC', WEEKDAYS_9_TO_5)).toEqual(at('2026-03-10T09:00:00Z'));
    // Friday evening → Monday morning.
    expect(nextWindowOpening(at('2026-03-13T18:00:00Z'), 'UTC', WEEKDAYS_9_TO_5)).toEqual(at('2026-03-16T09:00:00Z'));
    // Only Mondays, on a Monday after the end: a week on.
    expect(nextWindowOpening(at('2026-03-09T18:00:00Z'), 'UTC', { startTime: '09:30', endTime: '10:00', daysOfWeek: [1] })).toEqual(at('2026-03-16T09:30:00Z'));
  });

  it('on the contact’s clock: 09:00 in Tokyo and in New York are different instants', () => {
    const now = at('2026-03-09T00:30:00Z'); // Monday 09:30 in Tokyo, Sunday 20:30 EDT in New York
    expect(nextWindowOpening(now, 'Asia/Tokyo', WEEKDAYS_9_TO_5)).toEqual(now);
    expect(nextWindowOpening(now, 'America/New_York', WEEKDAYS_9_TO_5)).toEqual(at('2026-03-09T13:00:00Z'));
    expect(nextWindowOpening(now, 'Asia/Kolkata', { startTime: '09:00', endTime: '10:00', daysOfWeek: [1] })).toEqual(at('2026-03-09T03:30:00Z'));
  });

  it('across a daylight-saving change: the next start on the new offset', () => {
    // Friday 2026-03-06 22:00 EST → Monday 09:00 EDT (13:00Z, not 14:00Z).
    expect(nextWindowOpening(at('2026-03-07T03:00:00Z'), 'America/New_York', WEEKDAYS_9_TO_5)).toEqual(at('2026-03-09T13:00:00Z'));
    // Friday 2026-10-30 18:00 EDT → Monday 09:00 EST (14:00Z).
    expect(nextWindowOpening(at('2026-10-30T22:00:00Z'), 'America/New_York', WEEKDAYS_9_TO_5)).toEqual(at('2026-11-02T14:00:00Z'));
  });

  it('a start that the spring-forward skips opens when the clock jumps past it', () => {
    // Sunday 2026-03-08 in New York: 01:59 EST is followed by 03:00 EDT (07:00Z); a window of 02:30–04:00 opens then.
    const window = { startTime: '02:30', endTime: '04:00', daysOfWeek: EVERY_DAY };
    expect(nextWindowOpening(at('2026-03-08T05:00:00Z'), 'America/New_York', window)).toEqual(at('2026-03-08T07:00:00Z'));
    // A window inside the skipped hour does not open that day, but the next.
    const skipped = { startTime: '02:00', endTime: '03:00', daysOfWeek: EVERY_DAY };
    expect(nextWindowOpening(at('2026-03-08T05:00:00Z'), 'America/New_York', skipped)).toEqual(at('2026-03-09T06:00:00Z'));
  });

  it('a start inside the hour the fall-back repeats opens at its first occurrence', () => {
    // Sunday 2026-11-01 in New York: 01:00–01:59 EDT (05:00Z–05:59Z), then 01:00–01:59 EST again.
    const window = { startTime: '01:30', endTime: '01:45', daysOfWeek: EVERY_DAY };
    expect(nextWindowOpening(at('2026-11-01T04:00:00Z'), 'America/New_York', window)).toEqual(at('2026-11-01T05:30:00Z'));
    // Between the two: the second.
    expect(nextWindowOpening(at('2026-11-01T05:50:00Z'), 'America/New_York', window)).toEqual(at('2026-11-01T06:30:00Z'));
  });

  it('a window that names no weekday, or ends where it starts, never opens', () => {
    expect(nextWindowOpening(at('2026-03-09T08:00:00Z'), 'UTC', { startTime: '09:00', endTime: '17:00', daysOfWeek: [] })).toBeNull();
    expect(nextWindowOpening(at('2026-03-09T08:00:00Z'), 'UTC', { startTime: '09:00', endTime: '09:00', daysOfWeek: EVERY_DAY })).toBeNull();
  });

  it('agrees with a scan quarter hour by quarter hour, in zones east and west, on ordinary and daylight-saving days', () => {
    const zones = [null, 'America/New_York', 'Europe/London', 'Australia/Lord_Howe', 'Asia/Kathmandu', 'Pacific/Chatham', 'America/Sao_Paulo'];
    const windows = [
      WEEKDAYS_9_TO_5,
      { startTime: '00:00', endTime: '24:00', daysOfWeek: [6] },
      { startTime: '01:15', endTime: '02:45', daysOfWeek: [7] },
      { startTime: '23:00', endTime: '24:00', daysOfWeek: [3, 5] },
    ];
    const instants = [
      '2026-03-08T06:10:00Z',
      '2026-03-29T00:59:30Z',
      '2026-04-04T15:00:00Z',
      '2026-10-25T01:30:00Z',
      '2026-11-01T05:20:00Z',
      '2026-06-17T12:34:56Z',
    ];
    for (const zone of zones) {
      for (const window of windows) {
        for (const instant of instants) {
          const from = at(instant);
          expect([zone, window, instant, nextWindowOpening(from, zone, window)?.toISOString()]).toEqual([
            zone,
            window,
            instant,
            scanned(from, zone, window)?.toISOString(),
          ]);
        }
      }
    }
  });
});
