import 'reflect-metadata';
import { lexicographicSortSchema, printSchema, type GraphQLSchema } from 'graphql';
import { buildSchema, getMetadataStorage, type NonEmptyArray } from 'type-graphql';
import { validateInstance } from '../common/validation.js';
import { describeSchema } from './describe.js';
import { AgentResolver } from '../modules/agents/agent.resolver.js';
import { ConversationResolver } from '../modules/agents/conversation.resolver.js';
import { ApiKeyResolver } from '../modules/auth/api-key.resolver.js';
import { UserResolver } from '../modules/auth/user.resolver.js';
import { KnowledgeResolver } from '../modules/knowledge/knowledge.resolver.js';
import { AudienceResolver } from '../modules/contacts/audience.resolver.js';
import { BusinessEntityResolver, ContactEntitiesResolver } from '../modules/contacts/business-entity.resolver.js';
import { OrganizationResolver } from '../modules/organizations/organization.resolver.js';
import { TeamResolver } from '../modules/organizations/team.resolver.js';
import { ContactResolver } from '../modules/contacts/contact.resolver.js';
import { CallFlowResolver } from '../modules/programs/call-flow.resolver.js';
import { ExecutionResolver } from '../modules/programs/execution.resolver.js';
import { ProgramResolver } from '../modules/programs/program.resolver.js';
import { ProgramTriggersResolver, TriggerResolver } from '../modules/programs/triggers/trigger.resolver.js';

export const RESOLVERS: NonEmptyArray<Function> = [
  ApiKeyResolver,
  UserResolver,
  AgentResolver,
  ConversationResolver,
  KnowledgeResolver,
  AudienceResolver,
  ContactResolver,
  OrganizationResolver,
  TeamResolver,
  BusinessEntityResolver,
  ContactEntitiesResolver,
  CallFlowResolver,
  ProgramResolver,
  ExecutionResolver,
  TriggerResolver,
  ProgramTriggersResolver,
];

/** Inputs and argument classes are validated by the same function the REST door uses. */
async function validateFn(value: unknown): Promise<void> {
  const values = Array.isArray(value) ? value : [value];
  for (const item of values) {
    if (item !== null && typeof item === 'object' && !(item instanceof Date)) await validateInstance(item);
  }
}

let built: Promise<GraphQLSchema> | undefined;

/** The schema, built once per process (TypeGraphQL metadata is global). */
export function buildGatewaySchema(): Promise<GraphQLSchema> {
  if (!built) {
    // A field without a @FieldResolver reads the property of its name, and no middleware or auth
    // checker is registered: graphql-js's default resolver does that without TypeGraphQL's wrapper,
    // which cost a closure and a promise check per field per row on list pages.
    for (const objectType of getMetadataStorage().objectTypes) objectType.simpleResolvers ??= true;
    built = buildSchema({ resolvers: RESOLVERS, validateFn, emitSchemaFile: false }).then(describeSchema);
  }
  return built;
}

/** The SDL checked in at schema/schema.graphql. */
export async function printGatewaySchema(): Promise<string> {
  return printSchema(lexicographicSortSchema(await buildGatewaySchema())) + '\n';
}
