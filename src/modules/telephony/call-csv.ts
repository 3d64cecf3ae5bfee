/** The columns of GET /api/executions/{id}/calls.csv, in order: one row per contact of the execution. */
export const CALL_CSV_COLUMNS = [
  'contactId', 'phone', 'contactStatus', 'attempts', 'lastCallId', 'lastCallStatus', 'outcome',
  'queuedAt', 'answeredAt', 'endedAt', 'durationSeconds', 'errorText', 'creditsCharged',
] as const;

export type CallCsvRow = Record<(typeof CALL_CSV_COLUMNS)[number], string | number | Date | null>;

/** A spreadsheet reads a cell starting with one of these as a formula (CSV injection). */
const FORMULA_START = /^[=+\-@\t\r]/;
/** An E.164 number is a plus and digits only: no formula can hide in it, so it is written as it is. */
const E164 = /^\+[1-9]\d{1,14}$/;

/**
 * One RFC 4180 field: quoted when it holds a comma, a quote or a line break (quotes doubled);
 * text that a spreadsheet would run as a formula gets a leading apostrophe first (a bare E.164
 * number is left as it is: a plus and digits). Numbers and
 * dates are the server's own and written as they are.
 */
export function csvField(value: string | number | Date | null | undefined): string {
  if (value === null || value === undefined) return '';
  if (typeof value === 'number') return String(value);
  if (value instanceof Date) return value.toISOString();
  const text = FORMULA_START.test(value) && !E164.test(value) ? `'${value}` : value;
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

/** One CSV record with its CRLF line break (RFC 4180). */
export function csvLine(values: readonly (string | number | Date | null | undefined)[]): string {
  return `${values.map(csvField).join(',')}\r\n`;
}

export const CALL_CSV_HEADER = csvLine(CALL_CSV_COLUMNS);

export function callCsvLine(row: CallCsvRow): string {
  return csvLine(CALL_CSV_COLUMNS.map((column) => row[column]));
}
