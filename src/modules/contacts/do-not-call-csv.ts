import { E164 } from './contact.inputs.js';

/** One row of an import, as read: its line in the file (from 1, the header included). */
export interface DoNotCallRow {
  line: number;
  phone: string;
  note: string | null;
}

/** A row that was not taken, and why. */
export interface RejectedRow {
  line: number;
  reason: string;
}

export interface ParsedDoNotCallCsv {
  rows: DoNotCallRow[];
  rejected: RejectedRow[];
}

const PHONE_HEADERS = new Set(['phone', 'number', 'phone_number', 'phonenumber', 'e164']);
const NOTE_MAX = 255;

/**
 * RFC 4180 records with their starting line numbers: fields split on commas, quoted fields may hold
 * commas, doubled quotes and line breaks; CRLF, LF and CR all end a record. A quote left open runs
 * to the end of the text, and that record is reported by the caller like any other bad row.
 */
export function csvRecords(text: string): { line: number; fields: string[]; unterminated: boolean }[] {
  const records: { line: number; fields: string[]; unterminated: boolean }[] = [];
  let line = 1;
  let start = 1;
  let fields: string[] = [];
  let field = '';
  let quoted = false;
  const end = (unterminated = false) => {
    fields.push(field);
    records.push({ line: start, fields, unterminated });
    fields = [];
    field = '';
  };
  for (let i = 0; i < text.length; i++) {
    const char = text[i]!;
    if (quoted) {
      if (char === '"' && text[i + 1] === '"') {
        field += '"';
        i++;
      } else if (char === '"') quoted = false;
      else {
        if (char === '\n' || (char === '\r' && text[i + 1] !== '\n')) line++;
        field += char;
      }
    } else if (char === '"' && field.trim() === '') {
      field = '';
      quoted = true;
    } else if (char === ',') {
      fields.push(field);
      field = '';
    } else if (char === '\r' || char === '\n') {
      if (char === '\r' && text[i + 1] === '\n') i++;
      end();
      line++;
      start = line;
    } else field += char;
  }
  if (quoted) end(true);
  else if (field !== '' || fields.length > 0) end();
  return records;
}

/**
 * The numbers of an import CSV. A first record naming a phone column (`phone`, `number`,
 * `phone_number`) is a header, whose `note` column, if any, is kept; without one the first column
 * is the number and the second the note. Blank lines are skipped; every other record that is not
 * an E.164 number is rejected with its line and the reason. Numbers are taken as written (spaces
 * around them trimmed), never guessed into E.164.
 */
export function parseDoNotCallCsv(text: string): ParsedDoNotCallCsv {
  const records = csvRecords(text.replace(/^\uFEFF/, ''));
  let phoneColumn = 0;
  let noteColumn: number | null = 1;
  const first = records[0];
  const header = first?.fields.map((name) => name.trim().toLowerCase());
  if (first && header && header.some((name) => PHONE_HEADERS.has(name))) {
    phoneColumn = header.findIndex((name) => PHONE_HEADERS.has(name));
    const note = header.indexOf('note');
    noteColumn = note >= 0 ? note : null;
    records.shift();
  }
  const rows: DoNotCallRow[] = [];
  const rejected: RejectedRow[] = [];
  for (const record of records) {
    if (record.fields.every((value) => value.trim() === '')) continue;
    if (record.unterminated) {
      rejected.push({ line: record.line, reason: 'a quoted field is never closed' });
      continue;
    }
    const phone = (record.fields[phoneColumn] ?? '').trim();
    if (phone === '') {
      rejected.push({ line: record.line, reason: 'no phone number' });
      continue;
    }
    if (!E164.test(phone)) {
      rejected.push({ line: record.line, reason: `${JSON.stringify(phone.slice(0, 40))} is not an E.164 number such as +14155550100` });
      continue;
    }
    const note = noteColumn === null ? '' : (record.fields[noteColumn] ?? '').trim();
    if (note.length > NOTE_MAX) {
      rejected.push({ line: record.line, reason: `the note is longer than ${NOTE_MAX} characters` });
      continue;
    }
    rows.push({ line: record.line, phone, note: note || null });
  }
  return { rows, rejected };
}
