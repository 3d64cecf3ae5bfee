import { randomUUID } from 'node:crypto';
import { ApolloServer, type ApolloServerPlugin } from '@apollo/server';
import { ApolloServerPluginCacheControlDisabled } from '@apollo/server/plugin/disabled';
import {
  ApolloServerPluginLandingPageLocalDefault,
  ApolloServerPluginLandingPageProductionDefault,
} from '@apollo/server/plugin/landingPage/default';
import { expressMiddleware } from '@as-integrations/express5';
import { ApolloArmor } from '@escape.tech/graphql-armor';
import { RequestContext } from '@mikro-orm/core';
import cors from 'cors';
import express, { type Express, type NextFunction, type Request, type Response } from 'express';
import { pinoHttp } from 'pino-http';
import type { Logger } from 'pino';
import type { Config } from './config.js';
import type { Database } from './db/orm.js';
import { AppError } from './common/errors.js';
import { PACKAGE_VERSION } from './common/package-info.js';
import type { GraphQLContext } from './graphql/context.js';
import { formatError, sendGraphQLError } from './graphql/errors.js';
import { createLoaders } from './graphql/loaders.js';
import { gatewayPlugin } from './graphql/plugin.js';
import { buildGatewaySchema } from './graphql/schema.js';
import { buildOpenApi } from './rest/openapi.js';
import { Presenter } from './rest/present.js';
import { problemHandler, sendProblem } from './rest/problem.js';
import { mountRoutes, type RouteDefinition } from './rest/routes.js';
import { agentRoutes } from './modules/agents/agents.rest.js';
import { conversationRoutes } from './modules/agents/conversations.rest.js';
import { authRoutes } from './modules/auth/auth.rest.js';
import { knowledgeRoutes } from './modules/knowledge/knowledge.rest.js';
import { businessEntityRoutes } from './modules/contacts/business-entities.rest.js';
import { contactRoutes } from './modules/contacts/contacts.rest.js';
import { organizationRoutes } from './modules/organizations/organizations.rest.js';
import { teamRoutes } from './modules/organizations/teams.rest.js';
import { callFlowRoutes } from './modules/programs/call-flows.rest.js';
import { executionRoutes } from './modules/programs/executions.rest.js';
import { programRoutes } from './modules/programs/programs.rest.js';
import { triggerRoutes } from './modules/programs/triggers/triggers.rest.js';
import { authenticateRequest, principalOf } from './platform/principal.js';
import { GatewayMetrics } from './platform/metrics.js';
import { FixedWindowLimiter, rateLimit } from './platform/rate-limit.js';
import { closeConnectionsWhen } from './platform/connection-close.js';
import { explorerRouter } from './platform/explorer.js';
import { requestTimeout } from './platform/request-timeout.js';
import { createServices, type Services } from './services.js';

export const REST_ROUTES: RouteDefinition[] = [
  ...authRoutes,
  ...agentRoutes,
  ...conversationRoutes,
  ...knowledgeRoutes,
  ...contactRoutes,
  ...businessEntityRoutes,
  ...organizationRoutes,
  ...teamRoutes,
  ...callFlowRoutes,
  ...programRoutes,
  ...executionRoutes,
  ...triggerRoutes,
];

export interface Gateway {
  app: Express;
  services: Services;
  /** False once shutdown has begun, so /readyz takes the replica out of rotation first and answers close their connections. */
  setReady(ready: boolean): void;
  stop(): Promise<void>;
}

const REQUEST_ID = /^[A-Za-z0-9._-]{1,128}$/;

function requestId(req: Request, res: Response, next: NextFunction): void {
  const given = req.get('x-request-id');
  const id = given && REQUEST_ID.test(given) ? given : randomUUID();
  res.locals.requestId = id;
  res.setHeader('x-request-id', id);
  next();
}

/** Builds the Express app: request id and log, request context, /api, /graphql, health. */
export async function createGateway(config: Config, database: Database, logger: Logger): Promise<Gateway> {
  const services = createServices(database.em, config);
  const schema = await buildGatewaySchema();
  const presenter = new Presenter(schema);
  const openApi = buildOpenApi(REST_ROUTES, schema, PACKAGE_VERSION);
  const development = config.nodeEnv !== 'production';
  let ready = true;

  // Depth, cost, alias and token limits; field suggestions only in development; no batching.
  const limits = config.graphql;
  const armor = new ApolloArmor({
    maxDepth: { n: limits.maxDepth, ignoreIntrospection: true },
    costLimit: { maxCost: limits.maxCost, ignoreIntrospection: true },
    maxAliases: { n: limits.maxAliases },
    maxTokens: { n: limits.maxTokens },
    maxDirectives: { n: 20 },
    blockFieldSuggestion: { enabled: !development },
  }).protect();
  const metrics = config.metricsEnabled ? new GatewayMetrics(database) : null;
  const apollo = new ApolloServer<GraphQLContext>({
    schema,
    formatError(formatted, error) {
      const shaped = formatError(formatted, error);
      metrics?.countError(String(shaped.extensions?.code ?? 'INTERNAL_SERVER_ERROR'));
      return shaped;
    },
    introspection: limits.introspection,
    includeStacktraceInErrorResponses: false,
    allowBatchedHttpRequests: false,
    stopOnTerminationSignals: false,
    validationRules: armor.validationRules,
    plugins: [
      ...(armor.plugins as unknown as ApolloServerPlugin<GraphQLContext>[]),
      gatewayPlugin(),
      // No cache hints are set; the default cache-control plugin would wrap every field resolver.
      ApolloServerPluginCacheControlDisabled(),
      development
        ? ApolloServerPluginLandingPageLocalDefault({ embed: true, includeCookies: false })
        : ApolloServerPluginLandingPageProductionDefault({ footer: false }),
    ],
  });
  await apollo.start();

  const app = express();
  app.disable('x-powered-by');
  app.set('query parser', 'simple');
  app.use(closeConnectionsWhen(() => !ready));
  app.use(requestId);
  app.use(
    pinoHttp({
      logger,
      genReqId: (_req, res) => String((res as Response).locals.requestId),
      customProps: (_req, res) => ({ requestId: (res as Response).locals.requestId }),
      autoLogging: { ignore: (req) => req.url === '/healthz' || req.url === '/readyz' },
    }),
  );

  app.get('/healthz', (_req, res) => {
    res.json({ status: 'ok' });
  });
  app.get('/readyz', async (_req, res) => {
    const reachable = ready && (await database.isReachable());
    res.status(reachable ? 200 : 503).json({ status: reachable ? 'ready' : 'unavailable', database: database.kind });
  });

  // No credentials needed; METRICS_ENABLED=false leaves it out (404).
  if (metrics) {
    app.get('/metrics', metrics.handler());
    app.use(['/api', '/graphql'], metrics.observe());
  }

  // The landing page, the REST reference and GraphiQL: static pages, no credentials, no CDN.
  app.use(explorerRouter());

  app.use((_req, _res, next) => RequestContext.create(database.orm.em, next));
  app.use('/api', requestTimeout(config.requestTimeoutMs, (res, error) => sendProblem(res, error, String(res.locals.requestId))));
  app.use('/graphql', requestTimeout(config.requestTimeoutMs, (res, error) => sendGraphQLError(res, error, String(res.locals.requestId))));

  // One authentication per request, then the per-key limit; /healthz, /readyz and the OpenAPI document are exempt.
  const limiter = new FixedWindowLimiter();
  const limit = (reject: (res: Response, error: AppError) => void) =>
    rateLimit({ ...config.rateLimit, limiter, reject: (_req, res, error) => reject(res, error) });
  const api = express.Router();
  api.get('/openapi.json', (_req, res) => {
    res.json(openApi);
  });
  api.use(
    authenticateRequest(services),
    limit((res, error) => sendProblem(res, error, String(res.locals.requestId))),
  );
  api.use(express.json({ limit: config.bodyLimitBytes, strict: false }));
  mountRoutes(api, REST_ROUTES, services, presenter);
  api.use((req, res) => {
    sendProblem(res, new AppError('NOT_FOUND', `No route ${req.method} ${req.baseUrl}${req.path}`), String(res.locals.requestId));
  });
  api.use(problemHandler(logger));
  app.use('/api', api);

  app.use(
    '/graphql',
    cors({ origin: true, allowedHeaders: ['content-type', 'x-api-key', 'authorization', 'apollo-require-preflight', 'x-apollo-operation-name'], maxAge: 600, exposedHeaders: ['RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset', 'Retry-After'] }),
    authenticateRequest(services),
    limit((res, error) => sendGraphQLError(res, error, String(res.locals.requestId))),
    express.json({ limit: config.bodyLimitBytes }),
    expressMiddleware(apollo, {
      context: async ({ res }): Promise<GraphQLContext> => {
        const { actor, authError } = principalOf(res);
        return {
          services,
          requestId: String(res.locals.requestId),
          logger,
          actor,
          authError,
          loaders: actor ? createLoaders(services, actor) : undefined,
          onOperation: (name) => {
            res.locals.graphqlOperation = name ?? 'anonymous';
          },
        };
      },
    }),
  );
  // What fails before Apollo (a lost database while authenticating, a malformed body) still answers in GraphQL's shape.
  app.use('/graphql', problemHandler(logger, sendGraphQLError));
  app.use((req, res) => {
    sendProblem(res, new AppError('NOT_FOUND', `No route ${req.method} ${req.path}`), String(res.locals.requestId));
  });
  app.use(problemHandler(logger));

  return {
    app,
    services,
    setReady(value) {
      ready = value;
    },
    async stop() {
      await apollo.stop();
    },
  };
}
