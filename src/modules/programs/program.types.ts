import { LiveTriggerSource } from './program.enums.js';
import { Field, InputType, Int, ObjectType } from 'type-graphql';

/** When calls may be placed, in each contact's own time zone (UTC when it has none). */
@ObjectType('CallingWindow')
@InputType('CallingWindowInput')
export class CallingWindow {
  @Field({ description: 'HH:MM, 24-hour clock' })
  startTime!: string;

  @Field({ description: 'HH:MM, after startTime (exclusive); 24:00 is the end of the day' })
  endTime!: string;

  @Field(() => [Int], { description: 'ISO weekdays, 1 = Monday … 7 = Sunday' })
  daysOfWeek!: number[];
}

@ObjectType('RetryPolicy')
@InputType('RetryPolicyInput')
export class RetryPolicy {
  @Field(() => Int, { description: 'Calls per contact at most, 1 to 10' })
  maxAttempts!: number;

  @Field(() => Int, { description: 'Wait between attempts, 0 to 10080 minutes' })
  retryDelayMinutes!: number;
}

/** What the simulated carrier's caller answers each ask node with, in order. */
@ObjectType('SimulatedCaller', { description: 'What the simulated carrier’s caller says at the ask nodes of a simulated call' })
export class SimulatedCaller {
  @Field(() => [String], { description: 'Said in order, one per ask; keys only (e.g. "1", "#") are pressed as DTMF; then silence' })
  utterances!: string[];
}

@ObjectType('AutoPauseRule')
@InputType('AutoPauseRuleInput')
export class AutoPauseRule {
  @Field({ description: 'Identifier of a flow node' })
  nodeId!: string;

  @Field(() => Int, { description: 'Pause when this many contacts have reached the node; at least 1' })
  threshold!: number;

  @Field({ description: 'A resume starts the count again' })
  resetOnResume!: boolean;
}

/** A live program calls a contact when this date comes round. */
@ObjectType('LiveTrigger')
@InputType('LiveTriggerInput')
export class LiveTrigger {
  @Field({ description: 'Name of the date attribute (YYYY-MM-DD or ISO date-time)' })
  attribute!: string;

  @Field(() => LiveTriggerSource, { description: '"contact" (contact.attributes) or "entity" (a business entity of the contact)' })
  source!: 'contact' | 'entity';

  @Field(() => String, { nullable: true, description: 'For source "entity": the entity type, e.g. "appointment"' })
  entityType?: string | null;

  @Field(() => Int, { description: 'Days relative to the date: -1 is the day before' })
  offsetDays!: number;

  @Field({ description: 'HH:MM in the contact’s time zone' })
  timeOfDay!: string;
}
