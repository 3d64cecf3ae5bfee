// The SQL twin of Execution.waitingReason and nextCallAt (runner/waiting.ts waitingOf), for the answers the database writes as JSON.

/** waitingOf as SQL over an executions row's alias (test/platform/json-answers.test.ts holds the two to the same answers). */
export function waitingSql(alias: string): { reason: string; nextCallAt: string } {
  return {
    reason: `(case ${alias}.status when 'running' then ${alias}.runner_waiting_reason when 'scheduled' then 'scheduled' when 'paused' then 'paused'
                when 'paused_no_credits' then 'no_credits' when 'paused_threshold' then 'paused_by_rule' end)`,
    nextCallAt: `(case ${alias}.status when 'running' then case when ${alias}.runner_waiting_reason is not null then ${alias}.runner_next_call_at end
                   when 'scheduled' then ${alias}.scheduled_start_at end)`,
  };
}
