import type { FieldError } from '../../common/errors.js';

// A segment's filter: a small JSON grammar over a contact's fields and attributes (docs/campaigns.md).
// It is a tenant's stored input that later runs as SQL, so it is bounded when saved (size, conditions,
// nesting, value lengths) and compiled only to parameters: field names come from an allow-list,
// attribute keys are checked and passed as values, and no text of the filter is ever written into SQL.
//
//   Filter    = Condition | {"all": [Filter…]} | {"any": [Filter…]} | {"not": Filter}
//   Condition = {"field": F, "op": "eq", "value": V} | {"field": F, "op": "in", "value": [V…]}
//             | {"field": F, "op": "prefix", "value": "text"} | {"field": F, "op": "exists"}
//             | {"field": F, "op": "before" | "after", "value": "YYYY-MM-DD"}
//   F         = name | phone | timeZone | createdAt | optedOut | attributes.<key>[.<key>[.<key>]]

export type SegmentValue = string | number | boolean;
export type SegmentCondition =
  | { field: string; op: 'eq'; value: SegmentValue }
  | { field: string; op: 'in'; value: SegmentValue[] }
  | { field: string; op: 'prefix'; value: string }
  | { field: string; op: 'exists' }
  | { field: string; op: 'before' | 'after'; value: string };
export type SegmentFilter = SegmentCondition | { all: SegmentFilter[] } | { any: SegmentFilter[] } | { not: SegmentFilter };

export const SEGMENT_LIMITS = { bytes: 4096, conditions: 20, depth: 4, valueLength: 200, inValues: 100, keySegments: 3 } as const;

const ATTRIBUTE_KEY = /^[A-Za-z0-9_][A-Za-z0-9_-]{0,63}$/;
const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;

/** The contact's own fields a filter may name: their column and the operators that apply. */
const FIELDS: Record<string, { column: string; ops: readonly string[]; type: 'string' | 'boolean' | 'date'; nullable: boolean }> = {
  name: { column: 'name', ops: ['eq', 'in', 'prefix', 'exists'], type: 'string', nullable: true },
  phone: { column: 'phone', ops: ['eq', 'in', 'prefix'], type: 'string', nullable: false },
  timeZone: { column: 'time_zone', ops: ['eq', 'in', 'prefix', 'exists'], type: 'string', nullable: true },
  createdAt: { column: 'created_at', ops: ['before', 'after'], type: 'date', nullable: false },
  optedOut: { column: 'opted_out', ops: ['eq'], type: 'boolean', nullable: false },
};
const ATTRIBUTE_OPS = ['eq', 'in', 'prefix', 'exists', 'before', 'after'] as const;

function validDate(text: string): boolean {
  const match = DATE.exec(text);
  if (!match) return false;
  const date = new Date(`${text}T00:00:00Z`);
  return !Number.isNaN(date.getTime()) && date.toISOString().startsWith(text);
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * What is wrong with `raw` as a segment filter: every error names its place (`filter.all.1.value`),
 * stopping at the first ten. Empty when it is a filter within the limits.
 */
export function segmentFilterErrors(raw: unknown, field = 'filter'): FieldError[] {
  const errors: FieldError[] = [];
  const fail = (path: string, message: string): void => {
    errors.push({ field, message: `${path} ${message}` });
  };
  let bytes: number;
  try {
    bytes = Buffer.byteLength(JSON.stringify(raw) ?? '');
  } catch {
    return [{ field, message: `${field} is not JSON` }];
  }
  if (bytes > SEGMENT_LIMITS.bytes) return [{ field, message: `${field} is ${bytes} bytes of JSON; at most ${SEGMENT_LIMITS.bytes}` }];
  let conditions = 0;
  const walk = (node: unknown, path: string, depth: number): void => {
    if (errors.length >= 10) return;
    if (!isObject(node)) return fail(path, 'must be an object: a condition {field, op, value}, or {all: […]}, {any: […]} or {not: …}');
    const keys = Object.keys(node);
    if ('all' in node || 'any' in node || 'not' in node) {
      if (keys.length !== 1) return fail(path, `must have one key (all, any or not), not ${keys.join(', ')}`);
      if (depth >= SEGMENT_LIMITS.depth) return fail(path, `nests more than ${SEGMENT_LIMITS.depth} levels of all/any/not`);
      const [key] = keys as ['all' | 'any' | 'not'];
      if (key === 'not') return walk(node.not, `${path}.not`, depth + 1);
      const items = node[key];
      if (!Array.isArray(items) || items.length === 0) return fail(`${path}.${key}`, 'must be a non-empty array of filters');
      items.forEach((item, index) => walk(item, `${path}.${key}.${index}`, depth + 1));
      return;
    }
    conditions++;
    if (conditions > SEGMENT_LIMITS.conditions) {
      if (conditions === SEGMENT_LIMITS.conditions + 1) fail(field, `has more than ${SEGMENT_LIMITS.conditions} conditions`);
      return;
    }
    const unknown = keys.filter((key) => key !== 'field' && key !== 'op' && key !== 'value');
    if (unknown.length > 0) return fail(path, `has unknown keys: ${unknown.join(', ')} (a condition is {field, op, value})`);
    const name = node.field;
    if (typeof name !== 'string') return fail(`${path}.field`, 'must be a string');
    const known = FIELDS[name];
    let ops: readonly string[];
    let type: 'string' | 'boolean' | 'date' | 'any';
    if (known) {
      ops = known.ops;
      type = known.type;
    } else if (name.startsWith('attributes.')) {
      const segments = name.slice('attributes.'.length).split('.');
      if (segments.length > SEGMENT_LIMITS.keySegments) return fail(`${path}.field`, `names an attribute more than ${SEGMENT_LIMITS.keySegments} keys deep`);
      const bad = segments.find((segment) => !ATTRIBUTE_KEY.test(segment));
      if (bad !== undefined)
        return fail(
          `${path}.field`,
          `has an attribute key ${JSON.stringify(bad.slice(0, 70))}: keys are 1 to 64 letters, digits, _ or - (not starting with -)`,
        );
      ops = ATTRIBUTE_OPS;
      type = 'any';
    } else {
      return fail(`${path}.field`, `must be one of ${Object.keys(FIELDS).join(', ')} or attributes.<key>`);
    }
    const op = node.op;
    if (typeof op !== 'string' || !ops.includes(op)) return fail(`${path}.op`, `must be one of ${ops.join(', ')} for ${name}`);
    const value = node.value;
    if (op === 'exists') {
      if ('value' in node) fail(`${path}.value`, 'must be left out for exists');
      return;
    }
    const scalar = (item: unknown, at: string): void => {
      const expected = type === 'any' ? ['string', 'number', 'boolean'] : [type === 'date' ? 'string' : type];
      if (!expected.includes(typeof item) || (typeof item === 'number' && !Number.isFinite(item))) return fail(at, `must be a ${expected.join(', ')}`);
      if (typeof item === 'string' && (item.length === 0 || item.length > SEGMENT_LIMITS.valueLength))
        fail(at, `must be 1 to ${SEGMENT_LIMITS.valueLength} characters`);
    };
    if (op === 'in') {
      if (!Array.isArray(value) || value.length === 0 || value.length > SEGMENT_LIMITS.inValues)
        return fail(`${path}.value`, `must be an array of 1 to ${SEGMENT_LIMITS.inValues} values`);
      value.forEach((item, index) => scalar(item, `${path}.value.${index}`));
      return;
    }
    if (op === 'before' || op === 'after') {
      if (typeof value !== 'string' || !validDate(value)) fail(`${path}.value`, 'must be a date, YYYY-MM-DD');
      return;
    }
    if (op === 'prefix' && typeof value !== 'string') return fail(`${path}.value`, 'must be a string');
    scalar(value, `${path}.value`);
  };
  walk(raw, field, 0);
  return errors;
}

/** A filter compiled: SQL over the contact row `alias` with `?` for each parameter, in order. */
export interface CompiledFilter {
  sql: string;
  params: unknown[];
}

/** LIKE's wildcards taken literally. */
const likePrefix = (text: string) => `${text.replace(/[\\%_]/g, (character) => `\\${character}`)}%`;

/** The JSON object `{k1: {k2: value}}` for an attribute path: what `@>` (the GIN index) matches. */
function containing(keys: string[], value: SegmentValue): string {
  return JSON.stringify(keys.reduceRight<unknown>((inner, key) => ({ [key]: inner }), value));
}

/** `filter` (already valid) as SQL over the contacts row `alias`; parameters only. */
export function compileSegmentFilter(filter: SegmentFilter, alias: string): CompiledFilter {
  const params: unknown[] = [];
  const compile = (node: SegmentFilter): string => {
    if ('all' in node) return `(${node.all.map(compile).join(' and ')})`;
    if ('any' in node) return `(${node.any.map(compile).join(' or ')})`;
    if ('not' in node) return `(not ${compile(node.not)})`;
    return condition(node);
  };
  // Each condition is true or false, never null (so `not` is its complement): a nullable operand is coalesced.
  const condition = (node: SegmentCondition): string => {
    const own = FIELDS[node.field];
    if (own) {
      const column = `${alias}."${own.column}"`;
      const sure = (sql: string) => (own.nullable ? `coalesce(${sql}, false)` : sql);
      switch (node.op) {
        case 'eq':
          params.push(node.value);
          return sure(`${column} = ?`);
        case 'in':
          params.push(...node.value);
          return sure(`${column} in (${node.value.map(() => '?').join(', ')})`);
        case 'prefix':
          params.push(likePrefix(node.value));
          return sure(`${column} like ?`);
        case 'exists':
          return `${column} is not null`;
        case 'before':
          params.push(node.value);
          return `${column} < (?::date)::timestamp at time zone 'UTC'`;
        case 'after':
          params.push(node.value);
          return `${column} >= ((?::date) + 1)::timestamp at time zone 'UTC'`;
      }
    }
    const keys = node.field.slice('attributes.'.length).split('.');
    const path = keys.join('.');
    const text = `(${alias}."attributes" #>> string_to_array(?, '.'))`;
    switch (node.op) {
      case 'eq':
        params.push(containing(keys, node.value));
        return `${alias}."attributes" @> ?::jsonb`;
      case 'in':
        params.push(...node.value.map((value) => containing(keys, value)));
        return `(${node.value.map(() => `${alias}."attributes" @> ?::jsonb`).join(' or ')})`;
      case 'prefix':
        params.push(path, likePrefix(node.value));
        return `coalesce(${text} like ?, false)`;
      case 'exists':
        params.push(path);
        return `coalesce(jsonb_typeof(${alias}."attributes" #> string_to_array(?, '.')), 'null') <> 'null'`;
      case 'before':
      case 'after':
        // A value whose text starts with an ISO date (a date, or a date-time) compares by that date, as text: no cast can fail.
        params.push(path, path, node.value);
        return `coalesce(${text} ~ '^\\d{4}-\\d{2}-\\d{2}' and left(${text}, 10) ${node.op === 'before' ? '<' : '>'} ?, false)`;
    }
  };
  const sql = compile(filter);
  return { sql, params };
}
