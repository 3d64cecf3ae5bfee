import { registerDecorator, type ValidationArguments, type ValidationOptions } from 'class-validator';
import { RESERVED_ROOTS, TEMPLATE_LIMITS, VARIABLE_NAME } from './template-language.js';

/** How many values one `variables` object may give. */
export const MAX_GIVEN_VARIABLES = 50;

/** Why a `variables` object is refused, or null: at most MAX_GIVEN_VARIABLES names of variables, each a string, number or boolean of at most valueChars characters. */
export function templateValuesProblem(value: unknown): string | null {
  if (!value || typeof value !== 'object' || Array.isArray(value)) return 'variables must be an object of names and values';
  const entries = Object.entries(value);
  if (entries.length > MAX_GIVEN_VARIABLES) return `variables gives ${entries.length} values; at most ${MAX_GIVEN_VARIABLES}`;
  for (const [name, item] of entries) {
    if (!VARIABLE_NAME.test(name) || RESERVED_ROOTS.has(name))
      return `variables.${name}: a name starts with a letter, holds only letters, digits and underscores (at most 64), and is not ${[...RESERVED_ROOTS].join(', ')}`;
    if (!['string', 'number', 'boolean'].includes(typeof item)) return `variables.${name} must be a string, a number or a boolean`;
    if (String(item).length > TEMPLATE_LIMITS.valueChars) return `variables.${name} is longer than ${TEMPLATE_LIMITS.valueChars} characters`;
  }
  return null;
}

/** The given values as the templates take them: strings. */
export function givenValues(value: Record<string, unknown> | null | undefined): Record<string, string> {
  return Object.fromEntries(Object.entries(value ?? {}).map(([name, item]) => [name, String(item)]));
}

/** A `variables` object of an input (an execution, a test message, a conversation, a message). */
export function IsTemplateValues(options?: ValidationOptions): PropertyDecorator {
  return (target, propertyName) =>
    registerDecorator({
      name: 'isTemplateValues',
      target: target.constructor,
      propertyName: String(propertyName),
      options: { message: (args: ValidationArguments) => templateValuesProblem(args.value) ?? 'variables is invalid', ...options },
      validator: { validate: (value: unknown) => templateValuesProblem(value) === null },
    });
}

/** The OpenAPI document's words for a `variables` object (it cannot read the custom validator). */
export const TEMPLATE_VALUES_SCHEMA = () => ({
  type: 'object' as const,
  maxProperties: MAX_GIVEN_VARIABLES,
  additionalProperties: { type: ['string', 'number', 'boolean'] as unknown as 'string', maxLength: TEMPLATE_LIMITS.valueChars },
  description: 'Values of the agent’s variables by name',
});
