import { randomUUID } from 'node:crypto';
import { ApolloServer, type ApolloServerPlugin } from '@apollo/server';
import { ApolloServerPluginCacheControlDisabled } from '@apollo/server/plugin/disabled';
import { ApolloServerPluginLandingPageLocalDefault, ApolloServerPluginLandingPageProductionDefault } from '@apollo/server/plugin/landingPage/default';
import { expressMiddleware } from '@as-integrations/express5';
import { ApolloArmor } from '@escape.tech/graphql-armor';
import { RequestContext } from '@mikro-orm/core';
import cors from 'cors';
import express, { type Express, type NextFunction, type Request, type Response } from 'express';
import type { Logger } from 'pino';
import type { GraphQLSchema } from 'graphql';
import type { IncomingMessage, Server } from 'node:http';
import type { Config } from './config.js';
import type { Database } from './db/orm.js';
import { runInRequestScope } from './db/request-scope.js';
import { AppError } from './common/errors.js';
import { requestLog } from './common/logger.js';
import { PACKAGE_VERSION } from './common/package-info.js';
import type { GraphQLContext } from './graphql/context.js';
import { formatError, sendGraphQLError } from './graphql/errors.js';
import { costLimitPlugin } from './graphql/cost.js';
import { gatewayPlugin } from './graphql/plugin.js';
import { compiledGateway } from './graphql/compiled-executor.js';
import { stringifyResult } from './graphql/sql-answers.js';
import { Presenter } from './rest/present.js';
import { errorDocs } from './rest/error-docs.js';
import { problemHandler, sendProblem } from './rest/problem.js';
import { jsonBody } from './rest/body-parsers.js';
import { mountRoutes, unmatchedRoute } from './rest/routes.js';
import { createLoaders, gatewaySchema, REST_ROUTES } from './doors.js';
import { authenticateRequest, principalOf } from './platform/principal.js';
import { GatewayMetrics } from './platform/metrics.js';
import { failedRequestLimit, FixedWindowLimiter, rateLimit, RefusalLimit, type RateLimiter } from './platform/rate-limit.js';
import { closeConnectionsWhen } from './platform/connection-close.js';
import type { UpgradeLimit } from './platform/upgrade-limit.js';
import { explorerRouter } from './platform/explorer.js';
import { consoleRouter } from './platform/console-page.js';
import { guidesRouter } from './platform/guides.js';
import { newOperatorToken } from './operator/operator-file.js';
import { operatorRouter } from './operator/operator.rest.js';
import { lendOrganizationGate, OrganizationGate } from './platform/organization-gate.js';
import { abortSignalOf, type RequestDeadline, requestTimeout } from './platform/request-timeout.js';
import { answerBudgetOf, responseSizeLimit } from './platform/response-size.js';
import { createServices, type Services } from './services.js';
import { openEventBus } from './modules/events/event-bus.js';
import { isLiveStream } from './modules/events/subscriptions/execution-stream.rest.js';
import { subscriptionServer, SUBSCRIPTIONS_PATH } from './modules/events/subscriptions/subscription-server.js';

export interface Gateway {
  app: Express;
  services: Services;
  /** Each organization's share of this process: requests and subscription events running at once, and its answer sizes. */
  gate: OrganizationGate;
  /** The /metrics app to serve on METRICS_PORT, when that is set and metrics are on. */
  metricsApp?: Express;
  /** False once shutdown has begun, so /readyz takes the replica out of rotation first and answers close their connections. */
  setReady(ready: boolean): void;
  /** Serves the carrier's media streams (WebSocket upgrades) on the server the app listens on. */
  attach(server: Server): void;
  /** Ends the media streams still open (shutdown): their calls hang up, what was said is kept. */
  closeStreams(): void;
  /** Calls' first words (streaming and speech-to-speech) prepared before their streams start (stream-preparations.ts). */
  streamPreparations: StreamPreparations;
  /** Ends the live streams (SSE and GraphQL subscriptions) so their connections do not hold up a shutdown. */
  closeLive(): void;
  /** The operator CLI's door (/operator), for main.ts to serve on a Unix socket of its own: never on the public listener. */
  operatorApp: Express;
  /** The secret of this process's /operator door; main.ts hands it to the CLI in DATA_DIR/operator.json. */
  operatorToken: string;
  stop(): Promise<void>;
}

const REQUEST_ID = /^[A-Za-z0-9._-]{1,128}$/;

/** On every answer: no MIME sniffing; and the doors' answers (keys, tokens, secrets) are never cached. */
function securityHeaders(req: Request, res: Response, next: NextFunction): void {
  res.setHeader('X-Content-Type-Options', 'nosniff');
  if (req.path === '/graphql' || req.path.startsWith('/graphql/') || req.path === '/api' || req.path.startsWith('/api/')) {
    res.setHeader('Cache-Control', 'no-store');
  }
  next();
}

function requestId(req: Request, res: Response, next: NextFunction): void {
  const given = req.get('x-request-id');
  const id = given && REQUEST_ID.test(given) ? given : randomUUID();
  res.locals.requestId = id;
  res.setHeader('x-request-id', id);
  next();
}

import { CallTracker } from './modules/telephony/call-tracker.js';
import { carrierRequestGuard, carrierWebhookRouter } from './modules/telephony/carrier-webhooks.rest.js';
import type { CarrierModule } from './modules/telephony/carriers/carrier-module.js';
import { amdWebhookRouter } from './modules/telephony/amd-webhooks.rest.js';
import { VoicemailDrop } from './modules/voice/voicemail-drop.js';
import { CallTransfers } from './modules/voice/transfer/call-transfers.js';
import { transferWebhookRouter } from './modules/voice/transfer/transfer-webhooks.rest.js';
import { BatchCallTools } from './modules/voice/batch-call-tools.js';
import { InboundCalls } from './modules/voice/inbound.js';
import { voiceWebhookRouter } from './modules/voice/voice.rest.js';
import { recordingWebhookRouter } from './modules/recordings/recording-webhooks.rest.js';
import { RecordingLedger } from './modules/recordings/recording-ledger.js';
import { VoiceEngine } from './modules/voice/voice-session.js';
import { ExecutionCallSink } from './modules/programs/runner/execution-call-sink.js';
import { PLACEMENT_RETRY_MS } from './modules/programs/runner/campaign-runner.js';
import { attachMediaRoute, type MediaRouteOptions } from './modules/voice/realtime/media-route.js';
import { FIRST_ANSWER, WebhookReplays } from './modules/voice/webhook-replays.js';
import { CallConversations } from './modules/voice/realtime/call-conversation.js';
import { StreamPreparations } from './modules/voice/streaming/stream-preparations.js';
import { DEFAULT_OPENAI_REALTIME_URL, OpenAiSpeechProvider } from './modules/voice/realtime/openai-realtime.js';
import { GeminiSpeechProvider } from './modules/voice/realtime/gemini-live.js';
import { attachTalkRoute, TALK_SOCKET_PATH } from './modules/web-calls/talk-route.js';
import { talkRouter } from './modules/web-calls/talk-pages.js';

/**
 * The OpenAPI document, the server's own and the same for everyone: built and serialized on the
 * first ask, then kept for the process (the schema is built once per process too), and not subject
 * to RESPONSE_MAX_BYTES. Most processes (and test files) never ask for it.
 */
const openApiBodies = new WeakMap<GraphQLSchema, Promise<Buffer>>();
function openApiJson(schema: GraphQLSchema): Promise<Buffer> {
  let body = openApiBodies.get(schema);
  if (!body) {
    body = import('./rest/openapi.js').then(({ buildOpenApi }) => Buffer.from(JSON.stringify(buildOpenApi(REST_ROUTES, schema, PACKAGE_VERSION))));
    openApiBodies.set(schema, body);
  }
  return body;
}

/** The client IP of a raw request (a WebSocket upgrade) as Express's req.ip reads it: X-Forwarded-For only from the proxies TRUST_PROXY names. */
function clientIp(app: Express, req: IncomingMessage): string {
  const view = Object.create(app.request, { headers: { value: req.headers }, socket: { value: req.socket } }) as Request;
  return view.ip ?? req.socket.remoteAddress ?? 'unknown';
}

/** Builds the Express app: request id and log, request context, /api, /graphql, health. */
/** What tests replace in a gateway: the request deadline's clock (src/platform/request-timeout.ts). */
export interface GatewaySeams {
  requestDeadline?: RequestDeadline;
  /** Carrier modules serving their kinds in place of the built-in ones (a throwaway carrier in a test). */
  carrierModules?: CarrierModule[];
  /** How long a warm transfer waits for the model's summary (a timer of SUMMARY_TIMEOUT_MS; a test's fires when it says). */
  transferSummaryDeadline?: RequestDeadline;
}

export async function createGateway(config: Config, database: Database, logger: Logger, seams: GatewaySeams = {}): Promise<Gateway> {
  const services = createServices(database.em, config, logger, { carrierModules: seams.carrierModules ?? [], databaseKind: database.kind });
  const schema = await gatewaySchema(Object.values(services.carrierModules));
  const presenter = new Presenter(schema, database.orm.getMetadata());
  const development = config.nodeEnv !== 'production';
  let ready = true;

  // Depth, alias and token limits; field suggestions only in development; no batching. The cost
  // limit is our own (costLimitPlugin): it multiplies by each list's size, which armor's does not.
  const limits = config.graphql;
  const armor = new ApolloArmor({
    maxDepth: { n: limits.maxDepth, ignoreIntrospection: true },
    costLimit: { enabled: false },
    maxAliases: { n: limits.maxAliases },
    // Counted by graphql-js's own parser (parseOptions below): Armor's plugin parsed again in a hook, where a syntax error became a 500.
    maxTokens: { enabled: false },
    maxDirectives: { n: 20 },
    blockFieldSuggestion: { enabled: !development },
  }).protect();
  const metrics = config.metricsEnabled ? new GatewayMetrics(database) : null;
  const apollo = new ApolloServer<GraphQLContext>({
    // The schema, executed by graphql-jit's compiled operations (src/graphql/compiled-executor.ts).
    gateway: compiledGateway(schema, database.orm.getMetadata()),
    // Pages the database wrote as JSON are copied into the answer as they are (src/graphql/sql-answers.ts).
    stringifyResult,
    formatError(formatted, error) {
      const shaped = formatError(formatted, error, schema);
      metrics?.countError(String(shaped.extensions?.code ?? 'INTERNAL_SERVER_ERROR'));
      return shaped;
    },
    introspection: limits.introspection,
    parseOptions: { maxTokens: limits.maxTokens },
    includeStacktraceInErrorResponses: false,
    allowBatchedHttpRequests: false,
    stopOnTerminationSignals: false,
    validationRules: armor.validationRules,
    plugins: [
      ...(armor.plugins as unknown as ApolloServerPlugin<GraphQLContext>[]),
      gatewayPlugin(),
      costLimitPlugin(limits.maxCost),
      // No cache hints are set; the default cache-control plugin would wrap every field resolver.
      ApolloServerPluginCacheControlDisabled(),
      development
        ? ApolloServerPluginLandingPageLocalDefault({ embed: true, includeCookies: false })
        : ApolloServerPluginLandingPageProductionDefault({ footer: false }),
    ],
  });
  await apollo.start();
  // Live events: every committed event reaches this process's subscribers (LISTEN/NOTIFY on PostgreSQL, PGlite's own LISTEN).
  const eventBus = await openEventBus(database, logger);
  await eventBus.start();
  services.live.feed.attach(eventBus);
  const app = express();
  app.disable('x-powered-by');
  // Answers are no-store (never cached), so an ETag would only cost a SHA-1 over every body.
  app.disable('etag');
  app.set('query parser', 'simple');
  // Off by default: X-Forwarded-For is believed only from the proxies TRUST_PROXY names (req.ip, the anonymous rate limit).
  app.set('trust proxy', config.trustProxy);
  app.use(securityHeaders);
  app.use(closeConnectionsWhen(() => !ready));
  app.use(requestId);
  app.use(requestLog(logger, (res) => (res as Response).locals.requestId));
  // The two doors come first, each with its own chain of layers (filled in below): a request to /api or
  // /graphql passes none of the pages', the carriers' or the operator's layers on its way, and the
  // other door's neither. Express tried each of them in turn, about a tenth of a REST list's CPU.
  const apiDoor = express.Router();
  const graphqlDoor = express.Router();
  app.use('/api', apiDoor);
  app.use('/graphql', graphqlDoor);

  app.get('/healthz', (_req, res) => {
    res.json({ status: 'ok' });
  });
  app.get('/docs/errors', errorDocs());
  app.get('/readyz', async (_req, res) => {
    const reachable = ready && (await database.isReachable());
    res.status(reachable ? 200 : 503).json({ status: reachable ? 'ready' : 'unavailable', database: database.kind });
  });

  // Served on the main port only behind METRICS_TOKEN; with METRICS_PORT, on that port alone (main.ts listens).
  // Neither set, or METRICS_ENABLED=false: 404 here.
  let metricsApp: Express | undefined;
  if (metrics) {
    if (config.metricsPort !== undefined) {
      metricsApp = express();
      metricsApp.disable('x-powered-by');
      metricsApp.use(securityHeaders);
      metricsApp.get('/metrics', metrics.handler(config.metricsToken));
    } else if (config.metricsToken) {
      app.get('/metrics', metrics.handler(config.metricsToken));
    }
    const observe = metrics.observe();
    apiDoor.use(observe);
    graphqlDoor.use(observe);
  }
  // Browsers may call the doors only from the CORS_ORIGINS allow-list (credentials are headers, never cookies).
  const corsPolicy = cors({
    origin: config.corsOrigins,
    allowedHeaders: ['content-type', 'x-api-key', 'authorization', 'apollo-require-preflight', 'x-apollo-operation-name', 'idempotency-key', 'x-request-id'],
    maxAge: 600,
    exposedHeaders: [
      'RateLimit-Limit',
      'RateLimit-Remaining',
      'RateLimit-Reset',
      'Retry-After',
      'x-request-id',
      'Idempotent-Replayed',
      'X-Total-Count',
      'Link',
      'X-Next-Cursor',
    ],
  });
  apiDoor.use(corsPolicy);
  graphqlDoor.use(corsPolicy);

  // The landing page, the REST reference, GraphiQL, the guides and the console: static pages, no credentials, no CDN.
  app.use(explorerRouter());
  app.use(guidesRouter());
  // The operator console (console/, built into dist/console): a page of the public GraphQL API only.
  app.use(consoleRouter());
  // Web calls: the /talk page and the widget's script (the socket is attached with the media streams).
  app.use(talkRouter());

  const apiTimeout = requestTimeout(config.requestTimeoutMs, (res, error) => sendProblem(res, error, String(res.locals.requestId)), seams.requestDeadline);
  // An SSE stream stays open as long as its client wants: it is not held to the request timeout.
  apiDoor.use((req, res, next) => (isLiveStream(req) ? next() : apiTimeout(req, res, next)));
  graphqlDoor.use(requestTimeout(config.requestTimeoutMs, (res, error) => sendGraphQLError(res, error, String(res.locals.requestId)), seams.requestDeadline));
  // The carrier webhooks too: Twilio waits about 15 s for an answer, and a request held longer only holds its resources.
  app.use('/telephony', apiTimeout);
  // The request's fork carries its abort signal: past the deadline no statement starts, and on PostgreSQL the running ones are cancelled.
  // Forked on first use: a request that reads on the pool, or that PostgreSQL answers whole, makes none.
  const requestContext = (_req: Request, res: Response, next: NextFunction) =>
    runInRequestScope(database.orm.em, database.abortOptions(abortSignalOf(res)), next);
  apiDoor.use(
    requestContext,
    responseSizeLimit(config.responseMaxBytes, (res, error) => sendProblem(res, error, String(res.locals.requestId))),
  );
  graphqlDoor.use(
    requestContext,
    responseSizeLimit(config.responseMaxBytes, (res, error) => sendGraphQLError(res, error, String(res.locals.requestId))),
  );
  app.use('/telephony', requestContext);

  // One authentication per request, then the per-key and per-organization limits; /healthz, /readyz and
  // the OpenAPI document are exempt. REDIS_URL shares the counters across replicas.
  // ioredis and rate-limiter-flexible (some 80 modules) load only when REDIS_URL is set.
  const limiter: RateLimiter = config.rateLimit.redisUrl
    ? new (await import('./platform/rate-limit-redis.js')).RedisRateLimiter(config.rateLimit.redisUrl, logger)
    : new FixedWindowLimiter();
  await limiter.start?.();
  // The anonymous limit of the doors that count only their refusals (/telephony, the WebSocket upgrades), on the same `ip:` counters.
  const refusals = new RefusalLimit(limiter, config.rateLimit.anonymousPerMinute);
  // The operator CLI's door while this process holds the embedded database (src/operator/operator.rest.ts),
  // an app of its own that main.ts serves on a Unix socket. A reverse proxy on the same host makes every
  // public request a loopback peer, so "loopback only" would admit the world; the socket admits only
  // who may open it (the server's user). Its refused requests (a wrong token) count in a bucket of their
  // own, so failures elsewhere (anonymous requests from 127.0.0.1) never lock the CLI out, nor it them.
  const operatorToken = newOperatorToken();
  const operatorApp = express();
  operatorApp.disable('x-powered-by');
  operatorApp.disable('etag');
  operatorApp.use(
    requestId,
    requestLog(logger, (res) => (res as Response).locals.requestId),
    requestContext,
  );
  operatorApp.use(
    '/operator',
    failedRequestLimit({
      refusals,
      bucket: () => 'operator',
      scope: 'operator door',
      reject: (_req, res, error) => sendProblem(res, error, String(res.locals.requestId)),
    }),
    operatorRouter(services, operatorToken, logger),
  );
  operatorApp.use((req, res) => sendProblem(res, new AppError('NOT_FOUND', `No route ${req.method} ${req.path}`), String(res.locals.requestId)));
  // One organization's requests take at most CONCURRENCY_PER_ORG places at once; the rest queue.
  const gate = new OrganizationGate(config.concurrencyPerOrganization);
  // The anonymous limit of the HTTP door for WebSocket upgrades, on the same counters and the same `ip:<address>` keys.
  const upgradeLimit: UpgradeLimit = { refusals, clientIp: (req) => clientIp(app, req) };
  const subscriptions = subscriptionServer({
    schema,
    services,
    database,
    logger,
    validationRules: armor.validationRules as never,
    maxCost: limits.maxCost,
    maxTokens: limits.maxTokens,
    subscriptionsPerKey: config.live.subscriptionsPerKey,
    bodyLimitBytes: config.bodyLimitBytes,
    loaders: createLoaders,
    responseMaxBytes: config.responseMaxBytes,
    // The same gate as the HTTP doors': an organization's subscription events and requests share its places.
    ...(config.concurrencyPerOrganization > 0 ? { gate } : {}),
    anonymous: upgradeLimit,
  });

  const limit = (reject: (res: Response, error: AppError) => void) =>
    rateLimit({ ...config.rateLimit, limiter, reject: (_req, res, error) => reject(res, error) });
  apiDoor.get('/openapi.json', async (_req, res) => {
    const body = await openApiJson(schema);
    res.type('application/json').setHeader('content-length', body.length);
    res.end(body);
  });
  const gated = gate.middleware();
  apiDoor.use(
    authenticateRequest(services),
    limit((res, error) => sendProblem(res, error, String(res.locals.requestId))),
    // An SSE stream waits for events, not the event loop: it holds one of the organization's places
    // only while it reads and sends a page of its replay (the route takes them from the gate lent here).
    (req, res, next) => {
      if (!isLiveStream(req)) return gated(req, res, next);
      lendOrganizationGate(res, gate);
      next();
    },
  );
  apiDoor.use(jsonBody({ limit: config.bodyLimitBytes, strict: false }));
  mountRoutes(apiDoor, REST_ROUTES, services, presenter);
  apiDoor.use(unmatchedRoute(REST_ROUTES));
  apiDoor.use(problemHandler(logger));

  graphqlDoor.use(
    authenticateRequest(services),
    limit((res, error) => sendGraphQLError(res, error, String(res.locals.requestId))),
    gate.middleware(),
    jsonBody({ limit: config.bodyLimitBytes }),
    expressMiddleware(apollo, {
      context: async ({ res }): Promise<GraphQLContext> => {
        const { actor, authError } = principalOf(res);
        // Built on first use: a query the database answers whole (src/graphql/sql-answers.ts) never needs them.
        let loaders: ReturnType<typeof createLoaders> | undefined;
        return {
          services,
          requestId: String(res.locals.requestId),
          signal: abortSignalOf(res),
          answerBudget: answerBudgetOf(res),
          logger,
          actor,
          authError,
          get loaders() {
            return actor ? (loaders ??= createLoaders(services, actor)) : undefined;
          },
          onOperation: (name) => {
            res.locals.graphqlOperation = name ?? 'unnamed';
          },
        };
      },
    }),
  );
  // What fails before Apollo (a lost database while authenticating, a malformed body) still answers in GraphQL's shape.
  graphqlDoor.use(problemHandler(logger, sendGraphQLError));
  // Carrier-facing: Twilio's status callbacks and answer requests, checked against its signature.
  const callTracker = new CallTracker(
    database.em,
    new ExecutionCallSink({ events: services.executionEvents, logger, leaseMs: config.runner.leaseMs, retryMs: PLACEMENT_RETRY_MS }),
    logger,
  );
  const webhookOptions = {
    carriers: services.carrierModules,
    account: (connectionId: string) => services.carrierConnections.accountById(connectionId),
    tracker: callTracker,
    publicUrl: () => config.telephony.publicUrl,
    logger,
  };
  // Voice: flows and agents spoken on the call, the caller's turns, inbound calls.
  const voice = new VoiceEngine(database.em, callTracker, services.conversations, logger);
  const callConversations = new CallConversations(database.em, () => services.analyses.nudge());
  // What each call's /gather and /inbound requests were answered, so a repeat (a retry or a replay) adds nothing.
  const webhookReplays = new WebhookReplays(database.em);
  // Anonymous by nature (a signature, no key): RATE_LIMIT_ANONYMOUS_PER_MINUTE per IP on the doors' `ip:` counter,
  // counting only the requests refused 4xx (unsigned, forged, malformed), so Twilio's signed traffic is never throttled.
  app.use(
    '/telephony',
    failedRequestLimit({
      refusals,
      reject: (_req, res, error) => sendProblem(res, error, String(res.locals.requestId)),
    }),
  );
  app.use(
    '/telephony',
    voiceWebhookRouter({
      guard: carrierRequestGuard(webhookOptions),
      engine: voice,
      inbound: new InboundCalls(database.em, voice, webhookReplays, logger),
      replays: webhookReplays,
      publicUrl: () => config.telephony.publicUrl,
      logger,
    }),
  );
  app.use(
    '/telephony',
    amdWebhookRouter({
      guard: carrierRequestGuard(webhookOptions),
      drop: new VoicemailDrop(database.em, callTracker, logger),
      publicUrl: () => config.telephony.publicUrl,
      logger,
    }),
  );
  // The agents' transfers (transfer_call; a warm one's briefing summarised by the agent's model), and their dials' reports.
  const transfers = new CallTransfers({
    em: database.em,
    carriers: services.carrierModules,
    account: (connectionId) => services.carrierConnections.accountById(connectionId),
    publicUrl: () => config.telephony.publicUrl,
    logger,
    model: services.models,
    summaryDeadline: seams.transferSummaryDeadline,
  });
  // The speech-to-speech providers, for the calls' bridges and their sessions prepared before the streams start.
  const speechProviders = {
    openai: new OpenAiSpeechProvider({ url: config.providers.openaiRealtimeUrl ?? DEFAULT_OPENAI_REALTIME_URL, apiKey: config.providers.openaiApiKey }),
    google: new GeminiSpeechProvider({ apiKey: config.providers.geminiApiKey, baseUrl: config.providers.geminiBaseUrl }),
  };
  // A call's first words (a streaming call's synthesis, a speech-to-speech call's session), prepared while the carrier fetches the answer that opens its stream.
  const streamPreparations = new StreamPreparations({
    em: database.em,
    conversations: callConversations,
    transfers,
    recognizers: services.voiceParties.recognizers,
    synthesizers: services.voiceParties.synthesizers,
    speech: {
      conversations: callConversations,
      speech: speechProviders,
      knowledge: services.agentPorts.knowledge,
      withContext: (work) => RequestContext.create(database.orm.em, work),
      tools: services.toolPort,
      logger,
    },
    logger,
  });
  voice.streamArmed = (callId) => streamPreparations.prepare(callId);
  // A batch call's model is offered transfer_call and send_digits, done through the call's carrier in the webhook's answer.
  voice.callTools = new BatchCallTools({ carriers: services.carrierModules, transfers, logger });
  app.use(
    '/telephony',
    transferWebhookRouter({
      guard: carrierRequestGuard(webhookOptions),
      transfers,
      backToAgent: (callId) => voice.backFromTransfer(callId),
      publicUrl: () => config.telephony.publicUrl,
      logger,
    }),
  );
  app.use(
    '/telephony',
    recordingWebhookRouter({ guard: carrierRequestGuard(webhookOptions), tracker: callTracker, ledger: new RecordingLedger(database.em), logger }),
  );
  app.use(
    '/telephony',
    carrierWebhookRouter({
      ...webhookOptions,
      answer: async (carrier, account, callId, answeredBy) => {
        // Twilio asks once per call: a later /answer (its retry, or a signed one replayed) is answered what the first was and restarts nothing.
        const answer = await webhookReplays.once(callId, FIRST_ANSWER, () => voice.answer(callId, answeredBy));
        const actions = answer.repeated ? answer.actions : await voice.armStreams(callId, answer.actions);
        return carrier.callControl.render(actions, { publicUrl: config.telephony.publicUrl ?? '', connectionId: account.connectionId ?? '', callId });
      },
      onEnded: async (callId) => {
        streamPreparations.discard(callId);
        await voice.ended(callId);
        await transfers.callEnded(callId);
      },
    }),
  );
  app.use((req, res) => {
    sendProblem(res, new AppError('NOT_FOUND', `No route ${req.method} ${req.path}`), String(res.locals.requestId));
  });
  app.use(problemHandler(logger));

  const mediaRoutes: { close(): void }[] = [];
  return {
    app,
    metricsApp,
    services,
    gate,
    streamPreparations,
    operatorApp,
    operatorToken,
    setReady(value) {
      ready = value;
    },
    attach(server) {
      // WebSocket upgrades are routed by path: /graphql to graphql-ws, the media streams' paths to the media route.
      server.on('upgrade', (req, socket, head) => {
        if ((req.url ?? '').split('?')[0] === SUBSCRIPTIONS_PATH) void subscriptions.upgrade(req, socket, head);
      });
      // Twilio Media Streams for speech-to-speech calls (bridged to the realtime provider) and streaming ones (the streaming pipeline).
      // The same voice wiring carries the phone's media streams and the browser's web calls.
      const voiceWiring = {
        em: database.em,
        carriers: services.carrierModules,
        account: (connectionId) => services.carrierConnections.accountById(connectionId),
        publicUrl: () => config.telephony.publicUrl,
        conversations: callConversations,
        tracker: callTracker,
        knowledge: services.agentPorts.knowledge,
        doNotCall: services.doNotCall,
        tools: services.toolPort,
        transfers,
        withContext: (work) => RequestContext.create(database.orm.em, work),
        speech: speechProviders,
        preparedSpeech: (callId) => streamPreparations.takeSpeech(callId),
        streaming: {
          model: services.models,
          recognizers: services.voiceParties.recognizers,
          synthesizers: services.voiceParties.synthesizers,
          endConversation: (organizationId, conversationId, failed) =>
            RequestContext.create(database.orm.em, () => services.conversations.closeForCall(organizationId, conversationId, failed)),
          observeTurn: metrics ? (labels, turn) => metrics.observeVoiceTurn(labels, turn) : undefined,
          preparations: streamPreparations,
        },
        anonymous: upgradeLimit,
        observeTurn: metrics
          ? (labels: Parameters<NonNullable<MediaRouteOptions['observeTurn']>>[0], turn: Parameters<NonNullable<MediaRouteOptions['observeTurn']>>[1]) =>
              metrics.observeVoiceTurn(labels, turn)
          : undefined,
        logger,
      } satisfies Omit<MediaRouteOptions, 'leave'>;
      mediaRoutes.push(attachMediaRoute(server, { ...voiceWiring, leave: (path) => path === SUBSCRIPTIONS_PATH || path === TALK_SOCKET_PATH }));
      mediaRoutes.push(
        attachTalkRoute(server, {
          ...voiceWiring,
          admit: (organizationId, apiKeyId) =>
            services.live.connections.open({ organizationId, apiKeyId: apiKeyId ?? `web-call:${organizationId}`, userId: '', roles: [], via: 'api-key' }),
        }),
      );
    },
    closeStreams() {
      for (const route of mediaRoutes.splice(0)) route.close();
      streamPreparations.close();
    },
    closeLive() {
      services.live.feed.close();
      subscriptions
        .close()
        .catch((error: unknown) => logger.warn({ error: error instanceof Error ? error.message : String(error) }, 'closing the subscriptions server failed'));
    },
    async stop() {
      for (const route of mediaRoutes.splice(0)) route.close();
      services.live.feed.close();
      await subscriptions.close();
      await eventBus.stop();
      await services.analyses.stop();
      await services.contactImportWorker.stop();
      await apollo.stop();
      await limiter.close?.();
    },
  };
}
