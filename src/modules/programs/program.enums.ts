import { registerEnumType } from 'type-graphql';

// Lowercase names and values, so both doors show the interface's own words.

export enum ProgramKind {
  /** Runs over its audience when an execution is started. */
  campaign = 'campaign',
  /** Calls each contact of its audience when a date attribute comes round. */
  live = 'live',
}
registerEnumType(ProgramKind, {
  name: 'ProgramKind',
  description: 'How a program calls its contacts',
  valuesConfig: {
    campaign: { description: 'Runs over its audience when an execution is started' },
    live: { description: 'Calls each contact of its audience when a date attribute comes round (its liveTrigger)' },
  },
});

export enum ProgramStatus {
  draft = 'draft',
  active = 'active',
  archived = 'archived',
}
registerEnumType(ProgramStatus, {
  name: 'ProgramStatus',
  description: 'Where a program is in its life: draft → active by activate; archived when deleted',
  valuesConfig: {
    draft: { description: 'Created, not yet activated; no execution can start' },
    active: { description: 'Activated; executions can start (campaign) or triggers fire (live)' },
    archived: { description: 'Deleted; kept for its executions and the credit ledger' },
  },
});

export enum ExecutionStatus {
  preparing = 'preparing',
  scheduled = 'scheduled',
  running = 'running',
  paused = 'paused',
  paused_no_credits = 'paused_no_credits',
  paused_threshold = 'paused_threshold',
  completed = 'completed',
  stopped = 'stopped',
  cancelled = 'cancelled',
}
registerEnumType(ExecutionStatus, {
  name: 'ExecutionStatus',
  description: 'Where an execution is in its state machine; completed, stopped and cancelled are final',
  valuesConfig: {
    preparing: {
      description: 'Created; the campaign runner is copying its audience into its work queue (totalContacts grows), then it is scheduled. Only cancel moves it',
    },
    scheduled: { description: 'Created, waiting for its start (start, or scheduledStartAt)' },
    running: { description: 'Calling its contacts' },
    paused: { description: 'Paused by a user; resume continues it' },
    paused_no_credits: { description: 'Paused because the organization’s credit balance ran out; resume after credits are granted' },
    paused_threshold: { description: 'Paused because an auto-pause rule’s threshold was reached' },
    completed: { description: 'Every contact was called (final)' },
    stopped: { description: 'Stopped by a user; pending contacts are never dialed (final)' },
    cancelled: { description: 'Cancelled before it started (final)' },
  },
});

/**
 * Why an execution that is not final places no (more) calls now: for a running one, what the
 * campaign runner found on its last look at it (src/modules/programs/runner/waiting.ts); for the
 * others, their status. docs/campaigns.md says what each means and what to do about it.
 */
export enum WaitingReason {
  scheduled = 'scheduled',
  paused = 'paused',
  paused_by_rule = 'paused_by_rule',
  no_credits = 'no_credits',
  concurrency_limit = 'concurrency_limit',
  carrier_not_configured = 'carrier_not_configured',
  carrier_unavailable = 'carrier_unavailable',
  carrier_pacing = 'carrier_pacing',
  outside_calling_window = 'outside_calling_window',
  retry_wait = 'retry_wait',
  number_in_call = 'number_in_call',
}
registerEnumType(WaitingReason, {
  name: 'WaitingReason',
  description: 'Why an execution that is not final places no (more) calls now; null on the execution while nothing holds its pending contacts back',
  valuesConfig: {
    scheduled: { description: 'Not started: it starts at its scheduledStartAt (nextCallAt), or when someone starts it' },
    paused: { description: 'Paused by a user: resume continues it' },
    paused_by_rule: { description: 'Paused by an auto-pause rule whose threshold was reached (status paused_threshold): resume continues it' },
    no_credits: { description: 'The organization has no credit left to pay the next call: the operator grants credits, then someone resumes it' },
    concurrency_limit: { description: 'Every call slot (maxConcurrentCalls) holds a call: the next contact is dialed when one ends' },
    carrier_not_configured: {
      description:
        'The program’s carrier cannot place calls: no connection for its caller ID, or the gateway has no PUBLIC_URL or no such carrier; fix the program or the connection',
    },
    carrier_unavailable: { description: 'The carrier did not take the last calls (down, 5xx, unreachable): they are tried again at nextCallAt' },
    carrier_pacing: { description: 'The carrier connection’s callsPerSecond is used up: the next call goes at nextCallAt' },
    outside_calling_window: { description: 'Outside every pending contact’s calling window (in the contact’s time zone): the next opens at nextCallAt' },
    retry_wait: { description: 'Every pending contact waits for its retry (retryPolicy.retryDelayMinutes): the first is due at nextCallAt' },
    number_in_call: { description: 'The due contacts’ numbers are on a live call of this program (another execution’s, or a duplicate): dialed once it ends' },
  },
});

/** One contact's place in an execution's work queue. */
export enum ExecutionContactStatus {
  pending = 'pending',
  in_progress = 'in_progress',
  completed = 'completed',
  failed = 'failed',
}
registerEnumType(ExecutionContactStatus, {
  name: 'ExecutionContactStatus',
  description: 'One contact’s place in an execution’s work queue',
  valuesConfig: {
    pending: { description: 'Not called yet' },
    in_progress: { description: 'Being called' },
    completed: { description: 'Called to the end of the flow' },
    failed: { description: 'The call failed after every retry' },
  },
});

export enum TriggerStatus {
  pending = 'pending',
  triggered = 'triggered',
  cancelled = 'cancelled',
}
registerEnumType(TriggerStatus, {
  name: 'TriggerStatus',
  description: 'Where a live program’s trigger for one contact is: pending → triggered when processed, pending → cancelled',
  valuesConfig: {
    pending: { description: 'Waiting for its date' },
    triggered: { description: 'Its date came and the contact was called' },
    cancelled: { description: 'Will not fire (the contact or its date changed, or the program was deleted)' },
  },
});

export enum FlowNodeType {
  start = 'start',
  say = 'say',
  ask = 'ask',
  transfer = 'transfer',
  voicemail = 'voicemail',
  end = 'end',
  opt_out = 'opt_out',
}
registerEnumType(FlowNodeType, {
  name: 'FlowNodeType',
  description: 'What a call flow node does',
  valuesConfig: {
    start: { description: 'Where the call begins (one per flow)' },
    say: { description: 'The agent says its label' },
    ask: { description: 'The agent asks a question and waits for the answer' },
    transfer: { description: 'The call is transferred to a person' },
    voicemail: { description: 'A message is left on voicemail' },
    end: { description: 'The call ends' },
    opt_out: {
      description:
        'The caller asked not to be called again: their number goes on the do-not-call list (source call), the contact is marked opted out, ' +
        'the label (or a short default confirmation) is spoken and the call ends. Reach it from an ask node by an edge such as said:stop calling or digit:9',
    },
  },
});

export enum LiveTriggerSource {
  contact = 'contact',
  entity = 'entity',
}
registerEnumType(LiveTriggerSource, {
  name: 'LiveTriggerSource',
  description: 'Where a live trigger reads its date attribute',
  valuesConfig: {
    contact: { description: 'The contact’s own attributes' },
    entity: { description: 'The attributes of the contact’s business records of `entityType`' },
  },
});
