import type { Opt } from '@mikro-orm/core';
import { Entity, Enum, Index, ManyToOne, Property } from '@mikro-orm/decorators/legacy';
import { Field, ID, Int, ObjectType } from 'type-graphql';
import { BaseEntity } from '../../db/base.entity.js';
import { Organization } from '../organizations/organization.entity.js';
import { Call } from '../telephony/call.entity.js';
import { ProgramCarrierEnum, type ProgramCarrier } from '../telephony/telephony.enums.js';
import { RecordingChannels, RecordingDeletionReason, RecordingStatus } from './recording.enums.js';

/**
 * A call's recording as the gateway knows it: the carrier's id for it and its state, never the
 * carrier's media URL or credentials (the audio is fetched with the connection's account when it is
 * downloaded). The simulator keeps its generated audio here (`audio`), since it has no carrier to hold it.
 */
@ObjectType('CallRecording', { description: 'A call’s recording: its state at the carrier; the audio is downloaded with GET /api/calls/{id}/recording' })
@Entity({ tableName: 'call_recordings' })
@Index({ properties: ['organization', 'createdAt'] })
// The retention pass reads the recordings still kept, oldest first.
@Index({
  name: 'call_recordings_kept_created_at_index',
  expression: `create index "call_recordings_kept_created_at_index" on "call_recordings" ("created_at") where "deleted_at" is null and "status" = 'completed'`,
})
export class CallRecording extends BaseEntity {
  @ManyToOne(() => Organization, { deleteRule: 'cascade' })
  organization!: Organization;

  @Field(() => ID)
  get organizationId(): string & Opt {
    return this.organization.id;
  }

  /** One recording per call; it goes with its call (and so with the call's execution). */
  @ManyToOne(() => Call, { deleteRule: 'cascade', unique: true })
  call!: Call;

  @Field(() => ID)
  get callId(): string & Opt {
    return this.call.id;
  }

  @Field(() => ProgramCarrierEnum, { description: 'Who keeps the audio: simulator (the gateway, for a simulated call) or the call’s carrier' })
  @Property({ columnType: 'text' })
  carrier!: ProgramCarrier;

  @Property({ type: 'uuid', nullable: true, hidden: true })
  carrierConnectionId: (string & Opt) | null = null;

  @Field(() => String, { nullable: true, description: 'The carrier’s id for the recording (Twilio RecordingSid); null for a refused consent' })
  @Property({ type: 'string', length: 64, nullable: true })
  carrierRecordingId: (string & Opt) | null = null;

  @Field(() => RecordingStatus, {
    description: 'in_progress, then completed, absent or failed as the carrier reports; refused when the callee refused consent',
  })
  @Enum({ items: () => RecordingStatus })
  status!: RecordingStatus;

  @Field(() => RecordingChannels, { description: 'mono or dual, as the carrier recorded it' })
  @Enum({ items: () => RecordingChannels })
  channels!: RecordingChannels;

  @Field(() => Int, { nullable: true, description: 'Length of the audio in seconds, once completed' })
  @Property({ type: 'integer', nullable: true })
  durationSeconds: (number & Opt) | null = null;

  @Field(() => String, { nullable: true, description: 'Why the recording failed, in the carrier’s words' })
  @Property({ type: 'text', nullable: true })
  errorText: (string & Opt) | null = null;

  @Field(() => Date, { nullable: true, description: 'When the audio was deleted (at the carrier too); it cannot be downloaded since' })
  @Property({ columnType: 'timestamptz', type: 'Date', nullable: true })
  deletedAt: (Date & Opt) | null = null;

  @Field(() => RecordingDeletionReason, {
    nullable: true,
    description: 'Why the audio was deleted: user, retention or carrier (it was already gone there); null while kept',
  })
  @Enum({ items: () => RecordingDeletionReason, nullable: true })
  deletionReason: (RecordingDeletionReason & Opt) | null = null;

  @Field(() => Int, { description: 'How many times in a row retention failed to delete the audio at the carrier (0: never, or it has since succeeded)' })
  @Property({ type: 'integer', default: 0 })
  retentionFailures: number & Opt = 0;

  @Field(() => String, {
    nullable: true,
    description:
      'Why retention last failed to delete the audio (e.g. the carrier connection is gone, or the carrier refused its token); null when it has not failed',
  })
  @Property({ type: 'text', nullable: true })
  retentionError: (string & Opt) | null = null;

  @Field(() => Date, {
    nullable: true,
    description: 'When retention tries this recording again: after each failure it waits twice as long, from an hour up to a day; null when it has not failed',
  })
  @Property({ columnType: 'timestamptz', type: 'Date', nullable: true })
  retentionRetryAt: (Date & Opt) | null = null;

  /** The simulator's generated WAV (16-bit PCM, 8 kHz); null for a carrier's recording, and once deleted. Read in slices, never loaded with the row. */
  @Property({ type: 'blob', nullable: true, lazy: true, hidden: true })
  audio: (Buffer & Opt) | null = null;
}
