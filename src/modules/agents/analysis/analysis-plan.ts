import type { Ajv, ValidateFunction } from 'ajv';
import { AppError } from '../../../common/errors.js';
import type { ChatMessage } from '../agent.ports.js';
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

// ajv (and its formats) load with the first plan checked, not with the app.
let ajvModules: Promise<{ Ajv: typeof Ajv; addFormats: (ajv: Ajv) => void }> | null = null;
function loadAjv() {
  ajvModules ??= Promise.all([import('ajv'), import('ajv-formats')]).then(([ajv, formats]) => ({
    Ajv: ajv.Ajv,
    addFormats: (formats.default as unknown as { default?: (ajv: Ajv) => void }).default ?? (formats.default as unknown as (ajv: Ajv) => void),
  }));
  return ajvModules;
}

/**
 * A fresh validator per schema: schemas are the tenants' own, and one ajv instance would keep them
 * all. Strict, so an unknown keyword (a typo such as "typ") is refused rather than ignored.
 */
async function newAjv(): Promise<Ajv> {
  const { Ajv, addFormats } = await loadAjv();
  const ajv = new Ajv({ strict: true, strictTypes: false, strictTuples: false, allErrors: false, logger: false });
  addFormats(ajv);
  return ajv;
}

function refuse(message: string): AppError {
  return AppError.badInput([{ field: FIELD, message: `${FIELD} ${message}` }]);
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** Keywords whose value is a map of sub-schemas one level of data deeper, or one sub-schema one level deeper. */
const DEEPER_MAPS = ['properties', 'patternProperties'];
const DEEPER_ONE = ['items', 'additionalProperties', 'additionalItems', 'contains', 'propertyNames'];
/** Keywords whose sub-schemas describe the same value (no level deeper). */
const SAME_LEVEL = ['anyOf', 'oneOf', 'allOf', 'not', 'if', 'then', 'else', 'definitions', '$defs'];

/** How many levels of data the schema describes (the top-level object is 1), and whether it uses $ref or $id. */
function measure(schema: unknown, level = 1): { depth: number; reference: string | null } {
  if (!isObject(schema)) return { depth: level, reference: null };
  let depth = level;
  let reference: string | null = '$ref' in schema ? '$ref' : '$id' in schema && level > 1 ? '$id' : null;
  const visit = (inner: unknown, at: number) => {
    const found = measure(inner, at);
    depth = Math.max(depth, found.depth);
    reference ??= found.reference;
  };
  for (const keyword of DEEPER_MAPS) if (isObject(schema[keyword])) for (const inner of Object.values(schema[keyword])) visit(inner, level + 1);
  for (const keyword of DEEPER_ONE) {
    const value = schema[keyword];
    if (Array.isArray(value)) value.forEach((inner) => visit(inner, level + 1));
    else if (isObject(value)) visit(value, level + 1);
  }
  if (Array.isArray(schema.prefixItems)) schema.prefixItems.forEach((inner) => visit(inner, level + 1));
  for (const keyword of SAME_LEVEL) {
    const value = schema[keyword];
    if (Array.isArray(value)) value.forEach((inner) => visit(inner, level));
    else if (keyword === 'definitions' || keyword === '$defs') {
      if (isObject(value)) Object.values(value).forEach((inner) => visit(inner, level));
    } else if (isObject(value)) visit(value, level);
  }
  return { depth, reference };
}

/**
 * Checks a plan's structuredData before it is saved; BAD_USER_INPUT on analysisPlan.structuredData
 * naming what is wrong (the same AppError on both doors, thrown by the service): over 16 KB, a top
 * level that is not `type: "object"` with 1 to 50 plainly named properties, nested deeper than 5
 * levels, a $ref or $id (the fields are embedded in the model's answer schema, where a reference
 * would point elsewhere), a document the JSON Schema meta-schema refuses (the path ends with the
 * bad keyword), or one ajv cannot compile (an unknown keyword or format).
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
  const { depth, reference } = measure(schema);
  if (reference) throw refuse(`uses "${reference}", which is not supported: write the fields out`);
  if (depth > MAX_SCHEMA_DEPTH) throw refuse(`is nested ${depth} levels deep; at most ${MAX_SCHEMA_DEPTH}`);
  const ajv = await newAjv();
  if (!ajv.validateSchema(schema)) {
    const [first] = ajv.errors ?? [];
    throw refuse(`is not a valid JSON Schema: ${first ? `${first.instancePath || '/'} ${first.message ?? 'is invalid'}` : 'it is refused by the meta-schema'}`);
  }
  try {
    ajv.compile(schema);
  } catch (error) {
    throw refuse(`is not a valid JSON Schema: ${(error instanceof Error ? error.message : String(error)).replace(/^strict mode: /, '')}`);
  }
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

/** The request that asks the model to fill a plan: the transcript as one message, the schema in the instructions too. */
export function analysisPrompt(plan: AnalysisPlan, transcript: ChatMessage[]): { system: string; messages: ChatMessage[] } {
  const system =
    'You analyse a finished phone call between an AI agent (assistant) and a person (user). ' +
    'Answer with one JSON object and nothing else, following this JSON Schema exactly: ' +
    `${JSON.stringify(answerSchema(plan))}. ` +
    'Take every value from what was said; where the call does not say, use the most neutral value the schema allows.';
  const text = transcript.map((message) => `${message.role}: ${message.content}`).join('\n');
  return { system, messages: [{ role: 'user', content: `Transcript:\n${text}` }] };
}

export interface CheckedAnswer {
  summary: string | null;
  data: Record<string, unknown> | null;
}

/**
 * A validator of the model's answer for a plan: the summary must be a string, the data valid against
 * the plan's schema (ajv, the same rules the plan was checked with). Answers the checked parts, or
 * the reason it is refused, naming the path and the keyword.
 */
export async function answerValidator(plan: AnalysisPlan): Promise<(answer: unknown) => { ok: true; value: CheckedAnswer } | { ok: false; reason: string }> {
  let validate: ValidateFunction | null = null;
  if (plan.structuredData) validate = (await newAjv()).compile(plan.structuredData);
  return (answer) => {
    if (!isObject(answer)) return { ok: false, reason: 'the answer is not a JSON object' };
    let summary: string | null = null;
    if (plan.summary) {
      if (typeof answer.summary !== 'string') return { ok: false, reason: '/summary must be a string' };
      summary = answer.summary.trim().slice(0, MAX_SUMMARY_LENGTH);
    }
    let data: Record<string, unknown> | null = null;
    if (validate) {
      if (!validate(answer.data)) {
        const [first] = validate.errors ?? [];
        return { ok: false, reason: first ? `/data${first.instancePath} ${first.message ?? 'is invalid'} (${first.keyword})` : '/data is invalid' };
      }
      data = answer.data as Record<string, unknown>;
    }
    return { ok: true, value: { summary, data } };
  };
}
