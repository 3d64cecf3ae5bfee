import type { EntityManager } from '@mikro-orm/postgresql';
import type { DatabaseKind } from './db/orm.js';
import type { Logger } from 'pino';
import type { Config } from './config.js';
import { AgentService } from './modules/agents/agent.service.js';
import { ConversationService } from './modules/agents/conversation.service.js';
import { AnalysisWorker } from './modules/agents/analysis/analysis-worker.js';
import { ApiKeyService } from './modules/auth/api-key.service.js';
import { KeyCache } from './modules/auth/key-cache.js';
import { AuthService } from './modules/auth/auth.service.js';
import { UserService } from './modules/auth/user.service.js';
import { AudienceService } from './modules/contacts/audience.service.js';
import { ContactService } from './modules/contacts/contact.service.js';
import { DoNotCallService } from './modules/contacts/do-not-call.service.js';
import { OrganizationImports } from './modules/contacts/organization-imports.js';
import { ContactImportService } from './modules/contacts/contact-import.service.js';
import { ContactImportWorker, IMPORT_LANES } from './modules/contacts/contact-import-worker.js';
import { TokenService } from './modules/auth/token.service.js';
import { IdempotencyService } from './modules/idempotency/idempotency.service.js';
import { KnowledgeService } from './modules/knowledge/knowledge.service.js';
import { MAX_CANDIDATES } from './modules/knowledge/retrieval.js';
import { ModelService } from './modules/models/model.service.js';
import { BusinessEntityService } from './modules/contacts/business-entity.service.js';
import { OrganizationService } from './modules/organizations/organization.service.js';
import { CreditService } from './modules/organizations/credit.service.js';
import { TeamService } from './modules/organizations/team.service.js';
import { CallFlowService } from './modules/programs/call-flow.service.js';
import { ExecutionEvents } from './modules/programs/execution-events.js';
import { ExecutionService } from './modules/programs/execution.service.js';
import { ExecutionSnapshots } from './modules/programs/execution-snapshot.js';
import { ProgramService } from './modules/programs/program.service.js';
import { ProvisioningService } from './modules/organizations/provisioning.service.js';
import { TriggerService } from './modules/programs/triggers/trigger.service.js';
import { CarrierConnectionService } from './modules/telephony/carrier-connection.service.js';
import { PhoneNumberService } from './modules/telephony/phone-number.service.js';
import { builtInCarrierModules } from './modules/telephony/carriers/built-in.js';
import { adaptersOf, recordingCarriersOf, withCarrierModules } from './modules/telephony/carriers/index.js';
import type { CarrierModule } from './modules/telephony/carriers/carrier-module.js';
import { CallService } from './modules/telephony/call.service.js';
import { DirectCallService } from './modules/telephony/direct-call.service.js';
import { ProgramReadiness } from './modules/programs/program-readiness.js';
import { RecordingService } from './modules/recordings/recording.service.js';
import { EventService } from './modules/events/event.service.js';
import { WebhookDeliveryService } from './modules/webhooks/webhook-delivery.service.js';
import { WebhookEndpointService } from './modules/webhooks/webhook-endpoint.service.js';
import { LiveFeed } from './modules/events/subscriptions/live-feed.js';
import { LiveService } from './modules/events/subscriptions/live.service.js';
import { LiveConnections } from './platform/live-connections.js';
import { WebCallService } from './modules/web-calls/web-call.service.js';
import { SealedSecretService } from './modules/sealed-secrets/sealed-secret.service.js';
import { createVoiceParties, streamingMissing } from './modules/voice/streaming/parties.js';
import { ToolService } from './modules/tools/tool.service.js';
import { McpServerService } from './modules/tools/mcp-server.service.js';
import { ToolRunner } from './modules/tools/tool-runner.js';
import { ToolCallStore } from './modules/tools/tool-call.store.js';
import { ToolCatalog } from './modules/tools/tool-catalog.js';
import { ToolCallService } from './modules/tools/tool-call.service.js';
import type { ToolPort } from './modules/agents/agent.ports.js';

/**
 * The service layer both doors call. Services hold the ORM's global EntityManager, which
 * resolves to the request's own fork inside a request context.
 */
/** What a caller of createServices adds to the gateway: carrier modules serving their kinds in place of the built-in ones. */
export interface ServiceExtensions {
  carrierModules?: CarrierModule[];
  /** The database's kind: how many chunks of a CSV import are written at once (IMPORT_LANES); one when not said. */
  databaseKind?: DatabaseKind;
}

export function createServices(em: EntityManager, config: Config, logger?: Logger, extensions: ServiceExtensions = {}) {
  // Every execution state change made through the service layer (users, live triggers) is logged here.
  const executionEvents = new ExecutionEvents(logger);
  const executionSnapshots = new ExecutionSnapshots(em, executionEvents);
  const tokens = new TokenService(config);
  const keyCache = new KeyCache(config.apiKeyCacheMs);
  const apiKeys = new ApiKeyService(em, { maxPerUser: config.apiKeysMaxPerUser }, keyCache);
  const models = new ModelService(config.providers, { maxOutputTokens: config.modelMaxOutputTokens });
  const knowledge = new KnowledgeService(em, { ...config.knowledge, maxCandidates: MAX_CANDIDATES });
  // The agents module sees models and knowledge through its ports; tests wrap these to observe prompts.
  const agentPorts = { model: models, knowledge };
  // The streaming voice pipeline's recognizers and synthesizers (each SDK loads with the class that uses it).
  const voiceParties = createVoiceParties(config.providers);
  const triggers = new TriggerService(em, executionEvents);
  // Each carrier's REST side, webhooks, call control and media framing, by the kind its routes name; everything else takes its adapters from here.
  const carrierModules = withCarrierModules(builtInCarrierModules(config.telephony), extensions.carrierModules ?? []);
  const carriers = adaptersOf(carrierModules);
  // Fills the analysis plans of ended calls in the background; the gateway stops it, main.ts starts its recovery tick.
  const analyses = new AnalysisWorker({ em, model: models, logger });
  const carrierConnections = new CarrierConnectionService(em, { modules: carrierModules, credentialsKey: () => config.telephony.credentialsKey });
  const readinessSettings = {
    carrierKinds: Object.keys(carrierModules),
    publicUrl: () => config.telephony.publicUrl,
    missingFor: (model: string) => models.missingFor(model),
    streamingMissing: (voice: Parameters<typeof streamingMissing>[1]) => streamingMissing(voiceParties, voice),
  };
  const programs = new ProgramService(em, (tx, programId) => triggers.syncProgram(tx, programId), readinessSettings);
  // One import per organization at a time, for contacts and the do-not-call list alike.
  const imports = new OrganizationImports(em);
  // CSV imports run in the background; the gateway stops the worker, main.ts starts its poll.
  const contactImportWorker = new ContactImportWorker(
    em,
    config.contactImports,
    logger,
    undefined,
    extensions.databaseKind ? IMPORT_LANES[extensions.databaseKind] : 1,
  );
  // HTTP tools and MCP servers, and what runs them for the agents (every door and voice pipeline).
  const toolOptions = { credentialsKey: () => config.telephony.credentialsKey, allowPrivate: config.tools.allowPrivate };
  const mcpServers = new McpServerService(em, { ...toolOptions, refreshMs: config.tools.mcpRefreshMs, logger });
  const toolRunner = new ToolRunner(em, mcpServers, { ...toolOptions, logger });
  const toolCallStore = new ToolCallStore(em);
  const toolCatalog = new ToolCatalog(em);
  const toolPort: ToolPort = {
    toolsFor: (agent, session) => toolRunner.toolsFor(agent, session),
    store: (record) => toolCallStore.store(record),
    choiceErrors: (organizationId, choice) => toolCatalog.choiceErrors(organizationId, choice),
    names: (organizationId, choice) => toolCatalog.names(organizationId, choice),
  };
  const webhookEndpoints = new WebhookEndpointService(em, {
    credentialsKey: () => config.telephony.credentialsKey,
    allowPrivate: config.webhooks.allowPrivate,
  });
  const services = {
    executionEvents,
    tokens,
    apiKeys,
    auth: new AuthService(em, tokens, keyCache),
    users: new UserService(em, apiKeys, keyCache),
    provisioning: new ProvisioningService(em, apiKeys),
    models,
    knowledge,
    agentPorts,
    voiceParties,
    agents: new AgentService(em, agentPorts.model, agentPorts.knowledge, (tx, actor, agentId) => programs.assertAgentChange(tx, actor, agentId), toolPort),
    conversations: new ConversationService(em, agentPorts.model, agentPorts.knowledge, () => analyses.nudge(), toolPort),
    tools: new ToolService(em, toolOptions),
    mcpServers,
    toolPort,
    toolCalls: new ToolCallService(em),
    analyses,
    imports,
    contactImportWorker,
    contactImports: new ContactImportService(em, contactImportWorker, config.contactImports),
    contacts: new ContactService(em, (organizationId, contactId) => triggers.syncContact(em, organizationId, contactId), imports),
    doNotCall: new DoNotCallService(em, imports),
    audiences: new AudienceService(em, (organizationId, audienceId) => triggers.syncAudience(em, organizationId, audienceId)),
    organizations: new OrganizationService(em),
    credits: new CreditService(em),
    teams: new TeamService(em),
    businessEntities: new BusinessEntityService(em, (organizationId, contactId) => triggers.syncContact(em, organizationId, contactId)),
    callFlows: new CallFlowService(em, (tx, actor, flowId) => programs.assertFlowChange(tx, actor, flowId)),
    programs,
    carriers,
    carrierModules,
    carrierConnections,
    phoneNumbers: new PhoneNumberService(em),
    executions: new ExecutionService(em, executionEvents, executionSnapshots),
    executionSnapshots,
    triggers,
    calls: new CallService(em),
    // A single call is checked as a program's would be (the same readiness), then queued for the runners.
    directCalls: new DirectCallService(em, new ProgramReadiness(readinessSettings), { maxLive: () => config.runner.directCallsMax }),
    recordings: new RecordingService(em, {
      carriers: recordingCarriersOf(carrierModules),
      account: (connectionId) => carrierConnections.accountById(connectionId),
      logger,
    }),
    events: new EventService(em),
    webhookEndpoints,
    webhookDeliveries: new WebhookDeliveryService(em, webhookEndpoints),
    idempotency: new IdempotencyService(em),
    sealedSecrets: new SealedSecretService(em, { credentialsKey: () => config.telephony.credentialsKey }),
    webCalls: new WebCallService(em, { publicUrl: () => config.telephony.publicUrl }),
  };
  // Live events (subscriptions, SSE): fed by the event bus once the gateway attaches it (src/app.ts).
  return {
    ...services,
    live: new LiveService(
      em,
      new LiveFeed(em, logger),
      services,
      config.live.sseHeartbeatMs,
      new LiveConnections({ perKey: config.live.connectionsPerKey, perOrganization: config.live.connectionsPerOrganization }),
      config.live.sseMaxBufferedBytes,
    ),
  };
}

export type Services = ReturnType<typeof createServices>;
