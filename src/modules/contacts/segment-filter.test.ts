import { compileSegmentFilter, segmentFilterErrors, type SegmentFilter } from './segment-filter.js';

describe('segment filters', () => {
  it('compiles to SQL with every value, attribute key and pattern as a parameter', () => {
    const filter: SegmentFilter = {
      all: [
        { field: 'attributes.tier', op: 'eq', value: "gold'; drop table contacts; --" },
        { field: 'timeZone', op: 'prefix', value: 'Europe/%_' },
        { any: [{ field: 'attributes.address.city', op: 'in', value: ['Lyon', 7] }, { not: { field: 'name', op: 'exists' } }] },
        { field: 'attributes.renewal', op: 'before', value: '2026-03-01' },
        { field: 'createdAt', op: 'after', value: '2026-01-31' },
      ],
    };
    expect(segmentFilterErrors(filter)).toEqual([]);
    const { sql, params } = compileSegmentFilter(filter, 'c');
    expect(sql).toBe(
      `(c."attributes" @> ?::jsonb and coalesce(c."time_zone" like ?, false) and ((c."attributes" @> ?::jsonb or c."attributes" @> ?::jsonb) or (not c."name" is not null)) ` +
        `and coalesce((c."attributes" #>> string_to_array(?, '.')) ~ '^\\d{4}-\\d{2}-\\d{2}' and left((c."attributes" #>> string_to_array(?, '.')), 10) < ?, false) ` +
        `and c."created_at" >= ((?::date) + 1)::timestamp at time zone 'UTC')`,
    );
    expect(params).toEqual([
      JSON.stringify({ tier: "gold'; drop table contacts; --" }),
      'Europe/\\%\\_%',
      JSON.stringify({ address: { city: 'Lyon' } }),
      JSON.stringify({ address: { city: 7 } }),
      'renewal',
      'renewal',
      '2026-03-01',
      '2026-01-31',
    ]);
    // The only text of the filter in the SQL is none: the placeholders are as many as the values.
    expect(sql.split('?').length - 1).toBe(params.length);
  });

  it('keeps `not` the complement of a condition over a nullable column (never null)', () => {
    expect(compileSegmentFilter({ not: { field: 'name', op: 'eq', value: 'Ann' } }, 'c').sql).toBe('(not coalesce(c."name" = ?, false))');
  });

  it.each([
    [null, 'filter must be an object'],
    [[], 'filter must be an object'],
    [{ all: [{ field: 'name', op: 'exists' }], any: [] }, 'filter must have one key (all, any or not), not all, any'],
    [{ field: 'attributes.', op: 'exists' }, 'filter.field has an attribute key ""'],
    [{ field: 'attributes.-x', op: 'exists' }, 'attribute key "-x"'],
    [{ field: 'attributes.tier', op: 'eq', value: null }, 'filter.value must be a string, number, boolean'],
    [{ field: 'attributes.tier', op: 'eq', value: Number.NaN }, 'filter.value must be a string, number, boolean'],
    [{ field: 'name', op: 'eq', value: '' }, 'filter.value must be 1 to 200 characters'],
    [{ field: 'name', op: 'prefix', value: 3 }, 'filter.value must be a string'],
    [{ field: 'attributes.d', op: 'after', value: '2026-1-1' }, 'filter.value must be a date, YYYY-MM-DD'],
    [
      {
        any: [
          { field: 'name', op: 'exists' },
          { field: 'phone', op: 'exists' },
        ],
      },
      'filter.any.1.op must be one of eq, in, prefix for phone',
    ],
  ])('refuses %j: %s', (filter, message) => {
    const errors = segmentFilterErrors(filter);
    expect(errors.length).toBeGreaterThan(0);
    expect(errors.every((error) => error.field === 'filter')).toBe(true);
    expect(errors[0]!.message).toContain(message);
  });

  it('stops at ten errors and at the size limit before walking anything', () => {
    const many = { any: Array.from({ length: 15 }, () => ({ field: 'nope', op: 'eq', value: 'x' })) };
    expect(segmentFilterErrors(many)).toHaveLength(10);
    const huge = { field: 'name', op: 'in', value: Array.from({ length: 50 }, () => 'x'.repeat(100)) };
    expect(segmentFilterErrors(huge)).toEqual([{ field: 'filter', message: expect.stringMatching(/^filter is \d+ bytes of JSON; at most 4096$/) }]);
  });
});
