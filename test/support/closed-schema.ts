type Json = Record<string, unknown>;

export interface ClosingRules {
  /** A key the description spells its own way (Fern's `x-fern-type`, OpenAI's `oneOf` by `type`): handled into `out`, true; else false. */
  key?: (key: string, value: unknown, out: Json, close: (schema: unknown) => unknown) => boolean;
  /** Last touches on each closed object (OpenAI's `nullable` as JSON Schema's `null`). */
  after?: (out: Json) => void;
}

/**
 * A vendored description's schemas as the service checks messages: every schema that lists its
 * properties is closed to other keys (`additionalProperties: false`), recursively, since the
 * published descriptions leave objects open while the services refuse a key they do not know.
 * Property names, examples and vendor extensions are data, not schemas: copied as they are.
 */
export function closeSchemas(schema: unknown, rules: ClosingRules = {}): unknown {
  const close = (inner: unknown): unknown => closeSchemas(inner, rules);
  if (Array.isArray(schema)) return schema.map(close);
  if (!schema || typeof schema !== 'object') return schema;
  const out: Json = {};
  for (const [key, value] of Object.entries(schema as Json)) {
    if (rules.key?.(key, value, out, close)) continue;
    if (key === 'properties' && value && typeof value === 'object') {
      out.properties = Object.fromEntries(Object.entries(value as Json).map(([name, property]) => [name, close(property)]));
    } else if (key === 'example' || key === 'examples' || key.startsWith('x-')) {
      out[key] = value;
    } else {
      out[key] = close(value);
    }
  }
  if (out.properties && !('additionalProperties' in out)) out.additionalProperties = false;
  rules.after?.(out);
  return out;
}
