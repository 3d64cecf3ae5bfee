import { randomBytes, randomUUID } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import { at, query } from '../../db/sql.js';
import type { RecordingStatusEvent } from '../telephony/carrier.js';

/** What a report did: `applied` moved the recording; `ignored` changed nothing (a replay, a late or foreign report, a deleted recording). */
export type RecordingApplied = 'applied' | 'ignored';

/**
 * The writer's side of call recordings, for the carriers' reports and the simulator (no actor: the
 * call names the organization). Every write is one statement keyed by the call, so a replayed or
 * reordered report changes nothing: a recording moves from in_progress to one final status (completed,
 * absent, failed) once, a refused consent is never replaced, a deleted recording is never revived, and
 * a report of another recording than the one the call has is ignored.
 */
export class RecordingLedger {
  constructor(private readonly em: EntityManager) {}

  /** A carrier's report on the call's recording. */
  async apply(callId: string, event: RecordingStatusEvent, now = new Date()): Promise<RecordingApplied> {
    const rows = await query(
      this.em.fork(),
      `insert into call_recordings (id, created_at, updated_at, organization_id, call_id, carrier, carrier_connection_id, carrier_recording_id, status, channels, duration_seconds, error_text)
       select ?, ?::timestamptz, ?::timestamptz, c.organization_id, c.id, c.carrier, c.carrier_connection_id, ?, ?,
              coalesce(?, (select p.recording->>'channels' from programs p where p.id = c.program_id), 'mono'), ?, ?
         from calls c where c.id = ?
       on conflict (call_id) do update set
              status = excluded.status, updated_at = excluded.updated_at, error_text = excluded.error_text,
              carrier_recording_id = excluded.carrier_recording_id, channels = excluded.channels,
              duration_seconds = coalesce(excluded.duration_seconds, call_recordings.duration_seconds)
        where call_recordings.deleted_at is null and call_recordings.status = 'in_progress' and excluded.status <> 'in_progress'
          and (call_recordings.carrier_recording_id is null or call_recordings.carrier_recording_id = excluded.carrier_recording_id)
       returning id`,
      [randomUUID(), at(now), at(now), event.carrierRecordingId, event.status, event.channels, event.durationSeconds, event.errorText, callId],
    );
    return rows.length > 0 ? 'applied' : 'ignored';
  }

  /** The callee refused the consent sentence: the call is not recorded, and says so. */
  async refused(callId: string, channels: 'mono' | 'dual', now = new Date()): Promise<void> {
    await query(
      this.em.fork(),
      `insert into call_recordings (id, created_at, updated_at, organization_id, call_id, carrier, carrier_connection_id, status, channels)
       select ?, ?::timestamptz, ?::timestamptz, c.organization_id, c.id, c.carrier, c.carrier_connection_id, 'refused', ? from calls c where c.id = ?
       on conflict (call_id) do nothing`,
      [randomUUID(), at(now), at(now), channels, callId],
    );
  }

  /** The simulator's recording of an answered call: its generated WAV kept with the record, as a carrier would keep the audio. */
  async simulated(callId: string, audio: Buffer, channels: 'mono' | 'dual', durationSeconds: number, now = new Date()): Promise<RecordingApplied> {
    const rows = await query(
      this.em.fork(),
      `insert into call_recordings (id, created_at, updated_at, organization_id, call_id, carrier, carrier_connection_id, carrier_recording_id, status, channels, duration_seconds, audio)
       select ?, ?::timestamptz, ?::timestamptz, c.organization_id, c.id, c.carrier, c.carrier_connection_id, ?, 'completed', ?, ?, ? from calls c where c.id = ?
       on conflict (call_id) do nothing returning id`,
      [randomUUID(), at(now), at(now), `SR${randomBytes(16).toString('hex')}`, channels, durationSeconds, audio, callId],
    );
    return rows.length > 0 ? 'applied' : 'ignored';
  }
}
