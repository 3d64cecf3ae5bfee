import { Field, Int, ObjectType } from 'type-graphql';

/** An execution's finished contacts by what happened to them (the last call's outcome, or why none was placed). */
@ObjectType({ description: 'An execution’s finished contacts by outcome' })
export class ExecutionOutcomes {
  @Field(() => Int, { description: 'Answered by a person' })
  answered!: number;

  @Field(() => Int, { description: 'Answered by a machine (voicemail): the call ended there, whatever nodes it reached' })
  voicemail!: number;

  @Field(() => Int, { description: 'Answered by a machine, and the program’s voicemail message was left after the beep' })
  voicemailLeft!: number;

  @Field(() => Int, { description: 'Not answered, after every attempt' })
  noAnswer!: number;

  @Field(() => Int, { description: 'Busy, after every attempt' })
  busy!: number;

  @Field(() => Int, { description: 'Failed (the carrier or the gateway), after every attempt' })
  failed!: number;

  @Field(() => Int, { description: 'Not called: the number was on the do-not-call list when the call was to be placed' })
  doNotCall!: number;

  @Field(() => Int, { description: 'Not called: the contact opted out or was deleted before its call' })
  notCalled!: number;
}

/** The stored counts (keyed by outcome) as the type shows them; outcomes not counted are 0. */
export function outcomesOf(counts: Record<string, number> | null | undefined): ExecutionOutcomes {
  const count = (key: string) => Number(counts?.[key] ?? 0);
  return {
    answered: count('answered'),
    voicemail: count('voicemail'),
    voicemailLeft: count('voicemail_left'),
    noAnswer: count('no_answer'),
    busy: count('busy'),
    failed: count('failed'),
    doNotCall: count('do_not_call'),
    notCalled: count('opted_out') + count('contact_deleted'),
  };
}

/** outcomesOf as SQL over an execution's `outcome_counts` column: the same object, for the answers the database writes as JSON. */
export function outcomesSql(column: string): string {
  const count = (key: string) => `coalesce((${column}->>'${key}')::int, 0)`;
  return `json_build_object('answered', ${count('answered')}, 'voicemail', ${count('voicemail')}, 'voicemailLeft', ${count('voicemail_left')}, 'noAnswer', ${count('no_answer')}, 'busy', ${count(
    'busy',
  )}, 'failed', ${count('failed')}, 'doNotCall', ${count('do_not_call')}, 'notCalled', ${count('opted_out')} + ${count('contact_deleted')})`;
}

/**
 * SQL adding `delta` (a jsonb object of counts, a parameter) to an execution's `outcome_counts`, key by
 * key, in the statement that moves its other counters: `outcome_counts = ${addOutcomeCounts('e.outcome_counts', '?::jsonb')}`.
 */
export function addOutcomeCounts(column: string, delta: string): string {
  // The delta is named once (a parameter placeholder must appear once), then read by key.
  return `(select coalesce(jsonb_object_agg(k, coalesce((${column}->>k)::int, 0) + coalesce((d.delta->>k)::int, 0)), '{}'::jsonb)
             from (select ${delta} as delta) d cross join lateral jsonb_object_keys(${column} || d.delta) as k)`;
}
