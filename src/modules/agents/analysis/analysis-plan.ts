import { AppError } from '../../../common/errors.js';
import type { TenantSchemaLimits } from '../../../common/tenant-json-schema.js';
import type { ChatMessage } from '../agent.ports.js';
import { TRANSCRIPT_IS_DATA, transcriptMessage } from '../prompt.js';
import type { AnalysisPlan, AnalysisPlanInput } from './analysis.types.js';

/** The limits of a plan's structuredData, documented on AnalysisPlanInput. */
export const MAX_SCHEMA_BYTES = 16_384;
export const MAX_SCHEMA_DEPTH = 5;
export const MAX_TOP_LEVEL_FIELDS = 50;
/** A top-level field becomes a CSV column and a JSON key: a plain identifier keeps both simple. */
const FIELD_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/;
/** Where a summary is cut: it is free text, and the model's length is its own. */
export const MAX_SUMMARY_LENGTH = 2000;

const FIELD = 'analysisPlan.structuredData';

/**
 * The bounds of a plan's schema below its top level (src/common/tenant-json-schema.ts): what the
 * builtin filler builds for it, and what the answer validator matches, stay small.
 */
export const ANALYSIS_SCHEMA_LIMITS: Omit<TenantSchemaLimits, 'formats'> = {
  maxDepth: MAX_SCHEMA_DEPTH,
  maxItems: 100,
  maxStringLength: 2000,
  maxProperties: MAX_TOP_LEVEL_FIELDS,
  maxSmallestValue: 20_000,
  maxPatternLength: 1000,
};

// The schema checks (ajv, re2js) load with the first plan checked, not with the app.
const schemaChecks = () => import('../../../common/tenant-schema-ajv.js');
async function limits(): Promise<TenantSchemaLimits> {
  return { ...ANALYSIS_SCHEMA_LIMITS, formats: (await schemaChecks()).TENANT_FORMATS };
}

function refuse(message: string): AppError {
  return AppError.badInput([{ field: FIELD, message: `${FIELD} ${message}` }]);
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * Checks a plan's structuredData before it is saved, and again before a stored plan is run (a plan
 * saved before a bound existed); BAD_USER_INPUT on analysisPlan.structuredData naming what is wrong
 * (the same AppError on both doors, thrown by the service): over 16 KB, a top level that is not
 * `type: "object"` with 1 to 50 plainly named properties, then the tenant-schema bounds with the path
 * of the schema at fault (nested deeper than 5 levels, `$ref`/`$id`/`$async`/`$schema`, minItems,
 * maxItems, minLength, minProperties … over their bounds or multiplying past them, a pattern RE2
 * cannot run, a format it does not support), then the draft-07 meta-schema and ajv's strict compile.
 */
export async function checkStructuredData(schema: Record<string, unknown>): Promise<void> {
  const bytes = Buffer.byteLength(JSON.stringify(schema));
  if (bytes > MAX_SCHEMA_BYTES) throw refuse(`is ${bytes} bytes of JSON; at most ${MAX_SCHEMA_BYTES}`);
  if (schema.type !== 'object') throw refuse('must have "type": "object" at its top level (the fields are its properties)');
  if (!isObject(schema.properties)) throw refuse('must list its fields in "properties"');
  const names = Object.keys(schema.properties);
  if (names.length < 1 || names.length > MAX_TOP_LEVEL_FIELDS) throw refuse(`must have 1 to ${MAX_TOP_LEVEL_FIELDS} properties; it has ${names.length}`);
  const badName = names.find((name) => !FIELD_NAME.test(name));
  if (badName !== undefined) throw refuse(`property ${JSON.stringify(badName)} must be a letter or _ then letters, digits or _ (at most 64)`);
  const problem = await (await schemaChecks()).checkTenantSchema(schema, await limits());
  if (problem) throw refuse(problem.path ? `at ${problem.path} ${problem.message}` : problem.message);
}

/** The stored plan for an input (summary on unless said otherwise), after checking its schema; null for none. */
export async function toAnalysisPlan(input: AnalysisPlanInput | null | undefined): Promise<AnalysisPlan | null> {
  if (!input) return null;
  if (input.structuredData) await checkStructuredData(input.structuredData);
  const properties = input.structuredData?.properties;
  const fields = isObject(properties) ? Object.keys(properties) : [];
  return { summary: input.summary ?? true, structuredData: input.structuredData ?? null, fields };
}

/** Whether a plan asks for anything: a plan with no summary and no fields leaves calls unanalyzed. */
export function plansSomething(plan: AnalysisPlan | null | undefined): plan is AnalysisPlan {
  return Boolean(plan && (plan.summary || plan.structuredData));
}

/** The JSON Schema of the model's whole answer: `summary` (a string) and/or `data` (the plan's fields). */
export function answerSchema(plan: AnalysisPlan): Record<string, unknown> {
  const properties: Record<string, unknown> = {};
  if (plan.summary) properties.summary = { type: 'string', description: 'A short summary of the call, two or three sentences' };
  if (plan.structuredData) properties.data = plan.structuredData;
  return { type: 'object', properties, required: Object.keys(properties), additionalProperties: false };
}

/** The request that asks the model to fill a plan: the transcript as one message of JSON data (untrusted), the schema in the instructions too. */
export function analysisPrompt(plan: AnalysisPlan, transcript: ChatMessage[]): { system: string; messages: ChatMessage[] } {
  const system =
    'You analyse a finished phone call between an AI agent (assistant) and a person (user). ' +
    'Answer with one JSON object and nothing else, following this JSON Schema exactly: ' +
    `${JSON.stringify(answerSchema(plan))}. ` +
    'Take every value from what was said; where the call does not say, use the most neutral value the schema allows. ' +
    TRANSCRIPT_IS_DATA;
  return { system, messages: [transcriptMessage(transcript)] };
}

export interface CheckedAnswer {
  summary: string | null;
  data: Record<string, unknown> | null;
}

/**
 * A validator of the model's answer for a plan: the summary must be a string, the data valid against
 * the plan's schema (ajv with patterns on RE2, strings capped first; the rules the plan was checked
 * with). Synchronous. Answers the checked parts, or the reason it is refused, naming the path and the keyword.
 */
export async function answerValidator(plan: AnalysisPlan): Promise<(answer: unknown) => { ok: true; value: CheckedAnswer } | { ok: false; reason: string }> {
  const validate = plan.structuredData ? await (await schemaChecks()).compileTenantSchema(plan.structuredData, ANALYSIS_SCHEMA_LIMITS) : null;
  return (answer) => {
    if (!isObject(answer)) return { ok: false, reason: 'the answer is not a JSON object' };
    let summary: string | null = null;
    if (plan.summary) {
      if (typeof answer.summary !== 'string') return { ok: false, reason: '/summary must be a string' };
      summary = answer.summary.trim().slice(0, MAX_SUMMARY_LENGTH);
    }
    let data: Record<string, unknown> | null = null;
    if (validate) {
      const problem = validate(answer.data);
      if (problem) return { ok: false, reason: `/data${problem.path} ${problem.message} (${problem.keyword})` };
      data = answer.data as Record<string, unknown>;
    }
    return { ok: true, value: { summary, data } };
  };
}
