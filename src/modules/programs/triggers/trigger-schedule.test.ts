import { computeTriggerAt } from './trigger-schedule.js';

const at = (value: string, offset: number, time: string, zone: string | null) => computeTriggerAt(value, offset, time, zone)?.toISOString() ?? null;

describe('computeTriggerAt', () => {
  it('is the time of day in UTC when the contact has no zone', () => {
    expect(at('2026-06-15', 0, '09:30', null)).toBe('2026-06-15T09:30:00.000Z');
    expect(at('2026-06-15', 0, '00:00', 'UTC')).toBe('2026-06-15T00:00:00.000Z');
  });

  it('uses the zone offset of that day, standard and summer time', () => {
    expect(at('2026-01-15', 0, '09:00', 'America/New_York')).toBe('2026-01-15T14:00:00.000Z');
    expect(at('2026-07-15', 0, '09:00', 'America/New_York')).toBe('2026-07-15T13:00:00.000Z');
    expect(at('2026-01-15', 0, '09:00', 'Europe/Paris')).toBe('2026-01-15T08:00:00.000Z');
    expect(at('2026-07-15', 0, '09:00', 'Europe/Paris')).toBe('2026-07-15T07:00:00.000Z');
    expect(at('2026-07-15', 0, '09:00', 'Asia/Kolkata')).toBe('2026-07-15T03:30:00.000Z');
  });

  it('moves a time inside the spring-forward gap to the first valid instant', () => {
    // New York, 2026-03-08: 02:00 EST jumps to 03:00 EDT (07:00Z); 02:30 does not exist.
    expect(at('2026-03-08', 0, '02:30', 'America/New_York')).toBe('2026-03-08T07:00:00.000Z');
    expect(at('2026-03-08', 0, '02:00', 'America/New_York')).toBe('2026-03-08T07:00:00.000Z');
    expect(at('2026-03-08', 0, '01:59', 'America/New_York')).toBe('2026-03-08T06:59:00.000Z');
    expect(at('2026-03-08', 0, '03:00', 'America/New_York')).toBe('2026-03-08T07:00:00.000Z');
    expect(at('2026-03-08', 0, '09:00', 'America/New_York')).toBe('2026-03-08T13:00:00.000Z');
    // Paris, 2026-03-29: 02:00 CET jumps to 03:00 CEST (01:00Z).
    expect(at('2026-03-29', 0, '02:30', 'Europe/Paris')).toBe('2026-03-29T01:00:00.000Z');
    expect(at('2026-03-29', 0, '01:30', 'Europe/Paris')).toBe('2026-03-29T00:30:00.000Z');
    expect(at('2026-03-29', 0, '09:00', 'Europe/Paris')).toBe('2026-03-29T07:00:00.000Z');
  });

  it('takes the first of the two instants in a fall-back overlap', () => {
    // New York, 2026-11-01: 01:30 happens at 05:30Z (EDT) and again at 06:30Z (EST).
    expect(at('2026-11-01', 0, '01:30', 'America/New_York')).toBe('2026-11-01T05:30:00.000Z');
    expect(at('2026-11-01', 0, '02:00', 'America/New_York')).toBe('2026-11-01T07:00:00.000Z');
    expect(at('2026-11-01', 0, '00:59', 'America/New_York')).toBe('2026-11-01T04:59:00.000Z');
    // Paris, 2026-10-25: 02:30 happens at 00:30Z (CEST) and 01:30Z (CET).
    expect(at('2026-10-25', 0, '02:30', 'Europe/Paris')).toBe('2026-10-25T00:30:00.000Z');
    expect(at('2026-10-25', 0, '03:00', 'Europe/Paris')).toBe('2026-10-25T02:00:00.000Z');
  });

  it('handles the 30-minute shifts of Lord Howe Island', () => {
    // 2026-10-04: 02:00 +10:30 jumps to 02:30 +11:00; 2026-04-05: 02:00 +11:00 falls back to 01:30 +10:30.
    expect(at('2026-10-04', 0, '02:15', 'Australia/Lord_Howe')).toBe('2026-10-03T15:30:00.000Z');
    expect(at('2026-10-04', 0, '02:30', 'Australia/Lord_Howe')).toBe('2026-10-03T15:30:00.000Z');
    expect(at('2026-04-05', 0, '01:45', 'Australia/Lord_Howe')).toBe('2026-04-04T14:45:00.000Z');
    expect(at('2026-04-05', 0, '12:00', 'Australia/Lord_Howe')).toBe('2026-04-05T01:30:00.000Z');
  });

  it('adds offset days across month and year ends and leap days', () => {
    expect(at('2026-01-31', 1, '10:00', null)).toBe('2026-02-01T10:00:00.000Z');
    expect(at('2026-12-31', 1, '10:00', null)).toBe('2027-01-01T10:00:00.000Z');
    expect(at('2027-01-01', -1, '10:00', null)).toBe('2026-12-31T10:00:00.000Z');
    expect(at('2028-03-01', -1, '10:00', null)).toBe('2028-02-29T10:00:00.000Z');
    expect(at('2027-03-01', -1, '10:00', null)).toBe('2027-02-28T10:00:00.000Z');
    expect(at('2028-02-29', 1, '10:00', null)).toBe('2028-03-01T10:00:00.000Z');
    expect(at('2026-03-01', -7, '08:00', 'America/New_York')).toBe('2026-02-22T13:00:00.000Z');
    // The day before a DST change keeps that day's offset.
    expect(at('2026-03-09', -1, '12:00', 'America/New_York')).toBe('2026-03-08T16:00:00.000Z');
    expect(at('2026-03-07', 1, '00:30', 'America/New_York')).toBe('2026-03-08T05:30:00.000Z');
    expect(at('2026-06-15', 365, '10:00', null)).toBe('2027-06-15T10:00:00.000Z');
  });

  it('takes the calendar date of a date-time in the contact zone', () => {
    // 2026-06-15T02:00Z is still June 14 in New York.
    expect(at('2026-06-15T02:00:00Z', 0, '09:00', 'America/New_York')).toBe('2026-06-14T13:00:00.000Z');
    expect(at('2026-06-15T02:00:00Z', 0, '09:00', 'Europe/Paris')).toBe('2026-06-15T07:00:00.000Z');
    expect(at('2026-06-14T23:30:00-05:00', 0, '09:00', 'Europe/Paris')).toBe('2026-06-15T07:00:00.000Z');
    expect(at('2026-06-14T23:30:00.123+0200', 1, '09:00', null)).toBe('2026-06-15T09:00:00.000Z');
    // Without an offset, a date-time is a local one: its own date.
    expect(at('2026-06-15T23:30', 0, '09:00', 'Asia/Tokyo')).toBe('2026-06-15T00:00:00.000Z');
  });

  it('answers null for values that are not dates', () => {
    for (const value of ['', 'tomorrow', '2026-02-29', '2026-13-01', '2026-04-31', '2026-6-1', '15/06/2026', '2026-06-15T25:00:00Z', '20260615']) {
      expect([value, computeTriggerAt(value, 0, '09:00', null)]).toEqual([value, null]);
    }
    expect(computeTriggerAt('2026-06-15', 0, '24:00', null)).toBeNull();
    expect(computeTriggerAt('2026-06-15', 0, '9:00', null)).toBeNull();
    expect(computeTriggerAt('2026-06-15', 0, '09:00', 'Mars/Olympus')).toBeNull();
    expect(computeTriggerAt('2026-06-15', 0.5, '09:00', null)).toBeNull();
  });
});

describe('computeTriggerAt refuses what is not a date, a time of day or a whole number of days', () => {
  it.each(['2030-02-30', '2030-13-01', '2030-00-10', '0050-01-01', 'x2030-01-02', '2030-01-02x', 'x2030-01-02T09:00:00Z', '2030-01-02T09:00:00Zx'])(
    'answers null for the value %j',
    (value) => {
      expect(computeTriggerAt(value, 0, '09:00', null)).toBeNull();
    },
  );

  it.each(['x09:00', '09:00x', '24:00', '9:00'])('answers null for the time of day %j', (timeOfDay) => {
    expect(computeTriggerAt('2030-01-02', 0, timeOfDay, null)).toBeNull();
  });

  it('answers null for a fractional offset, and reads a value with spaces around it', () => {
    expect(computeTriggerAt('2030-01-02', 1.5, '09:00', null)).toBeNull();
    expect(computeTriggerAt('  2030-01-02 ', 1, '09:00', null)?.toISOString()).toBe('2030-01-03T09:00:00.000Z');
    expect(computeTriggerAt(42 as unknown as string, 0, '09:00', null)).toBeNull();
  });
});
