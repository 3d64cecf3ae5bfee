import { randomBytes } from 'node:crypto';
import type { Config } from '../../src/config.js';
import { WebhookWorker } from '../../src/modules/webhooks/webhook-worker.js';
import { startTestApp, type TestApp } from '../helpers/app.js';

/** A gateway that may deliver to loopback (WEBHOOK_ALLOW_PRIVATE=true), with a CREDENTIALS_KEY. */
export function startWebhookApp(overrides: Partial<Config> = {}, logTo?: Parameters<typeof startTestApp>[1]): Promise<TestApp> {
  const base = { twilioApiBaseUrl: 'https://api.twilio.com', credentialsKey: randomBytes(32) };
  return startTestApp({ telephony: base, webhooks: { allowPrivate: true, timeoutMs: 2000 }, ...overrides }, logTo);
}

/**
 * A clock the test moves: the real time plus an offset, so rows stamped by the database are due at
 * once. It reads one millisecond ahead: the database stamps a delivery's due time in microseconds
 * (`clock_timestamp()`) and a Date holds whole milliseconds, so a delivery stamped within the current
 * millisecond would not be due yet to a tick taken in that same millisecond. (A running worker takes
 * it on its next tick; a test that ticks once waited for nothing, as one CI run on PostgreSQL did.)
 */
export class TestClock {
  offsetMs = 1;
  readonly now = () => new Date(Date.now() + this.offsetMs);
  advance(ms: number): void {
    this.offsetMs += ms;
  }
}

/** A worker over the app's database, ticked by the test (never started). */
export function worker(
  app: TestApp,
  clock: TestClock,
  options: { timeoutMs?: number; allowPrivate?: boolean; em?: TestApp['db']['database']['em']; batch?: number } = {},
): WebhookWorker {
  return new WebhookWorker({
    em: options.em ?? app.db.database.em,
    credentialsKey: () => app.config.telephony.credentialsKey,
    allowPrivate: options.allowPrivate ?? true,
    timeoutMs: options.timeoutMs ?? app.config.webhooks.timeoutMs,
    clock: clock.now,
    random: () => 0.5,
    batch: options.batch,
  });
}

/** Ticks until a tick sends nothing. */
export async function drain(webhooks: WebhookWorker): Promise<number> {
  let sent = 0;
  for (;;) {
    const n = await webhooks.tick();
    sent += n;
    if (n === 0) return sent;
  }
}
