import { E164 } from './contact.inputs.js';
import { phoneKey } from './phone-key.js';
import { isTimeZone } from './time-zone.js';

/** The bounds of one file that the operator sets (IMPORT_MAX_BYTES, IMPORT_MAX_ROWS: src/config.ts). */
export interface ImportFileLimits {
  /** The uploaded file, in bytes. */
  maxBytes: number;
  /** Data rows (the header not counted). */
  maxRows: number;
}

/** What one row of a CSV import may hold, the same whichever door created it (docs/campaigns.md#csv-import-jobs). */
export const IMPORT_LIMITS = {
  maxColumns: 100,
  /** Characters in one cell. */
  maxCell: 1000,
  /** Bytes in one record: past it the parser cannot tell where the next row starts (an unclosed quote), and the import fails. */
  maxRecordBytes: 1024 * 1024,
} as const;

const FIXED = ['externalId', 'name', 'phone', 'timeZone'] as const;
const ATTRIBUTE = /^attributes\.([A-Za-z0-9_][A-Za-z0-9_.-]{0,63})$/;

/** The header, read: where each known column is. */
export interface ImportColumns {
  names: string[];
  fixed: Partial<Record<(typeof FIXED)[number], number>>;
  attributes: [key: string, index: number][];
}

/** One data row, checked: its number in the file (the header is row 1, as a spreadsheet shows it). */
export interface ImportRow {
  row: number;
  phone: string;
  externalId: string | null;
  name: string | null;
  timeZone: string | null;
  attributes: Record<string, string>;
  /** As read (each cut to maxCell), for the refused-rows CSV should the database refuse it. */
  cells: string[];
}

export interface RefusedRow {
  row: number;
  reason: string;
  cells: string[];
}

/** The header's columns, or why the file cannot be imported. */
export function readHeader(cells: string[], key: 'phone' | 'externalId'): ImportColumns | { error: string } {
  const names = cells.map((cell) => cell.trim());
  if (names.length > IMPORT_LIMITS.maxColumns) return { error: `The header has ${names.length} columns; at most ${IMPORT_LIMITS.maxColumns}` };
  if (names.length === 1 && /[;\t|]/.test(names[0]!)) {
    return { error: `The header is one column (${JSON.stringify(names[0]!.slice(0, 80))}): columns are separated by commas` };
  }
  const columns: ImportColumns = { names, fixed: {}, attributes: [] };
  const unknown: string[] = [];
  const seen = new Set<string>();
  names.forEach((name, index) => {
    if (seen.has(name)) unknown.push(`${name} (twice)`);
    seen.add(name);
    const attribute = ATTRIBUTE.exec(name);
    if ((FIXED as readonly string[]).includes(name)) columns.fixed[name as (typeof FIXED)[number]] = index;
    else if (attribute) columns.attributes.push([attribute[1]!, index]);
    else unknown.push(name === '' ? '(an empty name)' : name.slice(0, 80));
  });
  if (unknown.length > 0) {
    return { error: `Unknown columns: ${unknown.join(', ')}; the columns are externalId, name, phone, timeZone and attributes.<key>` };
  }
  if (columns.fixed.phone === undefined) return { error: 'The header has no phone column' };
  if (key === 'externalId' && columns.fixed.externalId === undefined)
    return { error: 'The import is keyed on externalId and the header has no externalId column' };
  return columns;
}

/** A cell a spreadsheet would run as a formula (OWASP's CSV injection list); a signed number is not one. */
function isFormula(cell: string): boolean {
  return /^[=@\t\r]/.test(cell) || /^[+-](?![\d.])/.test(cell);
}

/** A row checked on its own (what the database decides — a contact already there, a repeat — comes later). */
export function readRow(cells: string[], row: number, columns: ImportColumns): ImportRow | RefusedRow {
  const kept = cells.map((cell) => cell.slice(0, IMPORT_LIMITS.maxCell));
  const refuse = (reason: string): RefusedRow => ({ row, reason, cells: kept });
  if (cells.length !== columns.names.length) return refuse(`The row has ${cells.length} cells; the header has ${columns.names.length}`);
  for (let index = 0; index < cells.length; index++) {
    if (cells[index]!.length > IMPORT_LIMITS.maxCell) return refuse(`${columns.names[index]} is longer than ${IMPORT_LIMITS.maxCell} characters`);
  }
  const cell = (name: (typeof FIXED)[number]) => {
    const index = columns.fixed[name];
    const value = index === undefined ? '' : cells[index]!.trim();
    return value === '' ? null : value;
  };
  const phone = cell('phone');
  if (phone === null) return refuse('phone is empty');
  if (!E164.test(phone)) return refuse(`phone ${JSON.stringify(phone.slice(0, 40))} is not E.164 (+ and 7 to 15 digits)`);
  const name = cell('name');
  const externalId = cell('externalId');
  const timeZone = cell('timeZone');
  for (const [column, value] of [
    ['name', name],
    ['externalId', externalId],
    ['timeZone', timeZone],
  ] as const) {
    if (value !== null && isFormula(value)) return refuse(`${column} starts with ${JSON.stringify(value[0])}: a spreadsheet formula is not imported`);
    if (value !== null && value.length > 255) return refuse(`${column} is longer than 255 characters`);
  }
  if (timeZone !== null && !isTimeZone(timeZone))
    return refuse(`timeZone ${JSON.stringify(timeZone.slice(0, 64))} is not an IANA time zone (for example Europe/Paris)`);
  const attributes: Record<string, string> = {};
  for (const [key, index] of columns.attributes) {
    const value = cells[index]!.trim();
    if (value === '') continue;
    if (isFormula(value)) return refuse(`attributes.${key} starts with ${JSON.stringify(value[0])}: a spreadsheet formula is not imported`);
    attributes[key] = value;
  }
  return { row, phone: phoneKey(phone), externalId, name, timeZone, attributes, cells: kept };
}

/** A cell written to the refused-rows CSV: quoted where needed, and a formula made text (a leading '). */
export function csvCell(value: string): string {
  const safe = isFormula(value) ? `'${value}` : value;
  return /[",\r\n]/.test(safe) ? `"${safe.replace(/"/g, '""')}"` : safe;
}
