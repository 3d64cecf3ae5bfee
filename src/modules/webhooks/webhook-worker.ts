import type { EntityManager } from '@mikro-orm/postgresql';
import type { Logger } from 'pino';
import { Webhook } from 'standardwebhooks';
import { CredentialsError, open } from '../../platform/credentials.js';
import { at, query } from '../../db/sql.js';
import { disableEndpoint } from './webhook-disable.js';
import { DISABLE_AFTER_FAILING_MS, nextAttemptAt } from './webhook-schedule.js';
import { sendDelivery, type SendResult } from './webhook-sender.js';

export interface WebhookWorkerOptions {
  em: EntityManager;
  /** CREDENTIALS_KEY, read when needed; without it nothing is claimed. */
  credentialsKey: () => Buffer | undefined;
  allowPrivate: boolean;
  /** WEBHOOK_TIMEOUT_MS: a delivery not answered within this is a failed attempt. */
  timeoutMs: number;
  /** What due times, leases and rotations are measured against; tests inject one. */
  clock?: () => Date;
  random?: () => number;
  intervalMs?: number;
  /** Deliveries claimed per tick. */
  batch?: number;
  logger?: Logger;
}

/** How long a delivery whose secret does not open with CREDENTIALS_KEY waits before it is tried again (uncounted). */
export const HELD_BACK_MS = 60_000;

/** What a held-back delivery shows as its lastError: the operator's to fix, not the endpoint's failure. */
export const HELD_BACK_ERROR =
  'Held back: the signing secret does not open with the server’s credentials key (the operator’s to fix); not counted as an attempt';

interface Claimed {
  id: string;
  endpoint_id: string;
  message_id: string;
  event_type: string;
  event_created_at: Date | string;
  attempts: number;
  url: string;
  secret_encrypted: string;
  previous_secret_encrypted: string | null;
  previous_secret_expires_at: Date | string | null;
  data: Record<string, unknown> | string | null;
}

/**
 * Sends due webhook deliveries. Every replica runs one: a tick claims due deliveries with
 * `FOR UPDATE SKIP LOCKED` and a lease (the attempt number is taken at the claim), so two workers never
 * send the same attempt, and a worker that dies mid-send leaves the delivery to be claimed again when
 * its lease ends — at least once, never lost.
 */
export class WebhookWorker {
  private readonly clock: () => Date;
  private readonly random: () => number;
  private readonly leaseMs: number;
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<unknown> | null = null;
  private stopped = true;

  constructor(private readonly options: WebhookWorkerOptions) {
    this.clock = options.clock ?? (() => new Date());
    this.random = options.random ?? Math.random;
    this.leaseMs = options.timeoutMs + 60_000;
  }

  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.schedule(0);
  }

  /** Stops ticking and waits for the tick in flight (its sends are bounded by the timeout). */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.running?.catch(() => {});
  }

  /** Claims the due deliveries (one batch), sends them at once and records each attempt; answers how many were sent. */
  async tick(): Promise<number> {
    const key = this.options.credentialsKey();
    if (!key) return 0;
    const claimed = await this.claim(this.clock());
    const outcomes = await Promise.all(claimed.map((delivery) => this.deliver(delivery, key)));
    const heldBack = outcomes.filter((outcome) => outcome === 'held back').length;
    if (heldBack > 0) {
      this.options.logger?.error(
        { heldBack, retryInMs: HELD_BACK_MS },
        'webhook deliveries held back: their signing secret does not open with CREDENTIALS_KEY; set the key the secrets were sealed with (no attempt is counted meanwhile)',
      );
    }
    return claimed.length - heldBack;
  }

  private schedule(delayMs: number): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      const run = this.tick()
        .catch((error: unknown) => {
          this.options.logger?.error({ err: error }, 'webhook worker tick failed');
          return 0;
        })
        .then((sent) => this.schedule(sent >= (this.options.batch ?? 50) ? 0 : (this.options.intervalMs ?? 1000)));
      this.running = run;
    }, delayMs);
  }

  private async claim(now: Date): Promise<Claimed[]> {
    const em = this.options.em.fork();
    return query<Claimed>(
      em,
      `update webhook_deliveries d set attempts = d.attempts + 1, lease_until = ?::timestamptz, updated_at = ?::timestamptz
       from webhook_endpoints e
       where e.id = d.endpoint_id and d.id in (
         select candidate.id from webhook_deliveries candidate join webhook_endpoints owner on owner.id = candidate.endpoint_id
         where candidate.status = 'pending' and candidate.next_attempt_at <= ?::timestamptz
           and (candidate.lease_until is null or candidate.lease_until <= ?::timestamptz) and owner.enabled
         order by candidate.next_attempt_at limit ? for update of candidate skip locked)
       returning d.id, d.endpoint_id, d.message_id, d.event_type, d.event_created_at, d.attempts, e.url, e.secret_encrypted,
         e.previous_secret_encrypted, e.previous_secret_expires_at,
         coalesce(d.payload, (select payload from events where events.id = d.event_id)) as data`,
      [at(new Date(now.getTime() + this.leaseMs)), at(now), at(now), at(now), this.options.batch ?? 50],
    );
  }

  private async deliver(delivery: Claimed, key: Buffer): Promise<'recorded' | 'held back'> {
    const now = this.clock();
    let result: SendResult;
    try {
      const data = typeof delivery.data === 'string' ? (JSON.parse(delivery.data) as Record<string, unknown>) : (delivery.data ?? {});
      const body = JSON.stringify({ type: delivery.event_type, timestamp: new Date(delivery.event_created_at).toISOString(), data });
      // The signature's timestamp is the real time of sending: receivers check it against their own clock.
      const sentAt = new Date();
      const secrets = [open(delivery.secret_encrypted, key)];
      const previousUntil = delivery.previous_secret_expires_at ? new Date(delivery.previous_secret_expires_at) : null;
      if (delivery.previous_secret_encrypted && previousUntil && previousUntil > now) secrets.push(open(delivery.previous_secret_encrypted, key));
      const signature = secrets.map((secret) => new Webhook(secret).sign(delivery.message_id, sentAt, body)).join(' ');
      const headers = { 'webhook-id': delivery.message_id, 'webhook-timestamp': String(Math.floor(sentAt.getTime() / 1000)), 'webhook-signature': signature };
      result = await sendDelivery(delivery.url, headers, body, { timeoutMs: this.options.timeoutMs, allowPrivate: this.options.allowPrivate });
      if (result.refusedBecause) {
        this.options.logger?.info(
          { deliveryId: delivery.id, endpointId: delivery.endpoint_id, reason: result.refusedBecause },
          'webhook delivery refused: the endpoint’s address',
        );
      }
    } catch (error) {
      if (error instanceof CredentialsError) {
        await this.holdBack(delivery, this.clock()).catch((failure: unknown) =>
          this.options.logger?.error({ err: failure, deliveryId: delivery.id }, 'webhook delivery not held back'),
        );
        return 'held back';
      }
      result = { statusCode: null, latencyMs: 0, error: `Could not prepare the delivery: ${error instanceof Error ? error.name : 'error'}` };
    }
    await this.record(delivery, result, this.clock()).catch((error: unknown) =>
      this.options.logger?.error({ err: error, deliveryId: delivery.id }, 'webhook attempt not recorded'),
    );
    return 'recorded';
  }

  /**
   * A secret that does not open with CREDENTIALS_KEY is the operator's to fix, not the endpoint's
   * failure: the claim is given back uncounted (no attempt recorded, its attempt number taken back,
   * the endpoint's failure run untouched, so neither the retry budget nor the 5-day disable is
   * spent) and the delivery is due again in HELD_BACK_MS. It goes once the right key is set.
   */
  private async holdBack(delivery: Claimed, now: Date): Promise<void> {
    await query(
      this.options.em.fork(),
      `update webhook_deliveries set attempts = attempts - 1, lease_until = null, next_attempt_at = ?::timestamptz, last_error = ?, updated_at = ?::timestamptz
       where id = ? and attempts = ? and status = 'pending'`,
      [at(new Date(now.getTime() + HELD_BACK_MS)), HELD_BACK_ERROR, at(now), delivery.id, delivery.attempts],
    );
  }

  /** Logs the attempt and moves the delivery: succeeded, pending with its next due time, or failed; then the endpoint's failure run. */
  private async record(delivery: Claimed, result: SendResult, now: Date): Promise<void> {
    const em = this.options.em.fork();
    const ok = result.error === null;
    const next = ok ? null : nextAttemptAt(delivery.attempts, now, this.random);
    const status = ok ? 'succeeded' : result.statusCode === 410 || next === null ? 'failed' : 'pending';
    const error = result.error?.slice(0, 1000) ?? null;
    let disableReason: string | null = null;
    await em.transactional(async (tx) => {
      await query(
        tx,
        'insert into webhook_delivery_attempts (id, delivery_id, attempt, attempted_at, status_code, latency_ms, error) values (gen_random_uuid(), ?, ?, ?::timestamptz, ?, ?, ?) on conflict do nothing',
        [delivery.id, delivery.attempts, at(now), result.statusCode, result.latencyMs, error],
      );
      // Only the claim that holds this attempt number may move the delivery (and count toward its endpoint).
      const moved = await query(
        tx,
        `update webhook_deliveries set status = ?, next_attempt_at = coalesce(?::timestamptz, next_attempt_at), lease_until = null, last_attempt_at = ?::timestamptz,
           last_status_code = ?, last_latency_ms = ?, last_error = ?, updated_at = ?::timestamptz
         where id = ? and attempts = ? and status = 'pending' returning id`,
        [status, next ? at(next) : null, at(now), result.statusCode, result.latencyMs, error, at(now), delivery.id, delivery.attempts],
      );
      if (moved.length === 0) return;
      if (ok) {
        await query(tx, 'update webhook_endpoints set failing_since = null where id = ? and failing_since is not null', [delivery.endpoint_id]);
        return;
      }
      const [endpoint] = await query<{ failing_since: Date | string; enabled: boolean }>(
        tx,
        'update webhook_endpoints set failing_since = coalesce(failing_since, ?::timestamptz) where id = ? returning failing_since, enabled',
        [at(now), delivery.endpoint_id],
      );
      if (!endpoint?.enabled) return;
      if (result.statusCode === 410) {
        disableReason = `The endpoint answered 410 Gone at ${now.toISOString()}`;
      } else if (now.getTime() - new Date(endpoint.failing_since).getTime() >= DISABLE_AFTER_FAILING_MS) {
        disableReason = `Every delivery failed since ${new Date(endpoint.failing_since).toISOString()} (5 days)`;
      }
    });
    if (disableReason !== null) {
      await disableEndpoint(this.options.em.fork(), delivery.endpoint_id, disableReason, now);
      this.options.logger?.warn({ endpointId: delivery.endpoint_id, reason: disableReason }, 'webhook endpoint disabled');
    }
  }
}
