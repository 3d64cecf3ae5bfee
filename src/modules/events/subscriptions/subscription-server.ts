import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { RequestContext } from '@mikro-orm/core';
import {
  getOperationAST,
  GraphQLError,
  parse,
  specifiedRules,
  validate,
  type DocumentNode,
  type ExecutionArgs,
  type GraphQLSchema,
  type ValidationRule,
} from 'graphql';
import type { SubscribePayload } from 'graphql-ws';
import { useServer } from 'graphql-ws/use/ws';
import jwt from 'jsonwebtoken';
import type { Logger } from 'pino';
import type WebSocket from 'ws';
import { WebSocketServer } from 'ws';
import type { Actor } from '../../../common/actor.js';
import { toAppError } from '../../../common/error-mapping.js';
import { logServerError } from '../../../common/logger.js';
import type { Database } from '../../../db/orm.js';
import type { GraphQLContext, GraphQLLoaders } from '../../../graphql/context.js';
import { operationCost } from '../../../graphql/cost.js';
import { formatError } from '../../../graphql/errors.js';
import type { OrganizationGate } from '../../../platform/organization-gate.js';
import type { Attempt, RateDecision } from '../../../platform/rate-limit.js';
import { admitUpgrade, type UpgradeLimit } from '../../../platform/upgrade-limit.js';
import type { Services } from '../../../services.js';
import { eventAnswers } from './event-answers.js';

/** The path graphql-ws serves, the same as the HTTP door's (Apollo Sandbox subscribes there). */
export const SUBSCRIPTIONS_PATH = '/graphql';
/** How often the keys behind open sockets are checked: a deactivated, deleted or expired one closes its sockets. */
export const KEY_CHECK_MS = 1000;
/** Close code for a socket whose key was revoked, or whose token expired, while it was open (graphql-ws: Forbidden). */
export const KEY_REVOKED = 4403;
/** Close code for a connection_init without valid credentials (graphql-ws: Unauthorized). */
export const UNAUTHORIZED = 4401;
/**
 * Close code for a socket refused by a limit: its client IP's failed connection_init messages past
 * RATE_LIMIT_ANONYMOUS_PER_MINUTE, or its key's or organization's live connections past
 * LIVE_CONNECTIONS_PER_KEY / LIVE_CONNECTIONS_PER_ORG; the reason names which. graphql-ws clients do not retry it.
 */
export const TOO_MANY = 4429;

export interface SubscriptionServerOptions {
  schema: GraphQLSchema;
  services: Services;
  database: Database;
  logger: Logger;
  /** The same validation rules the HTTP door applies (graphql-armor's depth, aliases, directives). */
  validationRules: readonly ValidationRule[];
  maxCost: number;
  maxTokens: number;
  subscriptionsPerKey: number;
  bodyLimitBytes: number;
  loaders: (services: Services, actor: Actor) => GraphQLLoaders;
  keyCheckMs?: number;
  /** RESPONSE_MAX_BYTES: each event's answer is held to it, as an HTTP answer is. */
  responseMaxBytes: number;
  /** The HTTP door's organization gate: each event's execution takes one of its organization's places and is weighed; undefined when CONCURRENCY_PER_ORG is 0. */
  gate?: OrganizationGate;
  /** The HTTP door's anonymous limit: an upgrade from a client IP over RATE_LIMIT_ANONYMOUS_PER_MINUTE is answered 429, and each failed connection_init counts against its IP. */
  anonymous: UpgradeLimit;
}

/** What a socket carries once connection_init authenticated it. */
interface Session {
  actor: Actor;
  /** Gives back the socket's place among its key's and organization's live connections. */
  release: () => void;
  /** When the bearer token it was opened with expires (ms), if any. */
  expiresAt?: number;
  socket: WebSocket;
  operations: Set<string>;
}

type Extra = { socket: WebSocket; request: IncomingMessage; session?: Session };

/** connection_init's payload: `{"x-api-key": "…"}` or `{"authorization": "Bearer …"}` (or the same under `headers`). */
function credentialsOf(params: Record<string, unknown> | undefined): { apiKey?: string; authorization?: string } {
  const sources = [params ?? {}, (params?.headers ?? {}) as Record<string, unknown>];
  const find = (names: string[]) => {
    for (const source of sources) {
      for (const [name, value] of Object.entries(source)) {
        if (names.includes(name.toLowerCase()) && typeof value === 'string') return value;
      }
    }
    return undefined;
  };
  return { apiKey: find(['x-api-key', 'apikey', 'api-key']), authorization: find(['authorization']) };
}

function badInput(message: string, extensions: Record<string, unknown> = {}): GraphQLError {
  return new GraphQLError(message, { extensions: { code: 'BAD_USER_INPUT', ...extensions } });
}

/**
 * GraphQL subscriptions over graphql-ws (the graphql-transport-ws protocol) on /graphql, in the same
 * HTTP server as the doors. connection_init authenticates with the same credentials as HTTP; each
 * subscribe is held to the HTTP door's parser token limit, validation rules (depth, aliases) and cost
 * limit, and to SUBSCRIPTIONS_PER_KEY open subscriptions per key in this process; queries and
 * mutations go over HTTP. Every KEY_CHECK_MS the keys behind open sockets are read again (one
 * statement for all of them): a socket whose key was deactivated, deleted or expired, or whose token
 * expired, is closed with 4403. A socket counts against its key's and organization's live connections
 * (LIVE_CONNECTIONS_PER_KEY / _PER_ORG); a failed connection_init against its client IP's anonymous
 * rate limit. Each event's answer is held to RESPONSE_MAX_BYTES and the organization gate (event-answers.ts).
 */
export function subscriptionServer(options: SubscriptionServerOptions) {
  const { schema, services, database, logger } = options;
  const em = database.orm.em;
  const wss = new WebSocketServer({ noServer: true, maxPayload: options.bodyLimitBytes });
  const sessions = new Set<Session>();
  /** Each upgrade's place on the anonymous limit until its connection_init is decided (admitUpgrade). */
  const attempts = new WeakMap<IncomingMessage, Attempt>();
  /** Open subscriptions per API key: `<socket>:<operation id>` tokens. */
  const perKey = new Map<string, Set<string>>();
  const rules = [...specifiedRules, ...options.validationRules];

  const release = (session: Session, operationId: string) => {
    session.operations.delete(operationId);
    const open = perKey.get(session.actor.apiKeyId);
    open?.delete(`${sessionIds.get(session)}:${operationId}`);
    if (open && open.size === 0) perKey.delete(session.actor.apiKeyId);
  };
  const sessionIds = new WeakMap<Session, string>();

  const format = (errors: readonly GraphQLError[], requestId: string) =>
    errors.map((error) => {
      const original = error.originalError;
      if (original && !(original instanceof GraphQLError)) {
        const mapped = toAppError(original);
        if (mapped.status >= 500) logServerError(logger, mapped, original, { requestId }, 'GraphQL subscription failed');
      }
      const shaped = formatError(error.toJSON(), error, schema);
      return { ...shaped, extensions: { ...shaped.extensions, requestId } };
    });

  const anonymousRefusal = (decision: RateDecision) =>
    `Too many failed authentications: RATE_LIMIT_ANONYMOUS_PER_MINUTE is ${decision.limit} per client IP; retry in ${decision.resetSeconds} s`;
  /** LiveConnections' refusal, short enough for a close reason (123 bytes), naming the variable. */
  const liveConnectionsRefusal = (message: string) => {
    const perKey = /LIVE_CONNECTIONS_PER_KEY/.test(message);
    const limits = services.live.connections.limits;
    return perKey
      ? `Too many live connections for this API key: LIVE_CONNECTIONS_PER_KEY is ${limits.perKey}; close one first`
      : `Too many live connections for this organization: LIVE_CONNECTIONS_PER_ORG is ${limits.perOrganization}; close one first`;
  };

  const disposable = useServer<Record<string, unknown>, Extra>(
    {
      schema,
      async onConnect(ctx) {
        const { socket, request } = ctx.extra;
        const credentials = credentialsOf(ctx.connectionParams);
        const attempt = attempts.get(request);
        // Credentials that do not authenticate count against the client IP, as an HTTP request without them does.
        const refuse = async (reason: string) => {
          const decision = await attempt?.refused();
          if (decision && !decision.allowed) socket.close(TOO_MANY, anonymousRefusal(decision));
          else socket.close(UNAUTHORIZED, reason);
          return false;
        };
        if (credentials.apiKey === undefined && credentials.authorization === undefined) {
          return refuse('Authentication is required: send x-api-key or authorization in connection_init');
        }
        let actor: Actor | null;
        try {
          actor = await RequestContext.create(em, () => services.auth.authenticate(credentials));
        } catch (error) {
          const appError = toAppError(error);
          if (appError.code === 'UNAUTHENTICATED') return refuse(appError.message.slice(0, 120));
          socket.close(1013, 'The server cannot authenticate now; try again shortly');
          return false;
        }
        if (!actor) return false;
        attempt?.passed();
        // The client may have gone while its credentials were checked: it takes no place then.
        if (socket.readyState !== socket.OPEN) return false;
        let release: () => void;
        try {
          release = services.live.connections.open(actor);
        } catch (error) {
          socket.close(TOO_MANY, liveConnectionsRefusal(toAppError(error).message));
          return false;
        }
        const token = credentials.apiKey === undefined ? /^Bearer\s+(\S+)$/i.exec(credentials.authorization ?? '')?.[1] : undefined;
        const exp = token ? (jwt.decode(token) as { exp?: number } | null)?.exp : undefined;
        const session: Session = { actor, release, socket, operations: new Set(), ...(exp ? { expiresAt: exp * 1000 } : {}) };
        sessionIds.set(session, randomUUID());
        sessions.add(session);
        ctx.extra.session = session;
        return true;
      },
      onClose(ctx) {
        const session = ctx.extra.session;
        if (!session) return;
        sessions.delete(session);
        session.release();
        for (const operationId of [...session.operations]) release(session, operationId);
      },
      async onSubscribe(ctx, id, payload: SubscribePayload) {
        const session = ctx.extra.session!;
        const requestId = randomUUID();
        const refuse = (errors: GraphQLError[]) => errors;
        let document: DocumentNode;
        try {
          document = parse(payload.query, { maxTokens: options.maxTokens });
        } catch (error) {
          // A document that does not parse is bad input, as on the HTTP door.
          return refuse([badInput(error instanceof Error ? error.message : String(error))]);
        }
        const errors = validate(schema, document, rules);
        // Coded as Apollo codes them on the HTTP door, so the same document fails with the same code on both.
        if (errors.length > 0) {
          return refuse(
            errors.map(
              (error) => new GraphQLError(error.message, { nodes: error.nodes, extensions: { ...error.extensions, code: 'GRAPHQL_VALIDATION_FAILED' } }),
            ),
          );
        }
        const operation = getOperationAST(document, payload.operationName ?? undefined);
        if (!operation) return refuse([badInput('The document names no operation to run (or several: say which with operationName)')]);
        if (operation.operation !== 'subscription') {
          return refuse([badInput('The WebSocket carries subscriptions only; send queries and mutations over HTTP (POST /graphql)')]);
        }
        let cost = 0;
        try {
          cost = operationCost(schema, document, payload.variables ?? {}, payload.operationName ?? undefined);
        } catch {
          // variables that do not fit: execution refuses them with BAD_USER_INPUT
        }
        if (cost > options.maxCost) {
          return refuse([
            badInput(`The operation would cost ${cost}, over the limit of ${options.maxCost}; ask for fewer fields`, { cost, maxCost: options.maxCost }),
          ]);
        }
        const key = session.actor.apiKeyId;
        const open = perKey.get(key) ?? new Set<string>();
        if (open.size >= options.subscriptionsPerKey) {
          return refuse([
            new GraphQLError(
              `This API key already has ${open.size} open subscriptions, the most SUBSCRIPTIONS_PER_KEY allows (${options.subscriptionsPerKey}); complete one before subscribing again`,
              { extensions: { code: 'RATE_LIMITED', limit: options.subscriptionsPerKey } },
            ),
          ]);
        }
        open.add(`${sessionIds.get(session)}:${id}`);
        perKey.set(key, open);
        session.operations.add(id);
        const contextValue: GraphQLContext = {
          services,
          requestId,
          logger,
          actor: session.actor,
          authError: null,
          loaders: options.loaders(services, session.actor),
        };
        return {
          schema,
          document,
          operationName: payload.operationName ?? undefined,
          variableValues: payload.variables ?? undefined,
          contextValue,
        } satisfies ExecutionArgs;
      },
      subscribe: eventAnswers({
        database,
        services,
        loaders: options.loaders,
        responseMaxBytes: options.responseMaxBytes,
        ...(options.gate ? { gate: options.gate } : {}),
      }),
      onNext(_ctx, _id, _payload, args, result) {
        if (!result.errors) return undefined;
        const requestId = (args.contextValue as GraphQLContext).requestId;
        return { ...result, errors: format(result.errors as GraphQLError[], requestId) } as never;
      },
      onError(_ctx, _id, _payload, errors) {
        return format(errors, randomUUID()) as never;
      },
      onComplete(ctx, id) {
        const session = ctx.extra.session;
        if (session) release(session, id);
      },
    },
    wss,
  );

  // A key deactivated, deleted or expired while its sockets are open closes them within KEY_CHECK_MS.
  const checker = setInterval(() => void checkKeys(), options.keyCheckMs ?? KEY_CHECK_MS);
  checker.unref();
  let checking = false;
  async function checkKeys(): Promise<void> {
    if (checking || sessions.size === 0) return;
    checking = true;
    try {
      const now = Date.now();
      for (const session of sessions) {
        if (session.expiresAt !== undefined && session.expiresAt <= now) session.socket.close(KEY_REVOKED, 'The bearer token expired');
      }
      const keys = [...new Set([...sessions].map((session) => session.actor.apiKeyId))];
      if (keys.length === 0) return;
      const usable = await services.auth.usableKeyIds(keys);
      for (const session of [...sessions]) {
        if (usable.has(session.actor.apiKeyId)) continue;
        sessions.delete(session);
        session.socket.close(KEY_REVOKED, 'The API key was deactivated, deleted or expired');
      }
    } catch (error) {
      logger.warn({ error: error instanceof Error ? error.message : String(error) }, 'subscription key check failed; retrying');
    } finally {
      checking = false;
    }
  }

  let closing: Promise<void> | undefined;
  return {
    /**
     * Handles an HTTP upgrade to /graphql. Its credentials come later (connection_init), so a client IP
     * already over RATE_LIMIT_ANONYMOUS_PER_MINUTE is answered 429 with Retry-After here, before the
     * upgrade, as the HTTP door answers it; the upgrade itself counts nothing.
     */
    async upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): Promise<void> {
      const attempt = await admitUpgrade(options.anonymous, req, socket);
      if (!attempt) return;
      attempts.set(req, attempt);
      wss.handleUpgrade(req, socket, head, (ws) => wss.emit('connection', ws, req));
    },
    /** Open sockets and subscriptions (tests, metrics). */
    stats() {
      return { sockets: sessions.size, subscriptions: [...perKey.values()].reduce((sum, open) => sum + open.size, 0) };
    },
    /** Closes every socket (1001) and the server; once, however often it is called (shutdown, then stop). */
    close(): Promise<void> {
      closing ??= (async () => {
        clearInterval(checker);
        for (const client of wss.clients) client.close(1001, 'The server is shutting down');
        await disposable.dispose();
      })();
      return closing;
    },
  };
}
