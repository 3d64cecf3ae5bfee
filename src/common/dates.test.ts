import type { TransformFnParams } from 'class-transformer';
import { toDate } from './dates.js';

const read = (value: unknown) => toDate({ value } as TransformFnParams);

describe('toDate (REST dates as ISO 8601 strings)', () => {
  it.each([
    ['2030-01-02', '2030-01-02T00:00:00.000Z'],
    ['2030-01-02T03:04:05Z', '2030-01-02T03:04:05.000Z'],
    ['2030-01-02T03:04:05.678Z', '2030-01-02T03:04:05.678Z'],
    ['2030-01-02T03:04:05+02:00', '2030-01-02T01:04:05.000Z'],
    ['2030-01-02T03:04:05-0130', '2030-01-02T04:34:05.000Z'],
    ['2030-01-02T03:04Z', '2030-01-02T03:04:00.000Z'],
  ])('reads %s as %s', (value, iso) => {
    expect((read(value) as Date).toISOString()).toBe(iso);
  });

  it('reads a date-time without a zone as local time, as Date does', () => {
    expect((read('2030-01-02T03:04:05') as Date).getTime()).toBe(new Date(2030, 0, 2, 3, 4, 5).getTime());
  });

  it.each([
    ' 2030-01-02',
    '12030-01-02',
    'tomorrow',
    '1735689600000',
    '2030-1-2',
    'x2030-01-02',
    '2030-01-02x',
    '2030-01-02 03:04',
    '2030-01-02T03',
    '2030-01-02T03:04:05.1234567890Z',
    '',
  ])('makes the non-ISO %j an Invalid Date, for @IsDate to refuse', (value) => {
    const date = read(value);
    expect(date).toBeInstanceOf(Date);
    expect(Number.isNaN((date as Date).getTime())).toBe(true);
  });

  it('leaves what is not a string (a Date GraphQL parsed, a number, null) as it is', () => {
    const date = new Date('2030-01-02T00:00:00Z');
    expect(read(date)).toBe(date);
    expect(read(5)).toBe(5);
    expect(read(null)).toBeNull();
    expect(read(undefined)).toBeUndefined();
  });
});
