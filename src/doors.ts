// The composition of the two doors: which resolvers, route tables and DataLoaders make up the
// gateway. src/graphql/ and src/rest/ are libraries the modules use; only this file (and app.ts,
// which serves what it lists) imports every module's door.
import type { NonEmptyArray } from 'type-graphql';
import type { Actor } from './common/actor.js';
import type { GraphQLLoaders } from './graphql/context.js';
import { buildGatewaySchema, printSdl } from './graphql/schema.js';
import type { CarrierDescriptor } from './modules/telephony/telephony.enums.js';
import { builtInCarrierModules } from './modules/telephony/carriers/built-in.js';
import type { RouteDefinition } from './rest/routes.js';
import type { Services } from './services.js';
import { AgentLoaders } from './modules/agents/agent.loaders.js';
import { ContactLoaders } from './modules/contacts/business-entity.loaders.js';
import { KnowledgeLoaders } from './modules/knowledge/knowledge.loaders.js';
import { TeamLoaders } from './modules/organizations/team.loaders.js';
import { ProgramLoaders } from './modules/programs/programs.loaders.js';
import { TriggerLoaders } from './modules/programs/triggers/trigger.loaders.js';
import { TelephonyLoaders } from './modules/telephony/telephony.loaders.js';
import { CallLoaders } from './modules/telephony/call.loaders.js';
import { RecordingLoaders } from './modules/recordings/recording.loaders.js';
import { AgentResolver } from './modules/agents/agent.resolver.js';
import { ConversationResolver } from './modules/agents/conversation.resolver.js';
import { ApiKeyResolver } from './modules/auth/api-key.resolver.js';
import { UserResolver } from './modules/auth/user.resolver.js';
import { KnowledgeResolver } from './modules/knowledge/knowledge.resolver.js';
import { AudienceResolver } from './modules/contacts/audience.resolver.js';
import { BusinessEntityResolver, ContactEntitiesResolver } from './modules/contacts/business-entity.resolver.js';
import { OrganizationResolver } from './modules/organizations/organization.resolver.js';
import { TeamResolver } from './modules/organizations/team.resolver.js';
import { ContactResolver } from './modules/contacts/contact.resolver.js';
import { DoNotCallResolver } from './modules/contacts/do-not-call.resolver.js';
import { ContactImportResolver } from './modules/contacts/contact-import.resolver.js';
import { CallFlowResolver } from './modules/programs/call-flow.resolver.js';
import { ExecutionResolver } from './modules/programs/execution.resolver.js';
import { ProgramResolver } from './modules/programs/program.resolver.js';
import { ProgramTriggersResolver, TriggerResolver } from './modules/programs/triggers/trigger.resolver.js';
import { CarrierConnectionResolver, PhoneNumberResolver, ProgramCallerIdResolver } from './modules/telephony/telephony.resolver.js';
import { CallResolver, ContactCallsResolver, ConversationCallResolver, ExecutionCallsResolver } from './modules/telephony/call.resolver.js';
import { agentRoutes } from './modules/agents/agents.rest.js';
import { conversationRoutes } from './modules/agents/conversations.rest.js';
import { authRoutes } from './modules/auth/auth.rest.js';
import { userRoutes } from './modules/auth/users.rest.js';
import { knowledgeRoutes } from './modules/knowledge/knowledge.rest.js';
import { businessEntityRoutes } from './modules/contacts/business-entities.rest.js';
import { contactRoutes } from './modules/contacts/contacts.rest.js';
import { doNotCallRoutes } from './modules/contacts/do-not-call.rest.js';
import { contactImportRoutes } from './modules/contacts/contact-imports.rest.js';
import { organizationRoutes } from './modules/organizations/organizations.rest.js';
import { teamRoutes } from './modules/organizations/teams.rest.js';
import { callFlowRoutes } from './modules/programs/call-flows.rest.js';
import { executionRoutes } from './modules/programs/executions.rest.js';
import { programRoutes } from './modules/programs/programs.rest.js';
import { triggerRoutes } from './modules/programs/triggers/triggers.rest.js';
import { carrierConnectionRoutes, phoneNumberRoutes } from './modules/telephony/telephony.rest.js';
import { callRoutes } from './modules/telephony/calls.rest.js';
import { directCallRoutes } from './modules/telephony/direct-calls.rest.js';
import { DirectCallResolver } from './modules/telephony/direct-call.resolver.js';
import { recordingRoutes } from './modules/recordings/recordings.rest.js';
import { CallRecordingResolver } from './modules/recordings/recording.resolver.js';
import { EventResolver } from './modules/events/event.resolver.js';
import { eventRoutes } from './modules/events/events.rest.js';
import { WebhookEndpointResolver } from './modules/webhooks/webhook.resolver.js';
import { webhookRoutes } from './modules/webhooks/webhooks.rest.js';
import { WebhookLoaders } from './modules/webhooks/webhook.loaders.js';
import { SubscriptionResolver } from './modules/events/subscriptions/subscription.resolver.js';
import { ConversationToolCallsResolver, McpServerResolver, ToolResolver } from './modules/tools/tool.resolver.js';
import { toolRoutes } from './modules/tools/tools.rest.js';
import { ToolLoaders } from './modules/tools/tool.loaders.js';
import { executionStreamRoutes } from './modules/events/subscriptions/execution-stream.rest.js';
import { WebCallResolver } from './modules/web-calls/web-call.resolver.js';
import { webCallRoutes } from './modules/web-calls/web-calls.rest.js';

/** Every GraphQL resolver class of the schema. */
export const RESOLVERS: NonEmptyArray<Function> = [
  ApiKeyResolver,
  UserResolver,
  AgentResolver,
  ConversationResolver,
  KnowledgeResolver,
  AudienceResolver,
  ContactResolver,
  DoNotCallResolver,
  ContactImportResolver,
  OrganizationResolver,
  TeamResolver,
  BusinessEntityResolver,
  ContactEntitiesResolver,
  CallFlowResolver,
  ProgramResolver,
  ExecutionResolver,
  TriggerResolver,
  ProgramTriggersResolver,
  CarrierConnectionResolver,
  PhoneNumberResolver,
  ProgramCallerIdResolver,
  CallResolver,
  DirectCallResolver,
  ExecutionCallsResolver,
  ConversationCallResolver,
  ContactCallsResolver,
  CallRecordingResolver,
  EventResolver,
  WebhookEndpointResolver,
  ToolResolver,
  McpServerResolver,
  ConversationToolCallsResolver,
  SubscriptionResolver,
  WebCallResolver,
];

/** Every REST route under /api, in the order they are matched. */
// Each table names the services its handlers call; the composition root's Services has them all.
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- one table of routes, each with its own body and query types
export const REST_ROUTES: RouteDefinition<any, any, Services>[] = [
  ...authRoutes,
  ...userRoutes,
  ...agentRoutes,
  ...conversationRoutes,
  ...knowledgeRoutes,
  ...contactRoutes,
  ...doNotCallRoutes,
  ...contactImportRoutes,
  ...businessEntityRoutes,
  ...organizationRoutes,
  ...teamRoutes,
  ...callFlowRoutes,
  ...programRoutes,
  ...executionRoutes,
  ...triggerRoutes,
  ...carrierConnectionRoutes,
  ...phoneNumberRoutes,
  ...callRoutes,
  ...directCallRoutes,
  ...recordingRoutes,
  ...eventRoutes,
  ...webhookRoutes,
  ...toolRoutes,
  ...executionStreamRoutes,
  ...webCallRoutes,
];

/** The DataLoaders of one GraphQL request, bound to its caller. */
export function createLoaders(services: Services, actor: Actor): GraphQLLoaders {
  // Each group is made on its first use: a request uses one or two of them, and made eagerly the ten
  // groups' DataLoaders were built, and collected, for every GraphQL request.
  const made: Partial<GraphQLLoaders> = {};
  return {
    get agents() {
      return (made.agents ??= new AgentLoaders(services.conversations, actor));
    },
    get teams() {
      return (made.teams ??= new TeamLoaders(services.teams, actor));
    },
    get contacts() {
      return (made.contacts ??= new ContactLoaders(services.businessEntities, actor));
    },
    get programs() {
      return (made.programs ??= new ProgramLoaders(services, actor));
    },
    get triggers() {
      return (made.triggers ??= new TriggerLoaders(services.triggers, actor));
    },
    get knowledge() {
      return (made.knowledge ??= new KnowledgeLoaders(services.knowledge, actor));
    },
    get telephony() {
      return (made.telephony ??= new TelephonyLoaders(services.carrierConnections, services.phoneNumbers, actor));
    },
    get calls() {
      return (made.calls ??= new CallLoaders(services.calls, actor));
    },
    get recordings() {
      return (made.recordings ??= new RecordingLoaders(services.recordings, actor));
    },
    get webhooks() {
      return (made.webhooks ??= new WebhookLoaders(services.webhookDeliveries, actor));
    },
    get tools() {
      return (made.tools ??= new ToolLoaders(services.toolCalls, actor));
    },
  };
}

/** The GraphQL schema of a gateway with these carriers (built once per process for each list); by default the built-in ones. */
export function gatewaySchema(carriers: readonly CarrierDescriptor[] = builtInCarrierModules()) {
  return buildGatewaySchema(
    RESOLVERS,
    carriers.map(({ kind, label }) => ({ kind, label })),
  );
}

/** The SDL checked in at schema/schema.graphql: the default gateway's (its carriers the built-in ones). */
export async function printGatewaySchema(): Promise<string> {
  return printSdl(await gatewaySchema());
}
