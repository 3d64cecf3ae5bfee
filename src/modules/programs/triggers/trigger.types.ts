import { Field, ID, Int, ObjectType } from 'type-graphql';
import { Program } from '../program.entity.js';

/** What a resync of a live program's triggers changed. */
@ObjectType({ description: "The outcome of resyncing a live program's triggers with its audience" })
export class TriggerSync {
  @Field(() => ID)
  programId!: string;

  @Field(() => Int, { description: 'Pending triggers created' })
  created!: number;

  @Field(() => Int, { description: 'Pending triggers cancelled' })
  cancelled!: number;

  @Field(() => Int, { description: 'Pending triggers after the sync' })
  pending!: number;

  @Field(() => Program)
  program!: Program;
}

/** The interface's trigger fields (endpoint 8), in its order; the REST door shows exactly these. */
export const TRIGGER_FIELDS = ['id', 'contactId', 'contactPhone', 'triggerAt', 'attributeValue', 'status', 'createdAt', 'contactName', 'triggeredAt'] as const;
