import type { EventService } from './event.service.js';

const DAY_MS = 24 * 3_600_000;

/**
 * The campaign runner's onTick hook that keeps the outbox to `days` days: events created before
 * the tick's now minus `days` are deleted, a batch per statement (the created_at index finds them).
 */
export function eventRetentionHook(events: EventService, days: number): (now: Date) => Promise<void> {
  return async (now) => {
    await events.deleteOlderThan(new Date(now.getTime() - days * DAY_MS));
  };
}
