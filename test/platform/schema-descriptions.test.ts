import { isEnumType, isInputObjectType, isInterfaceType, isObjectType, isScalarType, isSpecifiedScalarType } from 'graphql';
import { gatewaySchema } from '../../src/doors.js';

/** Every type, field, argument and enum value of the built schema, named as a client would look it up. */
async function undescribed(): Promise<string[]> {
  const schema = await gatewaySchema();
  const missing: string[] = [];
  for (const type of Object.values(schema.getTypeMap())) {
    if (type.name.startsWith('__') || (isScalarType(type) && isSpecifiedScalarType(type))) continue;
    if (!type.description?.trim()) missing.push(type.name);
    if (isObjectType(type) || isInputObjectType(type) || isInterfaceType(type)) {
      for (const field of Object.values(type.getFields())) {
        if (!field.description?.trim()) missing.push(`${type.name}.${field.name}`);
        for (const argument of 'args' in field ? field.args : []) {
          if (!argument.description?.trim()) missing.push(`${type.name}.${field.name}(${argument.name})`);
        }
      }
    }
    if (isEnumType(type)) {
      for (const value of type.getValues()) if (!value.description?.trim()) missing.push(`${type.name}.${value.name}`);
    }
  }
  return missing;
}

describe('the GraphQL schema describes itself', () => {
  it('gives every type, field, argument and enum value a description', async () => {
    expect(await undescribed()).toEqual([]);
  });
});
