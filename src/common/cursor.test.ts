import { AppError } from './errors.js';
import { decodeCursor, encodeCursor, MAX_CURSOR_LENGTH, type Cursor } from './cursor.js';

const ID = '0b6f0a5e-6c3e-4b8e-9d7a-1f2e3d4c5b6a';

function refusal(run: () => unknown): AppError {
  try {
    run();
  } catch (error) {
    if (error instanceof AppError) return error;
    throw error;
  }
  throw new Error('expected a refusal');
}

describe('page cursors', () => {
  it.each<Cursor>([
    { direction: 'after', sortBy: 'createdAt', sortOrder: 'desc', key: ['2026-01-01T00:00:00.123456Z', ID], page: 2 },
    { direction: 'before', sortBy: 'name', sortOrder: 'asc', key: [null, ID], page: 7 },
    { direction: 'last', sortBy: 'name', sortOrder: 'asc', key: null, page: 1 },
  ])('round-trips %j through base64url text', (cursor) => {
    const text = encodeCursor(cursor);
    expect(text).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(decodeCursor(text, cursor.sortBy, cursor.sortOrder)).toEqual(cursor);
  });

  it('refuses a cursor made for another order, naming the order it was made for', () => {
    const text = encodeCursor({ direction: 'after', sortBy: 'name', sortOrder: 'asc', key: ['Ann', ID], page: 2 });
    const error = refusal(() => decodeCursor(text, 'name', 'desc'));
    expect(error).toMatchObject({
      code: 'BAD_USER_INPUT',
      errors: [{ field: 'cursor', message: expect.stringContaining('made for sortBy=name sortOrder=asc') }],
    });
    expect(refusal(() => decodeCursor(text, 'phone', 'asc')).errors?.[0]?.field).toBe('cursor');
  });

  const forged = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
  it.each([
    ['not base64url', 'a+b/c='],
    ['not JSON', Buffer.from('{').toString('base64url')],
    ['another version', forged([2, 'a', 'name', 'asc', ['x', ID], 2])],
    ['an unknown direction', forged([1, 'z', 'name', 'asc', ['x', ID], 2])],
    ['a key that is no row id', forged([1, 'a', 'name', 'asc', ['x', "1' or '1'='1"], 2])],
    ['a key value that is not text', forged([1, 'a', 'name', 'asc', [{ a: 1 }, ID], 2])],
    ['a value too long', forged([1, 'a', 'name', 'asc', ['x'.repeat(513), ID], 2])],
    ['a last page with a key', forged([1, 'l', 'name', 'asc', ['x', ID], 2])],
    ['page 0', forged([1, 'a', 'name', 'asc', ['x', ID], 0])],
    ['a fractional page', forged([1, 'a', 'name', 'asc', ['x', ID], 1.5])],
    ['an order that is none', forged([1, 'a', 'name', 'up', ['x', ID], 2])],
    ['too long', 'a'.repeat(MAX_CURSOR_LENGTH + 1)],
  ])('refuses %s with 400 naming cursor', (_label, text) => {
    const error = refusal(() => decodeCursor(text, 'name', 'asc'));
    expect(error).toMatchObject({
      code: 'BAD_USER_INPUT',
      errors: [{ field: 'cursor', message: expect.stringMatching(/^cursor is not a cursor this list answered/) }],
    });
  });
});
