import type { AnalysisPlan, StoredAnalysis } from '../agents/analysis/analysis.types.js';

/** The columns of GET /api/executions/{id}/calls.csv, in order: one row per contact of the execution. */
export const CALL_CSV_COLUMNS = [
  'contactId',
  'contactName',
  'phone',
  'contactStatus',
  'attempts',
  'lastCallId',
  'lastCallStatus',
  'outcome',
  'queuedAt',
  'answeredAt',
  'endedAt',
  'durationSeconds',
  'errorText',
  'creditsCharged',
  'firstAudioMs',
  'toolCalls',
  'transferredTo',
  'transferDestination',
  'transferredAt',
  'transferDialStatus',
] as const;

export type CallCsvRow = Record<(typeof CALL_CSV_COLUMNS)[number], string | number | Date | null> & {
  /** The last call's analysis, when its agent has a plan. */
  analysis?: StoredAnalysis | null;
};

/**
 * The analysis columns after the fixed ones, from the analysis plans of the program's agents: none
 * when no agent has a plan; else analysisStatus, summary (when a plan asks for one), one `data.<field>`
 * per top-level field of the plans' schemas (in the order the plans list them, each once), and
 * analysisError. Fields are prefixed so that a field named like a fixed column (outcome) stays apart.
 */
export interface AnalysisColumns {
  summary: boolean;
  fields: string[];
}

export function analysisColumns(plans: readonly (AnalysisPlan | null | undefined)[]): AnalysisColumns | null {
  const planned = plans.filter((plan): plan is AnalysisPlan => Boolean(plan && (plan.summary || plan.structuredData)));
  if (planned.length === 0) return null;
  const fields = new Set<string>();
  for (const plan of planned) {
    const properties = plan.structuredData?.properties;
    // In the order the plan was written (`fields`); the schema's keys as jsonb keeps them otherwise.
    const names = plan.fields ?? (properties && typeof properties === 'object' ? Object.keys(properties) : []);
    for (const name of names) fields.add(name);
  }
  return { summary: planned.some((plan) => plan.summary), fields: [...fields] };
}

function analysisHeader(columns: AnalysisColumns | null): string[] {
  if (!columns) return [];
  return ['analysisStatus', ...(columns.summary ? ['summary'] : []), ...columns.fields.map((field) => `data.${field}`), 'analysisError'];
}

/** A field's value as one cell: text, numbers and booleans as they are, objects and arrays as JSON. */
function cell(value: unknown): string | number | null {
  if (value === null || value === undefined) return null;
  if (typeof value === 'number' || typeof value === 'string') return value;
  if (typeof value === 'boolean') return String(value);
  return JSON.stringify(value);
}

function analysisCells(columns: AnalysisColumns | null, analysis: StoredAnalysis | null | undefined): (string | number | null)[] {
  if (!columns) return [];
  return [
    analysis?.status ?? null,
    ...(columns.summary ? [analysis?.summary ?? null] : []),
    ...columns.fields.map((field) => cell(analysis?.data && Object.hasOwn(analysis.data, field) ? analysis.data[field] : undefined)),
    analysis?.error ?? null,
  ];
}

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

/** The header line, with the analysis columns when the program's agents have plans. */
export function callCsvHeader(columns: AnalysisColumns | null = null): string {
  return csvLine([...CALL_CSV_COLUMNS, ...analysisHeader(columns)]);
}

export function callCsvLine(row: CallCsvRow, columns: AnalysisColumns | null = null): string {
  return csvLine([...CALL_CSV_COLUMNS.map((column) => row[column]), ...analysisCells(columns, row.analysis)]);
}
