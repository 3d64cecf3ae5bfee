import { AppError } from './errors.js';
import { containsPattern, CursorPageArgs, MAX_PAGE, nameOrDescriptionMatch, pageMeta, PageArgs, PageOnlyArgs, sortField, SortOrder } from './pagination.js';
import { MAX_CURSOR_LENGTH } from './cursor.js';
import { parseInput } from './validation.js';

async function refusal(promise: Promise<unknown>): Promise<AppError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof AppError) return error;
    throw error;
  }
  throw new Error('expected BAD_USER_INPUT');
}

describe('pageMeta', () => {
  it.each([
    [1, 20, 0, { totalPages: 0, hasNextPage: false, hasPreviousPage: false }],
    [1, 20, 20, { totalPages: 1, hasNextPage: false, hasPreviousPage: false }],
    [1, 20, 21, { totalPages: 2, hasNextPage: true, hasPreviousPage: false }],
    [2, 20, 21, { totalPages: 2, hasNextPage: false, hasPreviousPage: true }],
    [2, 10, 35, { totalPages: 4, hasNextPage: true, hasPreviousPage: true }],
    [5, 10, 35, { totalPages: 4, hasNextPage: false, hasPreviousPage: true }],
  ])('page %i of limit %i over %i rows', (page, limit, total, expected) => {
    expect(pageMeta(page, limit, total)).toEqual({ page, limit, total, ...expected, nextCursor: null, prevCursor: null, lastCursor: null });
  });

  it.each([
    [1, 20, false],
    [3, 10, true],
  ])('page %i of limit %i uncounted: its number, limit and hasPreviousPage (%s); what needs the count refuses to be read', (page, limit, previous) => {
    const meta = pageMeta(page, limit, null);
    expect({ page: meta.page, limit: meta.limit, hasPreviousPage: meta.hasPreviousPage }).toEqual({ page, limit, hasPreviousPage: previous });
    const refusal = 'this page was read without counting its list (RowJson.total false); ask for the count to read total, totalPages or hasNextPage';
    expect(() => meta.total).toThrow(refusal);
    expect(() => meta.totalPages).toThrow(refusal);
    expect(() => meta.hasNextPage).toThrow(refusal);
  });
});

describe('sortField', () => {
  const allowed = ['createdAt', 'name'] as const;

  it('answers the allowed field asked for, createdAt when none is', () => {
    expect(sortField('name', allowed)).toBe('name');
    expect(sortField(null, allowed)).toBe('createdAt');
    expect(sortField(undefined, allowed)).toBe('createdAt');
  });

  it('refuses any other field with 400 naming sortBy and the allowed fields', () => {
    let error: unknown;
    try {
      sortField('password', allowed);
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(AppError);
    expect(error).toMatchObject({ code: 'BAD_USER_INPUT', errors: [{ field: 'sortBy', message: 'sortBy must be one of createdAt, name' }] });
    expect(() => sortField('', allowed)).toThrow('sortBy must be one of createdAt, name');
  });
});

describe('containsPattern', () => {
  it('matches anywhere, with %, _ and \\ taken literally', () => {
    expect(containsPattern('bob')).toBe('%bob%');
    expect(containsPattern('50%_off\\now')).toBe('%50\\%\\_off\\\\now%');
    expect(containsPattern('')).toBe('%%');
  });
});

describe('nameOrDescriptionMatch', () => {
  it('matches the name or the description anywhere, the search taken literally; no search, no filter', () => {
    expect(nameOrDescriptionMatch('50%')).toEqual({ $or: [{ name: { $ilike: '%50\\%%' } }, { description: { $ilike: '%50\\%%' } }] });
    for (const none of ['', null, undefined]) expect(nameOrDescriptionMatch(none)).toEqual({});
  });
});

describe('PageArgs and PageOnlyArgs (the same rules on both doors)', () => {
  it('defaults to page 1 of 20, newest first, and reads query strings as numbers', async () => {
    const args = await parseInput(PageArgs, {}, 'query');
    expect({ ...args }).toEqual({ page: 1, limit: 20, sortOrder: SortOrder.desc });
    expect({ ...(await parseInput(PageArgs, { page: '3', limit: '100', sortOrder: 'asc', search: 'x', sortBy: 'name' }, 'query')) }).toEqual({
      page: 3,
      limit: 100,
      sortOrder: SortOrder.asc,
      search: 'x',
      sortBy: 'name',
    });
    expect({ ...(await parseInput(PageOnlyArgs, {}, 'query')) }).toEqual({ page: 1, limit: 20 });
    expect((await parseInput(PageArgs, { page: String(MAX_PAGE) }, 'query')).page).toBe(1_000_000);
  });

  it.each([
    [{ page: '0' }, 'page'],
    [{ page: String(MAX_PAGE + 1) }, 'page'],
    [{ page: 'abc' }, 'page'],
    [{ page: '1.5' }, 'page'],
    [{ page: null }, 'page'],
    [{ limit: '0' }, 'limit'],
    [{ limit: '101' }, 'limit'],
    [{ limit: null }, 'limit'],
    [{ search: 'x'.repeat(101) }, 'search'],
    [{ search: 5 }, 'search'],
    [{ sortBy: 'x'.repeat(51) }, 'sortBy'],
    [{ sortOrder: 'up' }, 'sortOrder'],
    [{ sortOrder: null }, 'sortOrder'],
  ])('PageArgs refuses %j naming %s', async (query, field) => {
    const error = await refusal(parseInput(PageArgs, query, 'query'));
    expect(error.code).toBe('BAD_USER_INPUT');
    expect(error.errors?.map((fieldError) => fieldError.field)).toEqual([field]);
  });

  it('takes the limits themselves', async () => {
    expect({ ...(await parseInput(PageArgs, { limit: '1', search: 'x'.repeat(100), sortBy: 'y'.repeat(50) }, 'query')) }).toMatchObject({ limit: 1 });
  });

  it.each([
    [{ page: '0' }, 'page'],
    [{ page: String(MAX_PAGE + 1) }, 'page'],
    [{ page: 'x' }, 'page'],
    [{ page: null }, 'page'],
    [{ limit: '0' }, 'limit'],
    [{ limit: '101' }, 'limit'],
    [{ limit: '2.5' }, 'limit'],
    [{ limit: null }, 'limit'],
    [{ search: 'x' }, 'search'],
  ])('PageOnlyArgs refuses %j naming %s', async (query, field) => {
    const error = await refusal(parseInput(PageOnlyArgs, query, 'query'));
    expect(error.errors?.map((fieldError) => fieldError.field)).toEqual([field]);
  });

  it('CursorPageArgs takes page, limit and a cursor, and nothing a sorted list takes', async () => {
    expect({ ...(await parseInput(CursorPageArgs, { cursor: 'abc', limit: '5' }, 'query')) }).toEqual({ page: 1, limit: 5, cursor: 'abc' });
    for (const [query, field] of [
      [{ cursor: 'x'.repeat(MAX_CURSOR_LENGTH + 1) }, 'cursor'],
      [{ cursor: 5 }, 'cursor'],
      [{ sortBy: 'name' }, 'sortBy'],
      [{ limit: '0' }, 'limit'],
    ] as const) {
      const error = await refusal(parseInput(CursorPageArgs, query, 'query'));
      expect([query, error.errors?.map((fieldError) => fieldError.field)]).toEqual([query, [field]]);
    }
  });
});
