import { Type } from 'class-transformer';
import { ArrayMaxSize, IsArray, IsInt, IsOptional, IsString, Min, ValidateNested } from 'class-validator';
import { AppError } from './errors.js';
import { PageArgs, SortOrder } from './pagination.js';
import { parseInput } from './validation.js';

class TaggedArgs {
  @IsOptional()
  @IsString({ each: true })
  tags?: string[];

  @Min(1)
  @IsInt()
  @Type(() => Number)
  limit: number = 20;
}

/** The field errors `promise` is refused with, as BAD_USER_INPUT. */
async function refusedWith(promise: Promise<unknown>) {
  const error = await promise.then(
    () => null,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(AppError);
  expect(error).toMatchObject({ code: 'BAD_USER_INPUT' });
  return (error as AppError).errors;
}

describe('parseInput, the same input again', () => {
  it('makes an equal instance of the class each time, never the same one', async () => {
    const first = await parseInput(PageArgs, { limit: '5', search: 'desk' }, 'query');
    const second = await parseInput(PageArgs, { limit: '5', search: 'desk' }, 'query');
    expect(second).toBeInstanceOf(PageArgs);
    expect(second).not.toBe(first);
    expect({ ...second }).toEqual({ ...first });
    expect(second).toMatchObject({ page: 1, limit: 5, search: 'desk', sortOrder: SortOrder.desc });
  });

  it('gives each request its own arrays: what one handler changes, the next does not see', async () => {
    const first = await parseInput(TaggedArgs, { tags: ['a', 'b'], limit: '3' }, 'query');
    first.tags!.push('changed');
    first.limit = 99;
    const second = await parseInput(TaggedArgs, { tags: ['a', 'b'], limit: '3' }, 'query');
    expect(second.tags).toEqual(['a', 'b']);
    expect(second.limit).toBe(3);
  });

  it('refuses a bad input every time, and a good one after it still passes', async () => {
    for (let round = 0; round < 2; round++) {
      expect(await refusedWith(parseInput(PageArgs, { limit: '0' }, 'query'))).toEqual([{ field: 'limit', message: 'limit must not be less than 1' }]);
    }
    const unknown = [{ field: 'color', message: 'unknown field color' }];
    expect(await refusedWith(parseInput(PageArgs, { limit: '5', color: 'red' }, 'query'))).toEqual(unknown);
    expect(await parseInput(PageArgs, { limit: '5' }, 'query')).toMatchObject({ limit: 5 });
    expect(await refusedWith(parseInput(PageArgs, { limit: '5', color: 'red' }, 'query'))).toEqual(unknown);
  });

  it('tells a number from the same digits as text: a pass of one lets no other through', async () => {
    expect(await parseInput(TaggedArgs, { tags: ['1'] })).toMatchObject({ tags: ['1'] });
    expect(await refusedWith(parseInput(TaggedArgs, { tags: [1] }))).toEqual([{ field: 'tags', message: 'each value in tags must be a string' }]);
  });
});

class Row {
  @IsString()
  name!: string;

  @IsOptional()
  @Min(0)
  @IsInt()
  rank?: number;
}

class Rows {
  @ValidateNested({ each: true })
  @Type(() => Row)
  @ArrayMaxSize(2000)
  @IsArray()
  rows!: Row[];

  @IsOptional()
  @IsString()
  label?: string;
}

describe('parseInput, a large list', () => {
  const rows = (n: number) => Array.from({ length: n }, (_, i) => ({ name: `row ${i}`, rank: i }));

  it('reads and checks it a slice at a time, the event loop turning between two slices', async () => {
    let turns = 0;
    let counting = true;
    const count = () => {
      turns++;
      if (counting) setImmediate(count);
    };
    setImmediate(count);
    const parsed = await parseInput(Rows, { rows: rows(1500), label: 'x' });
    counting = false;
    expect(parsed.rows).toHaveLength(1500);
    expect(parsed.rows[1499]).toBeInstanceOf(Row);
    expect(parsed.rows[1499]).toEqual({ name: 'row 1499', rank: 1499 });
    expect(turns).toBeGreaterThan(3);
  });

  it('names the same bad rows and fields as when it is checked at once, in order', async () => {
    const bad: unknown[] = rows(1500);
    bad[1200] = { name: 5, rank: -1, extra: true };
    bad[7] = 'not a row';
    bad[300] = { rank: 1 };
    const expected = [
      { field: 'label', message: 'label must be a string' },
      { field: 'rows.7', message: 'each value in nested property rows must be either object or array' },
      { field: 'rows.300.name', message: 'name must be a string' },
      { field: 'rows.1200.extra', message: 'unknown field extra' },
      { field: 'rows.1200.name', message: 'name must be a string' },
      { field: 'rows.1200.rank', message: 'rank must not be less than 0' },
    ];
    const sorted = (errors: { field: string }[] | undefined) => [...(errors ?? [])].sort((a, b) => a.field.localeCompare(b.field, 'en', { numeric: true }));
    expect(sorted(await refusedWith(parseInput(Rows, { rows: bad, label: 3 })))).toEqual(expected);
    // The same list under the slice size, checked by class-validator in one go.
    const small = [...bad.slice(0, 10), bad[300], bad[1200]];
    expect(sorted(await refusedWith(parseInput(Rows, { rows: small, label: 3 })))).toEqual([
      expected[0],
      expected[1],
      { field: 'rows.10.name', message: 'name must be a string' },
      { field: 'rows.11.extra', message: 'unknown field extra' },
      { field: 'rows.11.name', message: 'name must be a string' },
      { field: 'rows.11.rank', message: 'rank must not be less than 0' },
    ]);
  });

  it('refuses a list over its size whole, without checking its rows', async () => {
    expect(await refusedWith(parseInput(Rows, { rows: [...rows(2000), { name: 1 }] }))).toEqual([
      { field: 'rows', message: 'rows must contain no more than 2000 elements' },
    ]);
  });
});
