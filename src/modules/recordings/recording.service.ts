import { Readable } from 'node:stream';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Logger } from 'pino';
import type { Actor } from '../../common/actor.js';
import { AppError } from '../../common/errors.js';
import { isUuid } from '../../db/base.entity.js';
import { authorize } from '../organizations/roles.js';
import { at, query } from '../../db/sql.js';
import { Call } from '../telephony/call.entity.js';
import { CarrierError, type CarrierAccount, type RecordingCarrier } from '../telephony/carrier.js';
import { ProgramCarrier, type CarrierKind } from '../telephony/telephony.enums.js';
import { RecordingDeletionReason, RecordingStatus } from './recording.enums.js';
import { CallRecording } from './recording.entity.js';

/** Recordings taken per retention statement (recording-retention.ts runs batch after batch). */
export const RETENTION_BATCH = 50;
/** How long retention waits before trying again a recording it could not delete; doubled per failure up to RETENTION_RETRY_MAX_MS. */
export const RETENTION_RETRY_FIRST_MS = 3_600_000;
export const RETENTION_RETRY_MAX_MS = 86_400_000;

export type RecordingFormat = 'wav' | 'mp3';

export const RECORDING_MEDIA_TYPES: Record<RecordingFormat, string> = { wav: 'audio/wav', mp3: 'audio/mpeg' };

/** Slices of the simulator's stored audio read per statement: a download never holds the whole file. */
const SLICE_BYTES = 64 * 1024;

/** Bytes `start` to `end` of the audio, both included (an HTTP Range). */
export interface ByteRange {
  start: number;
  end: number;
}

/** What a download asks besides the format: only the headers (HEAD), and a part of the audio once its size is known. */
export interface DownloadWant {
  head?: boolean;
  /** Told the audio's size: the range to send, null for all of it, 'unsatisfiable' for a range the audio does not hold (416). */
  range?: (size: number) => ByteRange | 'unsatisfiable' | null;
}

export interface RecordingDownload {
  contentType: string;
  /** The bytes sent: the range's, or the whole audio's; null when the carrier did not say. */
  contentLength: number | null;
  /** The whole audio's size; null when the carrier did not say (no range is then served). */
  size: number | null;
  /** The part sent, or null for all of it. */
  range: ByteRange | null;
  filename: string;
  /** Nothing for HEAD: the audio is not read. */
  body: Readable | null;
}

export interface RecordingServiceOptions {
  /** Carriers that keep recordings, by kind (Twilio, Telnyx). */
  carriers: Partial<Record<CarrierKind, RecordingCarrier>>;
  /** A connection's account, its auth token opened for the request; null when the connection is gone. */
  account: (connectionId: string) => Promise<CarrierAccount | null>;
  logger?: Logger;
}

/**
 * Call recordings on both doors: read with the call (any role of the organization, like the call),
 * the audio streamed from the carrier with the connection's credentials (or from the simulator's
 * stored audio), deleted by an owner or admin at the carrier and here. Retention deletes them the
 * same way once they are older than the organization's recordingRetentionDays.
 */
export class RecordingService {
  constructor(
    private readonly em: EntityManager,
    private readonly options: RecordingServiceOptions,
  ) {}

  /** The call's recording; 404 for a call of another organization, and for a call that has none (saying so). */
  async get(actor: Actor, callId: string, em: EntityManager = this.em): Promise<CallRecording> {
    const call = isUuid(callId) ? await em.findOne(Call, { id: callId, organization: actor.organizationId }) : null;
    if (!call) throw AppError.notFound('Call');
    const recording = await em.findOne(CallRecording, { call: call.id, organization: actor.organizationId });
    if (!recording) throw new AppError('NOT_FOUND', 'The call has no recording (its program does not record calls, or the call was not answered)');
    return recording;
  }

  /** Recordings by call id, of the actor's organization, in one statement (Call.recording). */
  async recordingsFor(actor: Actor, callIds: readonly string[]): Promise<Map<string, CallRecording>> {
    const found = await this.em.find(CallRecording, { organization: actor.organizationId, call: { $in: callIds.filter(isUuid) } });
    return new Map(found.map((recording) => [recording.callId, recording]));
  }

  /**
   * The audio, as it is read: from the carrier with the connection's account, or the simulator's
   * stored WAV in slices. 404 with the reason when there is nothing to download; 503 when the
   * carrier cannot be reached. The simulator makes WAV only.
   */
  async open(actor: Actor, callId: string, format: RecordingFormat, signal?: AbortSignal, want: DownloadWant = {}): Promise<RecordingDownload> {
    const recording = await this.get(actor, callId);
    this.assertDownloadable(recording);
    const filename = `call-${recording.callId}.${format}`;
    if (recording.carrier === ProgramCarrier.simulator) {
      if (format !== 'wav') {
        throw new AppError('BAD_USER_INPUT', 'A simulated recording is WAV only: ask for format=wav (or Accept: audio/wav)', [
          { field: 'format', message: 'a simulated recording is WAV only' },
        ]);
      }
      const [row] = await query<{ size: number | string | null }>(this.em, 'select octet_length(audio) as size from call_recordings where id = ?', [
        recording.id,
      ]);
      const size = row?.size === null || row?.size === undefined ? null : Number(row.size);
      if (!size) throw new AppError('NOT_FOUND', 'The recording’s audio is gone');
      const range = rangeOf(want, size);
      const [from, to] = range ? [range.start, range.end + 1] : [0, size];
      const body = want.head ? null : Readable.from(this.slices(recording.id, from, to));
      return { contentType: RECORDING_MEDIA_TYPES.wav, contentLength: to - from, size, range, filename, body };
    }
    const media = await this.atCarrier(recording, (carrier, account) =>
      carrier.openRecording(account, recording.carrierRecordingId!, format, recording.channels, signal),
    );
    if (!media)
      throw new AppError(
        'NOT_FOUND',
        'The carrier no longer has this recording (it was deleted or lost there); DELETE /api/calls/{id}/recording marks it deleted',
      );
    let range: ByteRange | null;
    try {
      range = media.contentLength === null ? null : rangeOf(want, media.contentLength);
    } catch (error) {
      await media.body.cancel().catch(() => undefined);
      throw error;
    }
    if (want.head) await media.body.cancel().catch(() => undefined);
    // Named as asked, whatever the carrier calls it (Twilio answers audio/x-wav for WAV). A range is cut from the carrier's stream as it passes.
    const whole = want.head ? null : Readable.fromWeb(media.body as never);
    const body = whole && range ? Readable.from(byteSlice(whole, range.start, range.end + 1)) : whole;
    const contentLength = range ? range.end - range.start + 1 : media.contentLength;
    return { contentType: RECORDING_MEDIA_TYPES[format], contentLength, size: media.contentLength, range, filename, body };
  }

  /**
   * Deletes the audio at the carrier, then marks the recording deleted (reason `user`); one the
   * carrier had already lost is marked deleted with reason `carrier`. A second delete, or one of a
   * recording with no audio (refused, failed, absent, in progress), is 409 naming why; nothing changes.
   */
  async delete(actor: Actor, callId: string): Promise<CallRecording> {
    authorize(actor, 'recordings.manage');
    const recording = await this.get(actor, callId);
    if (recording.deletedAt) {
      throw new AppError(
        'CONFLICT',
        `The recording was already deleted on ${recording.deletedAt.toISOString()} (reason: ${recording.deletionReason}); nothing changed`,
      );
    }
    if (recording.status !== RecordingStatus.completed) {
      throw new AppError('CONFLICT', `The recording is ${recording.status}: it has no audio to delete; nothing changed`);
    }
    const reason = (await this.deleteAudio(recording)) === 'missing' ? RecordingDeletionReason.carrier : RecordingDeletionReason.user;
    await this.markDeleted(recording.id, reason, new Date());
    await this.em.refresh(recording);
    return recording;
  }

  /**
   * One batch of retention: the recordings older than their organization's recordingRetentionDays,
   * at most RETENTION_BATCH, taken in turns across organizations (each organization's oldest first,
   * then each one's second, …), so one organization's backlog never holds another's back. Each is
   * deleted at the carrier and here (reason `retention`). One the carrier cannot delete now (its
   * connection gone, its token refused, the carrier down) keeps its audio and says why on the
   * recording (retentionFailures, retentionError, retentionRetryAt); it is skipped until its retry
   * time, which doubles with each failure from an hour up to a day. Answers how many it took (deleted
   * or failed): a batch that took RETENTION_BATCH may have more behind it. Two runners may pick the
   * same recording: the second delete finds it missing, which is the same.
   */
  async applyRetention(now: Date): Promise<{ taken: number; deleted: number }> {
    const em = this.em.fork();
    const due = await query<{ id: string }>(
      em,
      `select id from (
         select r.id, r.created_at, row_number() over (partition by r.organization_id order by r.created_at, r.id) as turn
           from call_recordings r join organizations o on o.id = r.organization_id
          where r.deleted_at is null and r.status = 'completed' and o.recording_retention_days is not null
            and r.created_at < ?::timestamptz - make_interval(days => o.recording_retention_days)
            and (r.retention_retry_at is null or r.retention_retry_at <= ?::timestamptz)
       ) due where turn <= ? order by turn, created_at, id limit ?`,
      [at(now), at(now), RETENTION_BATCH, RETENTION_BATCH],
    );
    let deleted = 0;
    for (const { id } of due) {
      const recording = await em.findOneOrFail(CallRecording, { id });
      try {
        await this.deleteAudio(recording);
        await this.markDeleted(id, RecordingDeletionReason.retention, now);
        deleted += 1;
      } catch (error) {
        const reason = error instanceof Error ? error.message : String(error);
        const failures = recording.retentionFailures + 1;
        const retryAt = new Date(now.getTime() + Math.min(RETENTION_RETRY_MAX_MS, RETENTION_RETRY_FIRST_MS * 2 ** Math.min(failures - 1, 16)));
        await query(
          this.em.fork(),
          'update call_recordings set retention_failures = ?, retention_error = ?, retention_retry_at = ?::timestamptz, updated_at = ?::timestamptz where id = ? and deleted_at is null',
          [failures, reason.slice(0, 500), at(retryAt), at(now), id],
        );
        this.options.logger?.warn(
          { recordingId: id, callId: recording.callId, failures, retryAt: retryAt.toISOString(), err: reason },
          'a recording past its retention could not be deleted at the carrier; skipped until its retry time',
        );
      }
    }
    return { taken: due.length, deleted };
  }

  private assertDownloadable(recording: CallRecording): void {
    if (recording.deletedAt) {
      throw new AppError('NOT_FOUND', `The call’s recording was deleted on ${recording.deletedAt.toISOString()} (reason: ${recording.deletionReason})`);
    }
    if (recording.status !== RecordingStatus.completed) {
      const why: Record<string, string> = {
        in_progress: 'it is still being recorded; try again once the call has ended',
        absent: 'the carrier heard nothing to keep',
        failed: `the carrier failed to record it (${recording.errorText ?? 'no reason given'})`,
        refused: 'the callee refused to be recorded',
      };
      throw new AppError('NOT_FOUND', `The call’s recording has no audio: ${why[recording.status] ?? recording.status}`);
    }
  }

  /** The audio deleted where it is kept: `missing` when the carrier had none. */
  private async deleteAudio(recording: CallRecording): Promise<'deleted' | 'missing'> {
    if (recording.carrier === ProgramCarrier.simulator) return 'deleted';
    return this.atCarrier(recording, (carrier, account) => carrier.deleteRecording(account, recording.carrierRecordingId!));
  }

  private async atCarrier<T>(recording: CallRecording, work: (carrier: RecordingCarrier, account: CarrierAccount) => Promise<T>): Promise<T> {
    const carrier = this.options.carriers[recording.carrier];
    const account = recording.carrierConnectionId ? await this.options.account(recording.carrierConnectionId) : null;
    if (!carrier || !account || !recording.carrierRecordingId) {
      throw new AppError(
        'CONFLICT',
        `The recording is kept at ${recording.carrier}, and the carrier connection it was made through is gone; delete it in the carrier’s console`,
      );
    }
    try {
      return await work(carrier, account);
    } catch (error) {
      if (!(error instanceof CarrierError)) throw error;
      if (error.kind === 'unavailable') throw new AppError('UNAVAILABLE', `The carrier could not be reached (${error.message}); nothing changed, try again`);
      throw new AppError('CONFLICT', `The carrier refused (${error.message}); nothing changed`);
    }
  }

  private async markDeleted(id: string, reason: RecordingDeletionReason, now: Date): Promise<void> {
    await query(
      this.em.fork(),
      'update call_recordings set deleted_at = ?::timestamptz, deletion_reason = ?, audio = null, retention_retry_at = null, updated_at = ?::timestamptz where id = ? and deleted_at is null',
      [at(now), reason, at(now), id],
    );
  }

  /** The stored audio from byte `from` up to `to` (excluded), a slice per statement. */
  private async *slices(id: string, from: number, to: number): AsyncGenerator<Buffer> {
    for (let offset = from; offset < to; offset += SLICE_BYTES) {
      // substring on bytea counts from 1.
      const [row] = await query<{ chunk: Buffer | Uint8Array | null }>(
        this.em.fork(),
        'select substring(audio from ? for ?) as chunk from call_recordings where id = ?',
        [offset + 1, Math.min(SLICE_BYTES, to - offset), id],
      );
      if (!row?.chunk) return;
      yield Buffer.from(row.chunk);
    }
  }
}

/** The range a download wants of `size` bytes; a range the audio does not hold is 416 (the route names the size). */
function rangeOf(want: DownloadWant, size: number): ByteRange | null {
  const range = want.range?.(size) ?? null;
  if (range === 'unsatisfiable') throw new AppError('RANGE_NOT_SATISFIABLE', `The recording has ${size} bytes: the Range asked for none of them`);
  return range;
}

/** Bytes `from` up to `to` (excluded) of a stream, read as it comes; the rest is not read. */
async function* byteSlice(source: Readable, from: number, to: number): AsyncGenerator<Buffer> {
  let offset = 0;
  try {
    for await (const chunk of source) {
      const bytes = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk as Uint8Array);
      const start = Math.max(0, from - offset);
      const end = Math.min(bytes.length, to - offset);
      offset += bytes.length;
      if (end > start) yield bytes.subarray(start, end);
      if (offset >= to) break;
    }
  } finally {
    source.destroy();
  }
}
