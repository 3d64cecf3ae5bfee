import { createHash, timingSafeEqual } from 'node:crypto';
import type { NextFunction, Request, Response } from 'express';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { Database } from '../db/orm.js';

/** Work the runner still has to dial: pending contacts of running executions. */
export const QUEUE_DEPTH_SQL = `select count(*)::int as depth from execution_contacts ec
  join executions e on e.id = ec.execution_id
  where ec.status = 'pending' and e.status = 'running'`;

/** GraphQL operation names kept as labels: the first ones seen, up to this many; later names count as `other`. */
export const MAX_OPERATION_LABELS = 100;
/** A longer operation name counts as `other`. */
export const MAX_OPERATION_LABEL_LENGTH = 64;
const OPERATION_NAME = /^[_A-Za-z][_0-9A-Za-z]*$/;

/** Prometheus metrics of one gateway; a registry per app, so several apps in one process do not clash. */
export class GatewayMetrics {
  readonly registry = new Registry();
  private readonly requests: Counter<'door' | 'route' | 'method' | 'status'>;
  private readonly duration: Histogram<'door' | 'route' | 'method'>;
  private readonly errors: Counter<'code'>;
  private readonly voiceTurns: Histogram<'mode' | 'provider' | 'part'>;
  private readonly operations = new Set<string>();

  constructor(database: Database) {
    const registers = [this.registry];
    collectDefaultMetrics({ register: this.registry });
    this.requests = new Counter({
      name: 'http_requests_total',
      help: 'Requests answered, by door, route pattern or GraphQL operation, method and status',
      labelNames: ['door', 'route', 'method', 'status'],
      registers,
    });
    this.duration = new Histogram({
      name: 'http_request_duration_seconds',
      help: 'Time to answer a request, by door, route pattern or GraphQL operation, and method',
      labelNames: ['door', 'route', 'method'],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers,
    });
    this.errors = new Counter({ name: 'errors_total', help: 'Errors answered, by error code', labelNames: ['code'], registers });
    this.voiceTurns = new Histogram({
      name: 'gateway_voice_turn_latency_seconds',
      help:
        'Agent turns of voice calls: from the end of the caller’s speech to the first agent audio sent to the carrier (part=total), ' +
        'the providers’ share up to that audio reaching the gateway (part=provider) and the gateway’s own (part=gateway), by mode and provider; ' +
        'streaming calls also split the providers’ share (part=recognizer, model, synthesizer)',
      labelNames: ['mode', 'provider', 'part'],
      buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers,
    });
    new Gauge({
      name: 'db_pool_connections',
      help: 'PostgreSQL pool connections by state (absent on the embedded PGlite, which has no pool)',
      labelNames: ['state'],
      registers,
      collect() {
        const pool = database.poolStats();
        if (!pool) return;
        this.set({ state: 'total' }, pool.total);
        this.set({ state: 'idle' }, pool.idle);
        this.set({ state: 'waiting' }, pool.waiting);
      },
    });
    new Gauge({
      name: 'db_embedded_waiting',
      help: 'Statements waiting for the embedded PGlite’s one session, for requests (served first) and for background work (absent on PostgreSQL)',
      labelNames: ['for'],
      registers,
      collect() {
        const waiting = database.embeddedWaiting();
        if (!waiting) return;
        this.set({ for: 'request' }, waiting.requests);
        this.set({ for: 'background' }, waiting.background);
      },
    });
    new Gauge({
      name: 'runner_queue_depth',
      help: 'Pending contacts of running executions, counted at scrape time',
      registers,
      async collect() {
        try {
          const [row] = await database.em.fork().getConnection().execute<{ depth: number }[]>(QUEUE_DEPTH_SQL);
          this.set(Number(row?.depth ?? 0));
        } catch {
          // The database is away: keep the last value; /readyz says so.
        }
      },
    });
  }

  /**
   * The route label of a GraphQL request, from a bounded set: `anonymous` unless the caller
   * authenticated (the name is set only then), the operation name while it is short and among the
   * first MAX_OPERATION_LABELS seen, else `other`. Client-chosen names cannot grow /metrics without end.
   */
  operationLabel(name: unknown): string {
    if (typeof name !== 'string') return 'anonymous';
    if (name.length > MAX_OPERATION_LABEL_LENGTH || !OPERATION_NAME.test(name)) return 'other';
    if (this.operations.has(name)) return name;
    if (this.operations.size >= MAX_OPERATION_LABELS) return 'other';
    this.operations.add(name);
    return name;
  }

  /** One agent turn of a voice call (milliseconds, as the call records them). */
  observeVoiceTurn(
    labels: { mode: string; provider: string },
    turn: { totalMs: number; providerMs: number; gatewayMs: number; recognizerMs?: number | null; modelMs?: number | null; synthesizerMs?: number | null },
  ): void {
    this.voiceTurns.observe({ ...labels, part: 'total' }, turn.totalMs / 1000);
    this.voiceTurns.observe({ ...labels, part: 'provider' }, turn.providerMs / 1000);
    this.voiceTurns.observe({ ...labels, part: 'gateway' }, turn.gatewayMs / 1000);
    for (const part of ['recognizer', 'model', 'synthesizer'] as const) {
      const ms = turn[`${part}Ms`];
      if (typeof ms === 'number') this.voiceTurns.observe({ ...labels, part }, ms / 1000);
    }
  }

  countError(code: string): void {
    this.errors.inc({ code });
  }

  // Each series' child, kept by its labels: prom-client hashes a label object (keys sorted) on every
  // inc/observe otherwise. Bounded as the labels are (routes, bounded operation names, methods, statuses).
  private readonly requestChildren = new Map<string, { inc(): void }>();
  private readonly durationChildren = new Map<string, { observe(value: number): void }>();

  private requestSeries(door: string, route: string, method: string, status: number): { inc(): void } {
    const key = `${door} ${method} ${status} ${route}`;
    let child = this.requestChildren.get(key);
    if (!child) this.requestChildren.set(key, (child = this.requests.labels({ door, route, method, status: String(status) })));
    return child;
  }

  private durationSeries(door: string, route: string, method: string): { observe(value: number): void } {
    const key = `${door} ${method} ${route}`;
    let child = this.durationChildren.get(key);
    if (!child) this.durationChildren.set(key, (child = this.duration.labels({ door, route, method })));
    return child;
  }

  /** Observes every request of the doors it is mounted on once it is answered. */
  observe() {
    return (req: Request, res: Response, next: NextFunction): void => {
      const started = process.hrtime.bigint();
      res.once('finish', () => {
        const graphql = req.originalUrl.startsWith('/graphql');
        // The route pattern (never the raw URL, which would make a series per id): the route table's
        // (mountRoutes), or the Express route's for the routes outside it (the OpenAPI document).
        const pattern = (res.locals.routePattern as string | undefined) ?? (req.route ? String(req.route.path) : undefined);
        const route = graphql ? this.operationLabel(res.locals.graphqlOperation) : pattern ? `/api${pattern}` : 'unmatched';
        const door = graphql ? 'graphql' : 'rest';
        this.requestSeries(door, route, req.method, res.statusCode).inc();
        this.durationSeries(door, route, req.method).observe(Number(process.hrtime.bigint() - started) / 1e9);
        if (typeof res.locals.errorCode === 'string') this.countError(res.locals.errorCode);
      });
      next();
    };
  }

  /** GET /metrics in the Prometheus text format; with a token, only for `Authorization: Bearer <token>`. */
  handler(token?: string) {
    const wanted = token ? digest(token) : undefined;
    return async (req: Request, res: Response): Promise<void> => {
      if (wanted) {
        const given = /^Bearer (\S+)$/i.exec(req.get('authorization') ?? '')?.[1];
        if (!given || !timingSafeEqual(digest(given), wanted)) {
          res.status(401).setHeader('WWW-Authenticate', 'Bearer realm="metrics"');
          res.type('text/plain').send('GET /metrics needs Authorization: Bearer <METRICS_TOKEN>\n');
          return;
        }
      }
      res.type(this.registry.contentType).send(await this.registry.metrics());
    };
  }
}

/** Equal-length digests, so the comparison takes the same time whatever was sent. */
function digest(text: string): Buffer {
  return createHash('sha256').update(text).digest();
}
