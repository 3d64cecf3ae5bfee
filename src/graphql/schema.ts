import 'reflect-metadata';
import { assertValidSchema, lexicographicSortSchema, printSchema, type GraphQLSchema } from 'graphql';
import { buildSchemaSync, getMetadataStorage, type NonEmptyArray } from 'type-graphql';
import { withCarrierEnums, type CarrierDescriptor } from '../modules/telephony/telephony.enums.js';
import { validateInstance } from '../common/validation.js';
import { describeSchema } from './describe.js';
import { chargeLargeValues } from './large-values.js';

/** Inputs and argument classes are validated by the same function the REST door uses. */
async function validateFn(value: unknown): Promise<void> {
  const values = Array.isArray(value) ? value : [value];
  // validateInstance remembers small argument sets it passed: a nested list field (`conversations(limit: 5)`
  // on each of 20 agents) is checked once, not once per row.
  for (const item of values) {
    if (item === null || typeof item !== 'object' || item instanceof Date) continue;
    // A JSONObject argument (segmentPreview's filter) is a plain object of no input class: it has no
    // decorators to check (every key would be "unknown"); its resolver validates it by its REST body class.
    if (Object.getPrototypeOf(item) === Object.prototype || Object.getPrototypeOf(item) === null) continue;
    await validateInstance(item);
  }
}

/**
 * TypeGraphQL refuses to build a schema with subscriptions without a PubSub, even when every
 * subscription brings its own `subscribe` (ours read the live event feed): this one says so if used.
 */
const NO_PUBSUB = {
  publish(): void {
    throw new Error('Subscriptions subscribe through the live event feed (services.live), not a PubSub');
  },
  subscribe(): AsyncIterable<unknown> {
    throw new Error('Subscriptions subscribe through the live event feed (services.live), not a PubSub');
  },
};

const built = new Map<string, Promise<GraphQLSchema>>();

/**
 * The schema of the given resolvers, built once per process for each list of carriers (TypeGraphQL
 * metadata is global): the enums `CarrierKind` and `ProgramCarrier` have the kinds of `carriers`.
 */
export function buildGatewaySchema(resolvers: NonEmptyArray<Function>, carriers: readonly CarrierDescriptor[]): Promise<GraphQLSchema> {
  const key = carriers.map((carrier) => `${carrier.kind}:${carrier.label}`).join('\n');
  let schema = built.get(key);
  if (!schema) {
    // A field without a @FieldResolver reads the property of its name, and no middleware or auth
    // checker is registered: graphql-js's default resolver does that without TypeGraphQL's wrapper,
    // which cost a closure and a promise check per field per row on list pages.
    for (const objectType of getMetadataStorage().objectTypes) objectType.simpleResolvers ??= true;
    // skipCheck: TypeGraphQL would check the schema by running the whole introspection query on it
    // (a quarter of a second of every start); assertValidSchema runs the same validation, which is
    // what that query can fail on, and throws the same way at start. Built synchronously: the
    // carriers' enums are filled only while it is built.
    const made = withCarrierEnums(carriers, () => buildSchemaSync({ resolvers, validateFn, emitSchemaFile: false, pubSub: NO_PUBSUB, skipCheck: true }));
    schema = Promise.resolve(made)
      .then(describeSchema)
      .then(chargeLargeValues)
      .then((described) => {
        assertValidSchema(described);
        return described;
      });
    built.set(key, schema);
  }
  return schema;
}

/** The SDL as checked in at schema/schema.graphql: sorted, with a final newline. */
export function printSdl(schema: GraphQLSchema): string {
  return printSchema(lexicographicSortSchema(schema)) + '\n';
}
