import { countWords } from './builtin.model.js';
import { ModelOutputError, type ChatMessage, type GenerateObjectRequest, type GenerateObjectResult } from './model.types.js';
import { own } from '../../common/own.js';

type Schema = Record<string, unknown>;

/** A caller line that agrees: what the builtin models answer `true` for. */
const AGREES = /\b(yes|yeah|yep|sure|ok|okay|fine|agreed?|confirm(ed|s)?)\b/i;

/** Fixed values for the string formats ajv-formats checks, so a formatted field is always valid. */
const FORMATS: Record<string, string> = {
  date: '1970-01-01',
  'date-time': '1970-01-01T00:00:00Z',
  time: '00:00:00Z',
  email: 'caller@example.com',
  uri: 'https://example.com/',
  uuid: '00000000-0000-4000-8000-000000000000',
  ipv4: '192.0.2.1',
  hostname: 'example.com',
};

/**
 * What one answer may hold, in values and characters (the bound plans are checked with at save,
 * ANALYSIS_SCHEMA_LIMITS.maxSmallestValue): a schema stored before that bound, or asking for more,
 * is refused rather than built, so a schema cannot make the filler build a billion strings.
 */
export const MAX_FILLED_UNITS = 20_000;
/** The longest string it answers (the answer validator refuses longer ones: ANALYSIS_SCHEMA_LIMITS.maxStringLength). */
export const MAX_FILLED_STRING = 2000;

/** Counts what is built; throws past MAX_FILLED_UNITS. */
class Budget {
  private used = 0;
  take(units: number): void {
    this.used += Math.max(0, units);
    if (this.used > MAX_FILLED_UNITS)
      throw new ModelOutputError(`the schema asks for more than ${MAX_FILLED_UNITS} values and characters, more than the builtin model builds`);
  }
}

const isSchema = (value: unknown): value is Schema => typeof value === 'object' && value !== null && !Array.isArray(value);
const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** The first of the schema's types that is not null; none given: an object when it has properties, else a string. */
function typeOf(schema: Schema): string {
  const types = Array.isArray(schema.type) ? (schema.type as string[]) : typeof schema.type === 'string' ? [schema.type] : [];
  return types.find((type) => type !== 'null') ?? types[0] ?? (isSchema(schema.properties) ? 'object' : 'string');
}

/**
 * A deterministic value for `schema` from the caller's lines (the user messages), by these rules:
 * const → it; enum → the first value that a caller line says as a word (case ignored), else the
 * first; anyOf/oneOf → the first choice; boolean → true when a caller line agrees (yes, sure, ok,
 * fine, …); number/integer → the first number a caller says, held within minimum/maximum (0 or the
 * minimum when none); string → a fixed value for a known format, else the first caller line, cut to
 * maxLength (and 2000) and padded with dots to minLength; array → minItems copies of its item (none by
 * default); object → every property filled; null → null. Each value and character counts against
 * MAX_FILLED_UNITS, taken before it is built.
 */
export function fillSchema(schema: Schema, said: readonly string[], budget = new Budget()): unknown {
  budget.take(1);
  if ('const' in schema) return schema.const;
  if (Array.isArray(schema.enum) && schema.enum.length > 0) {
    const named = schema.enum.find((value) => said.some((line) => new RegExp(`\\b${escape(String(value))}\\b`, 'i').test(line)));
    return named ?? schema.enum[0];
  }
  for (const choices of [schema.anyOf, schema.oneOf]) {
    if (Array.isArray(choices) && isSchema(choices[0])) return fillSchema(choices[0], said, budget);
  }
  switch (typeOf(schema)) {
    case 'null':
      return null;
    case 'boolean':
      return said.some((line) => AGREES.test(line));
    case 'integer':
    case 'number': {
      const spoken = said.map((line) => /-?\d+(\.\d+)?/.exec(line)?.[0]).find((match) => match !== undefined);
      const minimum = typeof schema.minimum === 'number' ? schema.minimum : undefined;
      const maximum = typeof schema.maximum === 'number' ? schema.maximum : undefined;
      let value = spoken !== undefined ? Number(spoken) : (minimum ?? 0);
      if (typeOf(schema) === 'integer') value = Math.trunc(value);
      if (minimum !== undefined && value < minimum) value = minimum;
      if (maximum !== undefined && value > maximum) value = maximum;
      return value;
    }
    case 'array': {
      const count = typeof schema.minItems === 'number' ? schema.minItems : 0;
      budget.take(count);
      const item = isSchema(schema.items) ? schema.items : {};
      return Array.from({ length: count }, () => fillSchema(item, said, budget));
    }
    case 'object': {
      const properties = isSchema(schema.properties) ? schema.properties : {};
      return Object.fromEntries(
        Object.entries(properties)
          .filter(([, inner]) => isSchema(inner))
          .map(([key, inner]) => [key, fillSchema(inner as Schema, said, budget)]),
      );
    }
    default: {
      const format = typeof schema.format === 'string' ? own(FORMATS, schema.format) : undefined;
      if (format) return format;
      // A caller line is cut, not built; only the padding is.
      let text = (said[0] ?? '').slice(0, MAX_FILLED_STRING);
      if (typeof schema.maxLength === 'number') text = text.slice(0, schema.maxLength);
      if (typeof schema.minLength !== 'number' || text.length >= schema.minLength) return text;
      budget.take(schema.minLength - text.length);
      return text.padEnd(schema.minLength, '.');
    }
  }
}

/** The builtin models' JSON answer: the request's schema filled from the transcript's caller lines (fillSchema). */
export function generateBuiltinObject(request: GenerateObjectRequest): GenerateObjectResult {
  const said = request.transcript
    .filter((message: ChatMessage) => message.role === 'user')
    .map((message) => message.content.trim())
    .filter(Boolean);
  const object = fillSchema(request.schema, said);
  const inputTokens = countWords([request.system ?? '', ...request.messages.map((message) => message.content)].join('\n'));
  const outputTokens = countWords(JSON.stringify(object).replace(/[{}[\]",:]/g, ' '));
  return { object, usage: { inputTokens, outputTokens, totalTokens: inputTokens + outputTokens, model: request.model } };
}
