import { csvCell, readHeader, readRow, type ImportColumns } from './contact-import-rows.js';

const columns = readHeader(['phone', 'name', 'timeZone', 'attributes.tier'], 'phone') as ImportColumns;

describe('CSV import rows', () => {
  it('maps the header by name and refuses unknown, repeated and missing columns', () => {
    expect(columns.fixed).toEqual({ phone: 0, name: 1, timeZone: 2 });
    expect(columns.attributes).toEqual([['tier', 3]]);
    expect(readHeader(['phone', 'email'], 'phone')).toEqual({ error: expect.stringContaining('Unknown columns: email') });
    expect(readHeader(['phone', 'phone'], 'phone')).toEqual({ error: expect.stringContaining('phone (twice)') });
    expect(readHeader(['name'], 'phone')).toEqual({ error: 'The header has no phone column' });
    expect(readHeader(['phone'], 'externalId')).toEqual({ error: expect.stringContaining('no externalId column') });
    expect(readHeader(['name;phone'], 'phone')).toEqual({ error: expect.stringContaining('separated by commas') });
    expect(
      readHeader(
        Array.from({ length: 101 }, (_, i) => `attributes.a${i}`),
        'phone',
      ),
    ).toEqual({ error: expect.stringContaining('101 columns') });
  });

  it('reads a good row, empty cells not given, and the number in its one stored form', () => {
    expect(readRow(['+4402071234567', 'Ada', 'Europe/London', ''], 2, columns)).toMatchObject({
      row: 2,
      phone: '+442071234567',
      externalId: null,
      name: 'Ada',
      timeZone: 'Europe/London',
      attributes: {},
    });
    expect(readRow(['+14155550100', '', '', 'gold'], 3, columns)).toMatchObject({ name: null, timeZone: null, attributes: { tier: 'gold' } });
  });

  it('refuses a row with its reason: E.164, time zone, formula, cell count, cell length', () => {
    const reason = (cells: string[]) => (readRow(cells, 7, columns) as { reason?: string }).reason;
    expect(reason(['4155550100', 'A', '', ''])).toMatch(/not E\.164/);
    expect(reason(['+14155550100', 'A', 'Mars/Olympus', ''])).toMatch(/not an IANA time zone/);
    expect(reason(['+14155550100', '=HYPERLINK("x")', '', ''])).toMatch(/name starts with "=": a spreadsheet formula/);
    expect(reason(['+14155550100', 'A', '', '@SUM(1)'])).toMatch(/attributes\.tier starts with "@"/);
    expect(reason(['+14155550100', 'A', '', '-3'])).toBeUndefined();
    expect(reason(['+14155550100', 'A'])).toBe('The row has 2 cells; the header has 4');
    expect(reason(['+14155550100', 'x'.repeat(1001), '', ''])).toMatch(/name is longer than 1000/);
    expect(reason(['', 'A', '', ''])).toBe('phone is empty');
  });

  it('writes a refused cell so that a spreadsheet shows it as text', () => {
    expect(csvCell('=1+1')).toBe("'=1+1");
    expect(csvCell('a,"b"')).toBe('"a,""b"""');
    expect(csvCell('+14155550100')).toBe('+14155550100');
  });
});
