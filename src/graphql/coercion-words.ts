import { isEnumType, type GraphQLSchema } from 'graphql';
import type { FieldError } from '../common/errors.js';

// GraphQL refuses a value of the wrong type itself, while coercing it, before the input class's
// rules run; REST lets class-validator refuse it. These put graphql-js's reasons in class-validator's
// words, so the same bad input answers the same message on both doors (CONTRACT.md §1).

/** graphql-js's reason for a scalar of the wrong type, and what class-validator says of the same value. */
const SCALAR_WORDS: [RegExp, string][] = [
  [/^String cannot represent a non string value/, 'must be a string'],
  [/^Int cannot represent non-integer value/, 'must be an integer number'],
  [/^Float cannot represent non numeric value/, 'must be a number conforming to the specified constraints'],
  [/^Boolean cannot represent a non boolean value/, 'must be a boolean value'],
];

/** A value outside an enum: as a variable (`Value "x" does not exist in "E" enum.`) or a literal (`Enum "E" cannot represent non-enum value`). */
const ENUM_REASON = /^(?:Value .* does not exist in "(\w+)" enum|Enum "(\w+)" cannot represent non-enum value)/s;

/**
 * The field error REST gives for the value at `path` (graphql-js's `a.b[0].c`, the variable's name
 * left out) that graphql-js refused for `reason`; null when the reason is not a wrong type.
 */
export function coercionFieldError(path: string, reason: string, schema?: GraphQLSchema): FieldError | null {
  const words = typeWords(reason, schema);
  if (!words) return null;
  const parts = path.replace(/\[(\d+)\]/g, '.$1').split('.');
  // A list of scalars is checked `each: true`: class-validator names the list, not the item.
  const item = parts.length > 1 && /^\d+$/.test(parts.at(-1)!);
  if (item) parts.pop();
  const property = parts.at(-1)!;
  return { field: parts.join('.'), message: `${item ? 'each value in ' : ''}${property} ${words}` };
}

function typeWords(reason: string, schema?: GraphQLSchema): string | null {
  for (const [pattern, words] of SCALAR_WORDS) if (pattern.test(reason)) return words;
  const match = ENUM_REASON.exec(reason);
  const type = match && schema?.getType(match[1] ?? match[2]!);
  // class-validator's IsEnum lists the enum's values, as TypeGraphQL registered them.
  if (isEnumType(type))
    return `must be one of the following values: ${type
      .getValues()
      .map((value) => String(value.value))
      .join(', ')}`;
  return null;
}
