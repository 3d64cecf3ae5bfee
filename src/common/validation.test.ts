import { Type } from 'class-transformer';
import { IsInt, IsOptional, IsString, Min } from 'class-validator';
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
  const error = await promise.then(() => null, (caught: unknown) => caught);
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
