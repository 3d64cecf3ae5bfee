import type { Ajv, Format, ValidateFunction } from 'ajv';
import type { FormatName } from 'ajv-formats/dist/formats.js';
import { linearRegExp } from './linear-regexp.js';
import { findSchemaProblem, type SchemaProblem, type TenantSchemaLimits } from './tenant-json-schema.js';

/**
 * ajv for the JSON Schemas tenants write (an analysis plan's structuredData; an HTTP tool's
 * parameters): `checkTenantSchema` is the one check at save, `compileTenantSchema` the validator at
 * run. Every `pattern` and `patternProperties` key runs on RE2 (ajv's `code.regExp`), so does every
 * format that is a regular expression; the formats that are functions (dates, times, uri, …) run
 * ajv-formats' own fixed expressions. Data strings are capped before anything matches them.
 */

/**
 * The formats a tenant's schema may name: ajv-formats' full set but `duration` and `url`, whose
 * expressions use lookaheads RE2 cannot run (use `pattern`, or `uri`). `hostname`'s lookahead only
 * bounds its length, which is checked beside it.
 */
export const TENANT_FORMATS = [
  'date',
  'time',
  'date-time',
  'iso-time',
  'iso-date-time',
  'uri',
  'uri-reference',
  'uri-template',
  'email',
  'hostname',
  'ipv4',
  'ipv6',
  'regex',
  'uuid',
  'json-pointer',
  'json-pointer-uri-fragment',
  'relative-json-pointer',
  'byte',
  'int32',
  'int64',
  'float',
  'double',
  'password',
  'binary',
] as const satisfies readonly FormatName[];

/** The lookahead of ajv-formats' hostname expression, which bounds its length only. */
const HOSTNAME_LENGTH = '(?=.{1,253}\\.?$)';

// ajv, its formats and the engine load with the first schema checked, not with the app.
let loaded: Promise<{ Ajv: typeof Ajv; formats: [string, Format][] }> | null = null;
function load() {
  loaded ??= Promise.all([import('ajv'), import('ajv-formats/dist/formats.js')]).then(([ajv, { fullFormats }]) => {
    const formats = TENANT_FORMATS.map((name): [string, Format] => {
      const format = fullFormats[name];
      if (name === 'hostname' && format instanceof RegExp) {
        if (!format.source.includes(HOSTNAME_LENGTH)) throw new Error('ajv-formats changed its hostname expression');
        const rest = linearRegExp(format.source.replace(HOSTNAME_LENGTH, ''), format.flags);
        return [name, (text: string) => (text.length <= 253 || (text.length === 254 && text.endsWith('.'))) && rest.test(text)];
      }
      if (format instanceof RegExp) {
        const linear = linearRegExp(format.source, format.flags);
        return [name, (text: string) => linear.test(text)];
      }
      return [name, format];
    });
    return { Ajv: ajv.Ajv, formats };
  });
  return loaded;
}

const regExp = Object.assign((pattern: string) => linearRegExp(pattern), { code: 'linearRegExp' });

/**
 * A fresh ajv per schema (one instance would keep every tenant's schema). Strict, so an unknown
 * keyword (a typo such as "typ") is refused rather than ignored; patterns on RE2; the strict check of
 * properties matching a patternProperties key is off, as it runs V8's engine over the schema's names.
 */
async function newAjv(): Promise<Ajv> {
  const { Ajv, formats } = await load();
  const ajv = new Ajv({
    strict: true,
    strictTypes: false,
    strictTuples: false,
    allowMatchingProperties: true,
    allErrors: false,
    logger: false,
    code: { regExp },
  });
  for (const [name, format] of formats) ajv.addFormat(name, format);
  return ajv;
}

const message = (error: unknown) => (error instanceof Error ? error.message : String(error)).replace(/^strict mode: /, '');

/**
 * The first problem of a tenant's schema, with its JSON Pointer, or null: the bounds of `limits`
 * (findSchemaProblem), then the draft-07 meta-schema, then ajv's compilation (an unknown keyword).
 */
export async function checkTenantSchema(schema: unknown, limits: TenantSchemaLimits): Promise<SchemaProblem | null> {
  const bounded = findSchemaProblem(schema, limits);
  if (bounded) return bounded;
  const ajv = await newAjv();
  try {
    if (!ajv.validateSchema(schema as Record<string, unknown>)) {
      const [first] = ajv.errors ?? [];
      return { path: first?.instancePath ?? '', message: `is not a valid JSON Schema: ${first?.message ?? 'it is refused by the meta-schema'}` };
    }
    ajv.compile(schema as Record<string, unknown>);
  } catch (error) {
    return { path: '', message: `is not a valid JSON Schema: ${message(error)}` };
  }
  return null;
}

/** A validator of data: null when valid, else the first problem with the data's JSON Pointer and ajv's keyword. */
export type TenantValidator = (data: unknown) => (SchemaProblem & { keyword: string }) | null;

/** The first string (a value or a key) longer than `max`, walked without recursion so deep data cannot overflow the stack. */
function longString(data: unknown, max: number): { path: string; length: number } | null {
  const stack: [unknown, string][] = [[data, '']];
  while (stack.length > 0) {
    const [value, path] = stack.pop()!;
    if (typeof value === 'string') {
      if (value.length > max) return { path, length: value.length };
    } else if (Array.isArray(value)) {
      value.forEach((inner, index) => stack.push([inner, `${path}/${index}`]));
    } else if (typeof value === 'object' && value !== null) {
      for (const [key, inner] of Object.entries(value)) {
        if (key.length > max) return { path, length: key.length };
        stack.push([inner, `${path}/${key.replace(/~/g, '~0').replace(/\//g, '~1')}`]);
      }
    }
  }
  return null;
}

/**
 * The synchronous validator of a schema that passed checkTenantSchema: strings longer than
 * limits.maxStringLength are refused before any pattern or format runs. Throws when ajv compiled an
 * asynchronous validator (a schema stored before `$async` was refused): its Promise is not an answer.
 */
export async function compileTenantSchema(schema: Record<string, unknown>, limits: Pick<TenantSchemaLimits, 'maxStringLength'>): Promise<TenantValidator> {
  const validate: ValidateFunction = (await newAjv()).compile(schema);
  if ((validate as { $async?: unknown }).$async) throw new Error('the schema compiled to an asynchronous validator');
  return (data) => {
    const long = longString(data, limits.maxStringLength);
    if (long) return { path: long.path, message: `is a string of ${long.length} characters; at most ${limits.maxStringLength}`, keyword: 'maxLength' };
    if (validate(data) === true) return null;
    const [first] = validate.errors ?? [];
    return { path: first?.instancePath ?? '', message: first?.message ?? 'is invalid', keyword: first?.keyword ?? 'schema' };
  };
}
