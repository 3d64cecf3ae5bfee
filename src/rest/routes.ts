import { Router, type Request, type Response } from 'express';
import type { Actor } from '../common/actor.js';
import { AppError } from '../common/errors.js';
import { parseInput } from '../common/validation.js';
import { principalOf } from '../platform/principal.js';
import { parseIdempotencyKey } from './idempotency-key.js';
import type { IdempotencyService } from '../modules/idempotency/idempotency.service.js';
import type { JsonSchema } from './json-schema.js';
import type { Presenter } from './present.js';
import { JsonText } from './present-sql.js';

type Constructor<T = object> = new () => T;

export interface RouteContext<B, Q, S> {
  actor: Actor;
  body: B;
  query: Q;
  params: Record<string, string>;
  /** The services this route table declared it uses (routesUsing), no more. */
  services: S;
  presenter: Presenter;
  req: Request;
  res: Response;
}

/** One REST route: what Express serves and what the OpenAPI document says, from one declaration. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- a route declares its body, query and services types; unparameterised it takes any
export interface RouteDefinition<B = any, Q = any, S = any> {
  method: 'get' | 'post' | 'put' | 'patch' | 'delete';
  /** OpenAPI style, relative to /api: `/auth/api-keys/{id}`. */
  path: string;
  operationId: string;
  summary: string;
  /** What the OpenAPI operation says besides its summary; the shared facts (roles, paging, 404, idempotency) are added to it. */
  description?: string;
  tag: string;
  body?: Constructor<B>;
  /** A body that is not JSON, which the handler reads from `req` as it arrives (a CSV upload): its media type, for OpenAPI and a 415 otherwise. */
  rawBody?: { mediaType: string; description: string; example: string };
  query?: Constructor<Q>;
  /** Success status; 204 answers no body. */
  status?: number;
  /** Success body: a JSON schema that may `$ref` GraphQL object types by name. */
  response?: JsonSchema;
  /** Error statuses this route can answer besides 400/401/500. */
  errors?: number[];
  /** An array answer bounded by page/limit, its total and neighbours in X-Total-Count and Link headers. */
  pageHeaders?: boolean;
  /** A create that honours the Idempotency-Key header: a repeat replays the first answer. */
  idempotent?: boolean;
  /**
   * The handler writes the answer itself, as it is read (a CSV export): OpenAPI documents it with this
   * media type and example, and no JSON is sent after it. It is not held to RESPONSE_MAX_BYTES.
   */
  streams?: {
    mediaType: string;
    example: string;
    headers?: Record<string, JsonSchema>;
    /** When the route answers 204 instead of a stream. */
    noContent?: string;
    /** When the route answers 206 with a part of the stream (a Range). */
    partial?: string;
  };
  handler(context: RouteContext<B, Q, S>): Promise<unknown>;
}

/**
 * The route builder of one route table, whose handlers see only the services `S` it names: a table
 * declares what it calls (`routesUsing<{ agents: AgentService }>()`), so no module imports the
 * composition root's whole `Services`, and what a table depends on is read at its top.
 */
export function routesUsing<S>() {
  return function defineRoute<B = undefined, Q = undefined>(route: RouteDefinition<B, Q, S>): RouteDefinition<B, Q, S> {
    return route;
  };
}

/** Mounts the routes on an Express router: authenticate, validate with the input classes, call, answer. */
export function mountRoutes<S extends { idempotency: Pick<IdempotencyService, 'run'> }>(
  router: Router,
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- a table of routes, each with its own body and query types
  routes: RouteDefinition<any, any, S>[],
  services: S,
  presenter: Presenter,
): void {
  // Grouped by the path's first segment, each group a router of its own, found by a look-up of the
  // request's first segment. Express tried a request against each route in turn: a route late in the
  // table (a program's executions, the 78th) was matched against every route before it on every
  // request; then against the groups' prefixes before its own (twelve for the executions); now only
  // against its group's routes. Paths with different first segments never matched the same request,
  // so the order that counts (within a group) is the table's. Express matches paths regardless of case,
  // so the look-up does too.
  const groups = new Map<string, Router>();
  for (const route of routes) {
    const first = route.path.split('/')[1] ?? '';
    if (!/^[\w.-]+$/.test(first)) throw new Error(`The route ${route.method} ${route.path} must begin with a fixed segment`);
    let group = groups.get(first.toLowerCase());
    if (!group) {
      group = Router();
      groups.set(first.toLowerCase(), group);
    }
    // The whole pattern in Express's form: what the group matches, and the metrics' route label.
    const pattern = route.path.replace(/\{(\w+)\}/g, ':$1');
    group[route.method](pattern, async (req: Request, res: Response) => {
      res.locals.routePattern = pattern;
      // authenticateRequest (src/platform/principal.ts) ran once before the rate limit.
      const { actor, authError } = principalOf(res);
      if (authError) throw authError;
      if (!actor) {
        throw new AppError('UNAUTHENTICATED', 'Authentication is required: send x-api-key or Authorization: Bearer');
      }
      if (route.body) requireJsonBody(req);
      if (route.rawBody && !req.is(route.rawBody.mediaType)) {
        const type = req.get('content-type');
        throw new AppError(
          'UNSUPPORTED_MEDIA_TYPE',
          `Send the body as ${route.rawBody.mediaType} (${type ? `got ${type.split(';')[0]}` : 'no content-type was sent'})`,
        );
      }
      const body = route.body ? await parseInput(route.body, req.body) : undefined;
      const query = route.query ? await parseInput(route.query, req.query, 'query') : undefined;
      if (!route.query && Object.keys(req.query).length > 0) {
        throw AppError.badInput(Object.keys(req.query).map((name) => ({ field: name, message: `unknown query parameter ${name}` })));
      }
      const key = route.idempotent ? parseIdempotencyKey(req.get('idempotency-key')) : undefined;
      const status = route.status ?? 200;
      const call = () => route.handler({ actor, body, query, params: req.params as Record<string, string>, services, presenter, req, res });
      if (route.streams) {
        await call();
        return;
      }
      if (key === undefined) {
        send(res, status, await call());
        return;
      }
      const request = { method: req.method, path: req.originalUrl.split('?')[0]!, key, body: req.body as unknown };
      const answer = await services.idempotency.run(actor, request, async () => ({ status, body: await call() }));
      if (answer.replayed) res.setHeader('Idempotent-Replayed', 'true');
      send(res, answer.status, answer.body);
    });
  }
  router.use((req, res, next) => {
    const slash = req.path.indexOf('/', 1);
    const group = groups.get((slash < 0 ? req.path.slice(1) : req.path.slice(1, slash)).toLowerCase());
    if (group) group(req, res, next);
    else next();
  });
}

/** A body sent as anything but JSON would be read as no body at all ("name must be a string"): say what to send. */
function requireJsonBody(req: Request): void {
  const sent = req.headers['transfer-encoding'] !== undefined || Number(req.headers['content-length'] ?? 0) > 0;
  if (!sent || req.is('application/json')) return;
  const type = req.get('content-type');
  throw new AppError(
    'UNSUPPORTED_MEDIA_TYPE',
    `Send the body as JSON with the header content-type: application/json (${type ? `got ${type.split(';')[0]}` : 'no content-type was sent'})`,
  );
}

/** Each route's path as a pattern, compiled once per route table (an unknown path is checked against all of them). */
const PATTERNS = new WeakMap<RouteDefinition[], RegExp[]>();

/** The methods the route table serves on a path (HEAD with GET, as Express answers it), or none for an unknown path. */
export function allowedMethods(routes: RouteDefinition[], path: string): string[] {
  let patterns = PATTERNS.get(routes);
  if (!patterns) {
    patterns = routes.map((route) => new RegExp(`^${route.path.replace(/\{\w+\}/g, '[^/]+')}/?$`));
    PATTERNS.set(routes, patterns);
  }
  const methods = new Set<string>();
  for (const [index, route] of routes.entries()) {
    if (!patterns[index]!.test(path)) continue;
    methods.add(route.method.toUpperCase());
    if (route.method === 'get') methods.add('HEAD');
  }
  return [...methods];
}

/** The last handler of the router: a known path with another method → 405 and Allow; anything else → 404. */
export function unmatchedRoute(routes: RouteDefinition[]) {
  return (req: Request, res: Response, next: (error: AppError) => void): void => {
    const allowed = allowedMethods(routes, req.path);
    if (allowed.length === 0) return next(new AppError('NOT_FOUND', `No route ${req.method} ${req.baseUrl}${req.path}`));
    res.setHeader('Allow', allowed.join(', '));
    next(new AppError('METHOD_NOT_ALLOWED', `${req.baseUrl}${req.path} does not take ${req.method}; it takes ${allowed.join(', ')}`));
  };
}

/** What res.json sends as its content type. */
const JSON_CONTENT_TYPE = 'application/json; charset=utf-8';

function send(res: Response, status: number, body: unknown): void {
  if (status === 204) res.status(204).end();
  // JSON the database wrote (src/rest/present-sql.ts): sent as it is, with res.json's content type,
  // encoded once (a string would be measured for the size limit, then encoded by res.send).
  else if (body instanceof JsonText) res.status(status).setHeader('content-type', JSON_CONTENT_TYPE).send(Buffer.from(body.text));
  else res.status(status).json(body);
}
