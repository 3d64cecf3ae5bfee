import { isWithinWindow, localTime } from './calling-window.js';

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
    const inside = Array.from({ length: 12 * 60 }, (_, i) => new Date(start + i * 60_000)).filter((now) =>
      isWithinWindow(now, 'America/New_York', window),
    );
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
