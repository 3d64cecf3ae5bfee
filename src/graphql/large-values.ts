import { defaultFieldResolver, isObjectType, type GraphQLSchema } from 'graphql';
import { chargeAnswer, isLargeValue } from '../platform/answer-budget.js';

function charged<T>(value: T): T {
  chargeAnswer(value);
  return value;
}

/**
 * Every field marked LARGE_VALUE charges its value to the request's answer budget as it resolves,
 * once per place it takes in the answer (an alias, a row): past the limit the field throws the
 * refusal and the request stops (src/platform/response-size.ts answers it).
 */
export function chargeLargeValues(schema: GraphQLSchema): GraphQLSchema {
  for (const type of Object.values(schema.getTypeMap())) {
    if (!isObjectType(type) || type.name.startsWith('__')) continue;
    for (const field of Object.values(type.getFields())) {
      if (!isLargeValue(field.extensions)) continue;
      const resolve = field.resolve ?? defaultFieldResolver;
      field.resolve = (source, args, context, info) => {
        const value: unknown = resolve(source, args, context, info);
        return value instanceof Promise ? value.then(charged) : charged(value);
      };
    }
  }
  return schema;
}
