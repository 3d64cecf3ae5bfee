import { RETENTION_BATCH, type RecordingService } from './recording.service.js';

/** How often the retention pass looks for recordings past their organization's retention. */
export const RETENTION_INTERVAL_MS = 60_000;
/** Batches one pass takes at most, so a pass stays bounded however long the backlog; the rest waits for the next. */
const MAX_BATCHES_PER_PASS = 20;

/**
 * The campaign runner's onTick hook that deletes recordings older than their organization's
 * recordingRetentionDays (at the carrier, then marked deleted with reason `retention`): at most once
 * a RETENTION_INTERVAL_MS, batch after batch while a full one was taken (up to MAX_BATCHES_PER_PASS).
 * A recording it could not delete waits for its retry time (RecordingService.applyRetention), so it
 * is never taken twice in a pass and never holds a batch.
 */
export function recordingRetentionHook(recordings: RecordingService, intervalMs = RETENTION_INTERVAL_MS): (now: Date) => Promise<void> {
  let last = -Infinity;
  return async (now) => {
    if (now.getTime() - last < intervalMs) return;
    last = now.getTime();
    for (let batch = 0; batch < MAX_BATCHES_PER_PASS && (await recordings.applyRetention(now)).taken >= RETENTION_BATCH; batch++);
  };
}
