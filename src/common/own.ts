/**
 * `table[key]` when the table has that key of its own, else undefined: for a key a request names
 * (a path segment, a form field, an option). A plain object's lookup would also find what every
 * object inherits, so `constructor`, `toString` or `__proto__` answered a function or a prototype.
 */
export function own<T>(table: Readonly<Record<string, T>>, key: string): T | undefined {
  return Object.hasOwn(table, key) ? table[key] : undefined;
}
