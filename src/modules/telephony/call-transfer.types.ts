import { Field, Int, ObjectType } from 'type-graphql';

/** A call's transfer as stored (calls.transfer, jsonb; times as ISO 8601). */
export interface StoredTransfer {
  destinationName: string;
  destination: string;
  mode: string;
  transferredAt: string;
  dialStatus?: string | null;
  dialDurationSeconds?: number | null;
  dialEndedAt?: string | null;
  /** When the caller was given back to the agent after a dial that reached no one (busy, no-answer, failed, canceled). */
  returnedAt?: string | null;
  /** A warm transfer's leg to the person, at the carrier (never shown: its status callback names it). */
  legCallId?: string | null;
  /** A warm transfer: what the person heard before the caller was joined. */
  briefing?: string | null;
  /** A warm transfer: the model's summary of the call in that briefing (null: none, see summaryError). */
  summary?: string | null;
  /** A warm transfer without a summary: why (the model failed, was late, said the policy; an sts agent on Google has no text model). */
  summaryError?: string | null;
}

@ObjectType({ description: 'The call was handed to a person by the agent’s transfer_call tool' })
export class CallTransfer {
  @Field({ description: 'The destination’s name, as the agent lists it' })
  destinationName!: string;

  @Field({ description: 'The E.164 number or sip: URI dialled' })
  destination!: string;

  @Field({ description: 'cold: the caller was connected at once; warm: held while the person was briefed, then joined' })
  mode!: string;

  @Field({ description: 'When the carrier took the transfer (ISO 8601)' })
  transferredAt!: string;

  @Field(() => String, {
    nullable: true,
    description:
      'How the carrier’s dial to the destination ended (Twilio’s DialCallStatus: completed, answered, busy, no-answer, failed, canceled); null until it reports',
  })
  dialStatus!: string | null;

  @Field(() => Int, { nullable: true, description: 'Seconds the destination was on the line, as the carrier reported; null until it reports' })
  dialDurationSeconds!: number | null;

  @Field(() => String, { nullable: true, description: 'When the carrier reported the dial’s end (ISO 8601); null until it reports' })
  dialEndedAt!: string | null;

  @Field(() => String, {
    nullable: true,
    description: 'When the caller was given back to the agent because the dial reached no one (busy, no-answer, failed, canceled), ISO 8601; null otherwise',
  })
  returnedAt!: string | null;

  @Field(() => String, { nullable: true, description: 'A warm transfer: what the person heard before the caller was joined; null for a cold one' })
  briefing!: string | null;

  @Field(() => String, {
    nullable: true,
    description: 'A warm transfer: the agent’s model’s summary of the call so far, said in the briefing; null when there was none (see summaryError)',
  })
  summary!: string | null;

  @Field(() => String, {
    nullable: true,
    description:
      'A warm transfer briefed without a summary: why (the model failed or did not answer in time, the summary said the agent’s policy, or the agent has no text model); null otherwise',
  })
  summaryError!: string | null;
}
