import { RETENTION_BATCH, type RecordingService } from './recording.service.js';

/** How often the retention pass looks for recordings past their organization's retention. */
export const RETENTION_INTERVAL_MS = 60_000;

/**
 * The campaign runner's onTick hook that deletes recordings older than their organization's
 * recordingRetentionDays (at the carrier, then marked deleted with reason `retention`): at most once
 * a RETENTION_INTERVAL_MS, and batch after batch while a full one was deleted.
 */
export function recordingRetentionHook(recordings: RecordingService, intervalMs = RETENTION_INTERVAL_MS): (now: Date) => Promise<void> {
  let last = -Infinity;
  return async (now) => {
    if (now.getTime() - last < intervalMs) return;
    last = now.getTime();
    while ((await recordings.applyRetention(now)) >= RETENTION_BATCH);
  };
}
