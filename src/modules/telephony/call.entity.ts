import type { Opt } from '@mikro-orm/core';
import { Entity, Enum, Index, ManyToOne, Property, Unique } from '@mikro-orm/decorators/legacy';
import { Field, Float, ID, Int, ObjectType } from 'type-graphql';
import { BaseEntity } from '../../db/base.entity.js';
import { Organization } from '../organizations/organization.entity.js';
import { CallTurnLatency } from './call-latency.types.js';
import { CallTransfer, type StoredTransfer } from './call-transfer.types.js';
import { CallAnalysis, type StoredAnalysis } from '../agents/analysis/analysis.types.js';
import { CallChannel, CallDirection, CallStatus, ProgramCarrierEnum, type ProgramCarrier } from './telephony.enums.js';

/**
 * One attempt to reach a contact (or one inbound call): what the carrier reported, in the order
 * the state machine accepts (call-state.ts). Links are kept as ids so a deleted contact, program
 * or agent leaves the record readable; the execution's deletion takes its calls with it.
 */
@ObjectType({ description: 'One call: an attempt to reach a contact, from queued to its final status' })
@Entity({ tableName: 'calls' })
@Index({ properties: ['executionId', 'contactId'] })
@Index({ properties: ['contactId'] })
@Index({ properties: ['executionContactId'] })
@Index({ properties: ['conversationId'] })
@Index({ properties: ['carrierConnectionId', 'queuedAt'] })
@Unique({ properties: ['carrier', 'carrierCallId'] })
// A claim's "is this number on a live call of the program" test (Migration20261226000000).
@Index({
  name: 'calls_live_outbound_index',
  expression: `create index "calls_live_outbound_index" on "calls" ("program_id", "to_number") where "direction" = 'outbound' and "status" in ('queued', 'ringing', 'in_progress')`,
})
// The single calls (POST /api/calls) not yet taken by a runner, oldest first (Migration20261226000001).
@Index({
  name: 'calls_direct_queue_index',
  expression: `create index "calls_direct_queue_index" on "calls" ("queued_at", "id") where "execution_id" is null and "direction" = 'outbound' and "status" = 'queued' and "claim_token" is null`,
})
export class Call extends BaseEntity {
  @ManyToOne(() => Organization, { deleteRule: 'cascade' })
  organization!: Organization;

  @Field(() => ID)
  get organizationId(): string & Opt {
    return this.organization.id;
  }

  @Field(() => ID, { nullable: true })
  @Property({ type: 'uuid', nullable: true })
  executionId: (string & Opt) | null = null;

  @Field(() => ID, { nullable: true })
  @Property({ type: 'uuid', nullable: true })
  programId: (string & Opt) | null = null;

  @Field(() => ID, { nullable: true })
  @Property({ type: 'uuid', nullable: true })
  contactId: (string & Opt) | null = null;

  @Field(() => ID, { nullable: true })
  @Property({ type: 'uuid', nullable: true })
  agentId: (string & Opt) | null = null;

  /** The conversation the call's spoken turns are stored in (voice calls with an agent). */
  @Field(() => ID, { nullable: true })
  @Property({ type: 'uuid', nullable: true })
  conversationId: (string & Opt) | null = null;

  /** Where the call's voice session is (the flow node it is on, reprompts used, …): the voice module's, never shown. */
  @Property({ type: 'json', nullable: true })
  voiceState: (Record<string, unknown> & Opt) | null = null;

  /** SHA-256 (hex) of the single-use nonce in the call's media-stream URL (speech to speech); null once used or never issued. */
  @Property({ type: 'string', length: 64, nullable: true, hidden: true })
  streamNonceHash: (string & Opt) | null = null;

  /** When the call's one media stream was let in (its nonce consumed). */
  @Property({ type: 'Date', columnType: 'timestamptz', nullable: true, hidden: true })
  streamOpenedAt: (Date & Opt) | null = null;

  /** The /gather and /inbound requests answered on this call (key hash → the actions answered), so a repeat adds nothing. */
  @Property({ type: 'json', default: '{}', hidden: true })
  webhookReplies: Record<string, unknown> & Opt = {};

  /** A single call's values for its agent's templates (POST /api/calls `variables`); read by the call's context, never shown. */
  @Property({ type: 'json', nullable: true, hidden: true })
  variables: (Record<string, string> & Opt) | null = null;

  /** A single call's lease: until when the runner that took it holds it (a campaign call's is its execution_contacts row's). */
  @Property({ type: 'Date', columnType: 'timestamptz', nullable: true, hidden: true })
  leaseUntil: (Date & Opt) | null = null;

  /** The execution_contacts row this call works for, and the claim it was placed under. */
  @Property({ type: 'uuid', nullable: true })
  executionContactId: (string & Opt) | null = null;

  @Property({ type: 'string', length: 64, nullable: true })
  claimToken: (string & Opt) | null = null;

  @Field(() => CallDirection)
  @Enum({ items: () => CallDirection })
  direction!: CallDirection;

  @Field(() => String, { nullable: true, description: 'The caller ID (E.164)' })
  @Property({ type: 'string', length: 16, nullable: true, fieldName: 'from_number' })
  from: (string & Opt) | null = null;

  @Field({ description: 'The number called (E.164)' })
  @Property({ length: 16, fieldName: 'to_number' })
  to!: string;

  @Field(() => CallStatus)
  @Enum({ items: () => CallStatus, default: CallStatus.queued })
  status: CallStatus & Opt = CallStatus.queued;

  @Field(() => String, {
    nullable: true,
    description:
      'answered, voicemail, voicemail_left (a message was left after the beep), no_answer, busy or failed once the call ended; do_not_call for a call not placed because its number is on the do-not-call list (status canceled)',
  })
  @Property({ type: 'string', length: 32, nullable: true })
  outcome: (string & Opt) | null = null;

  /** When the program's voicemail message was handed to the carrier, after the beep (voicemail-drop.ts); the call ends voicemail_left. */
  @Property({ columnType: 'timestamptz', type: 'Date', nullable: true, hidden: true })
  voicemailLeftAt: (Date & Opt) | null = null;

  @Field(() => String, { nullable: true, description: 'Who answered, as far as the carrier could tell: human, machine or unknown' })
  @Property({ type: 'string', length: 16, nullable: true })
  answeredBy: (string & Opt) | null = null;

  @Field(() => Int, { description: '1 for the first call to this contact in the execution' })
  @Property({ type: 'integer', default: 1 })
  attempt: number & Opt = 1;

  @Field(() => ProgramCarrierEnum)
  @Property({ columnType: 'text' })
  carrier!: ProgramCarrier;

  @Field(() => CallChannel, { description: 'phone for a call through a carrier, web for a web call from a browser tab' })
  @Enum({ items: () => CallChannel, default: CallChannel.phone })
  channel: CallChannel & Opt = CallChannel.phone;

  @Field(() => ID, { nullable: true })
  @Property({ type: 'uuid', nullable: true })
  carrierConnectionId: (string & Opt) | null = null;

  @Field(() => String, { nullable: true, description: 'The carrier’s id for the call (Twilio CallSid)' })
  @Property({ type: 'string', length: 64, nullable: true })
  carrierCallId: (string & Opt) | null = null;

  @Field(() => Date)
  @Property({ columnType: 'timestamptz', type: 'Date' })
  queuedAt: Date & Opt = new Date();

  @Field(() => Date, { nullable: true })
  @Property({ columnType: 'timestamptz', type: 'Date', nullable: true })
  answeredAt: (Date & Opt) | null = null;

  @Field(() => Date, { nullable: true })
  @Property({ columnType: 'timestamptz', type: 'Date', nullable: true })
  endedAt: (Date & Opt) | null = null;

  @Field(() => Int, { nullable: true, description: 'Seconds from answer to hang-up, as the carrier reports them' })
  @Property({ type: 'integer', nullable: true })
  durationSeconds: (number & Opt) | null = null;

  @Field(() => [String], { description: 'Flow node ids the call reached, in order' })
  @Property({ type: 'json' })
  reachedNodeIds: string[] & Opt = [];

  @Field(() => String, { nullable: true, description: 'Why the call failed, when it did' })
  @Property({ type: 'text', nullable: true })
  errorText: (string & Opt) | null = null;

  /** Speech to speech: each agent turn's latency (bridge.ts), written once when the media stream ends; null for other calls. */
  @Field(() => CallTurnLatency, {
    nullable: true,
    description:
      'Speech to speech: how long the caller waited for each agent turn, and the provider’s and the gateway’s shares; null for a call without sts turns',
  })
  @Property({ type: 'json', nullable: true })
  turnLatency: (CallTurnLatency & Opt) | null = null;

  /** Answer → the first message's first audio written to the carrier (turnLatency.firstAudioMs), kept apart for lists and the CSV. */
  @Field(() => Float, {
    nullable: true,
    description:
      'Milliseconds from the answer to the agent’s first audio on the line (the first message), as the gateway measured it; null when the agent spoke no first message or the call had no voice session',
  })
  @Property({ type: 'double', columnType: 'double precision', nullable: true })
  firstAudioMs: (number & Opt) | null = null;

  /** Its conversation's analysis, copied when it is recorded (so lists, the CSV and call.analyzed read it with the call). */
  @Field(() => CallAnalysis, {
    nullable: true,
    description:
      'The agent’s analysis plan filled for this call (summary and fields), pending until the model has answered; null when its agent has no plan or the call had no conversation',
  })
  @Property({ type: 'json', nullable: true })
  analysis: (StoredAnalysis & Opt) | null = null;

  /** The agent's transfer_call (voice/transfer/call-transfers.ts), and the carrier's <Dial> outcome once it reports. */
  @Field(() => CallTransfer, { nullable: true, description: 'Set when the agent transferred the call to one of its destinations; null otherwise' })
  @Property({ type: 'json', nullable: true })
  transfer: (StoredTransfer & Opt) | null = null;

  @Field(() => Int, { description: 'Credits the call cost (0 when the carrier never took it)' })
  @Property({ type: 'integer', default: 0 })
  creditsCharged: number & Opt = 0;
}
