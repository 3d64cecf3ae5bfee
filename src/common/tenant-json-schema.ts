import { linearPatternProblem } from './linear-regexp.js';

/**
 * The bounds a JSON Schema written by a tenant keeps before the gateway compiles it or builds a value
 * for it, so that no schema can crash, freeze or starve the shared process: an analysis plan's
 * `structuredData` (filled by a model, then by the builtin filler offline, and validated by ajv), and
 * an HTTP tool's `parameters` (validated against the arguments a model writes) use the same check with
 * limits of their own. Pure: it walks every subschema keyword ajv knows (draft-07 and 2019-09/2020-12)
 * and answers the first problem, with the JSON Pointer of the schema where it is. What is left (the
 * meta-schema, unknown keywords) is ajv's, after this (tenant-schema-ajv.ts).
 */

export interface TenantSchemaLimits {
  /** Levels of data the schema may describe; the top level is 1 (`properties`, `items` … go one down). */
  maxDepth: number;
  /** The bound of minItems, maxItems, minContains, maxContains. */
  maxItems: number;
  /** The bound of minLength and maxLength; strings of validated data longer than it are refused before any pattern runs. */
  maxStringLength: number;
  /** The bound of minProperties, maxProperties and of the properties an object lists. */
  maxProperties: number;
  /**
   * What the smallest value the schema allows may hold, in values and characters: nested minItems
   * multiply, an object counts every property it lists, a string its minLength.
   */
  maxSmallestValue: number;
  /** The longest `pattern` or `patternProperties` key, in characters. */
  maxPatternLength: number;
  /** The `format` names the validator checks (each in linear time). */
  formats: readonly string[];
}

export interface SchemaProblem {
  /** JSON Pointer of the schema (or keyword) at fault; '' for the top level. */
  path: string;
  message: string;
}

type Schema = Record<string, unknown>;
const isSchema = (value: unknown): value is Schema => typeof value === 'object' && value !== null && !Array.isArray(value);

/** Subschema keywords: a map of subschemas, one subschema, or a list of them; `deeper` when they describe values one level down. */
const MAPS: [string, boolean][] = [
  ['properties', true],
  ['patternProperties', true],
  ['definitions', false],
  ['$defs', false],
  ['dependentSchemas', false],
  // draft-07: a property's value is a subschema, or a list of required names (not a schema, skipped).
  ['dependencies', false],
];
const ONE: [string, boolean][] = [
  ['items', true],
  ['additionalItems', true],
  ['unevaluatedItems', true],
  ['contains', true],
  ['additionalProperties', true],
  ['unevaluatedProperties', true],
  ['propertyNames', true],
  ['contentSchema', true],
  ['not', false],
  ['if', false],
  ['then', false],
  ['else', false],
];
const LISTS: [string, boolean][] = [
  ['items', true],
  ['prefixItems', true],
  ['allOf', false],
  ['anyOf', false],
  ['oneOf', false],
];

/**
 * Keywords refused anywhere: a reference (the schema is embedded in another, where it would point
 * elsewhere, and a remote one would be fetched), `$async` (ajv's validator would answer a Promise,
 * read as valid, whose rejection nobody awaits), `$schema` (the dialect is the gateway's). `$id` is
 * allowed at the top level only, where it names nothing another part refers to.
 */
const REFUSED: Record<string, string> = {
  $ref: 'uses "$ref", which is not supported: write the fields out',
  $dynamicRef: 'uses "$dynamicRef", which is not supported: write the fields out',
  $recursiveRef: 'uses "$recursiveRef", which is not supported: write the fields out',
  $anchor: 'uses "$anchor", which is not supported: write the fields out',
  $dynamicAnchor: 'uses "$dynamicAnchor", which is not supported: write the fields out',
  $recursiveAnchor: 'uses "$recursiveAnchor", which is not supported: write the fields out',
  $async: 'uses "$async", which is not supported: a schema is checked synchronously',
  $schema: 'uses "$schema", which is not supported: remove it (the dialect is draft-07)',
  $vocabulary: 'uses "$vocabulary", which is not supported: remove it',
};

const BOUNDED: [string, keyof TenantSchemaLimits][] = [
  ['minItems', 'maxItems'],
  ['maxItems', 'maxItems'],
  ['minContains', 'maxItems'],
  ['maxContains', 'maxItems'],
  ['minLength', 'maxStringLength'],
  ['maxLength', 'maxStringLength'],
  ['minProperties', 'maxProperties'],
  ['maxProperties', 'maxProperties'],
];

const pointer = (path: string, key: string | number) => `${path}/${String(key).replace(/~/g, '~0').replace(/\//g, '~1')}`;
const count = (value: unknown) => (typeof value === 'number' && value > 0 ? value : 0);

/**
 * The subschemas of a schema, each with its path and whether it describes a level deeper. What is no
 * schema (a draft-07 dependency's list of names, a boolean schema, a keyword of the wrong shape) is
 * listed too, and skipped by the walk; the meta-schema refuses a wrong shape after it.
 */
function children(schema: Schema, path: string): { schema: unknown; path: string; deeper: boolean }[] {
  const found: { schema: unknown; path: string; deeper: boolean }[] = [];
  for (const [keyword, deeper] of MAPS) {
    const map = schema[keyword];
    if (!isSchema(map)) continue;
    for (const [key, inner] of Object.entries(map)) found.push({ schema: inner, path: pointer(pointer(path, keyword), key), deeper });
  }
  for (const [keyword, deeper] of ONE) found.push({ schema: schema[keyword], path: pointer(path, keyword), deeper });
  for (const [keyword, deeper] of LISTS) {
    const list = schema[keyword];
    if (Array.isArray(list)) list.forEach((inner, index) => found.push({ schema: inner, path: pointer(pointer(path, keyword), index), deeper }));
  }
  return found;
}

/** The problems of this schema's own keywords, not of its subschemas. */
function ownProblem(schema: Schema, path: string, limits: TenantSchemaLimits): SchemaProblem | null {
  for (const keyword of Object.keys(REFUSED)) {
    if (Object.hasOwn(schema, keyword)) return { path, message: REFUSED[keyword]! };
  }
  if (Object.hasOwn(schema, '$id') && path !== '') return { path, message: 'uses "$id", which is not supported: write the fields out' };
  for (const [keyword, limit] of BOUNDED) {
    const value = schema[keyword];
    if (typeof value === 'number' && value > (limits[limit] as number))
      return { path: pointer(path, keyword), message: `is ${value}; at most ${limits[limit] as number}` };
  }
  if (isSchema(schema.properties)) {
    const listed = Object.keys(schema.properties).length;
    if (listed > limits.maxProperties) return { path: pointer(path, 'properties'), message: `lists ${listed} properties; at most ${limits.maxProperties}` };
  }
  const patterns: [string, unknown][] = [[pointer(path, 'pattern'), schema.pattern]];
  if (isSchema(schema.patternProperties)) {
    for (const key of Object.keys(schema.patternProperties)) patterns.push([pointer(pointer(path, 'patternProperties'), key), key]);
  }
  for (const [at, pattern] of patterns) {
    if (typeof pattern !== 'string') continue;
    if (pattern.length > limits.maxPatternLength)
      return { path: at, message: `is a pattern of ${pattern.length} characters; at most ${limits.maxPatternLength}` };
    const problem = linearPatternProblem(pattern);
    if (problem) return { path: at, message: `is a pattern the linear-time engine (RE2) cannot run: ${problem}` };
  }
  if (typeof schema.format === 'string' && !limits.formats.includes(schema.format)) {
    return { path: pointer(path, 'format'), message: `is "${schema.format}", which is not supported; the formats are ${limits.formats.join(', ')}` };
  }
  return null;
}

/**
 * How many values and characters the smallest value the schema allows holds, as the builtin filler
 * would build it: an object every property it lists, an array minItems of its items, a string its
 * minLength; a choice (anyOf, oneOf, allOf) its largest. Saturates past `cap`, so nesting cannot overflow.
 */
function smallestValue(schema: unknown, cap: number): number {
  if (!isSchema(schema)) return 1;
  let size = 1 + count(schema.minLength);
  if (isSchema(schema.properties)) for (const inner of Object.values(schema.properties)) size += smallestValue(inner, cap);
  const items = [schema.items, schema.prefixItems].flatMap((inner) => (Array.isArray(inner) ? inner : [inner]));
  size += count(schema.minItems) * Math.max(...items.map((inner) => smallestValue(inner, cap)));
  for (const keyword of ['allOf', 'anyOf', 'oneOf']) {
    const list = schema[keyword];
    if (Array.isArray(list)) size = Math.max(size, ...list.map((inner) => smallestValue(inner, cap)));
  }
  return Math.min(size, cap + 1);
}

/** The first problem of `schema` against `limits` (depth-first, in the order of its keywords), or null when it keeps them all. */
export function findSchemaProblem(schema: unknown, limits: TenantSchemaLimits): SchemaProblem | null {
  const visit = (inner: unknown, path: string, level: number): SchemaProblem | null => {
    if (!isSchema(inner)) return null;
    if (level > limits.maxDepth) return { path, message: `is nested ${level} levels deep; at most ${limits.maxDepth}` };
    const own = ownProblem(inner, path, limits);
    if (own) return own;
    for (const child of children(inner, path)) {
      const problem = visit(child.schema, child.path, child.deeper ? level + 1 : level);
      if (problem) return problem;
    }
    return null;
  };
  const problem = visit(schema, '', 1);
  if (problem) return problem;
  const smallest = smallestValue(schema, limits.maxSmallestValue);
  if (smallest > limits.maxSmallestValue) {
    return {
      path: '',
      message: `needs more than ${limits.maxSmallestValue} values and characters in its smallest valid value (nested minItems, minLength and listed properties multiply); at most ${limits.maxSmallestValue}`,
    };
  }
  return null;
}
