import { registerEnumType } from 'type-graphql';

// Lowercase names and values, so both doors show the interface's own words.

export enum ProgramKind {
  /** Runs over its audience when an execution is started. */
  campaign = 'campaign',
  /** Calls each contact of its audience when a date attribute comes round. */
  live = 'live',
}
registerEnumType(ProgramKind, { name: 'ProgramKind' });

export enum ProgramStatus {
  draft = 'draft',
  active = 'active',
  archived = 'archived',
}
registerEnumType(ProgramStatus, { name: 'ProgramStatus' });

export enum ExecutionStatus {
  scheduled = 'scheduled',
  running = 'running',
  paused = 'paused',
  paused_no_credits = 'paused_no_credits',
  paused_threshold = 'paused_threshold',
  completed = 'completed',
  stopped = 'stopped',
  cancelled = 'cancelled',
}
registerEnumType(ExecutionStatus, { name: 'ExecutionStatus' });

/** One contact's place in an execution's work queue. */
export enum ExecutionContactStatus {
  pending = 'pending',
  in_progress = 'in_progress',
  completed = 'completed',
  failed = 'failed',
}
registerEnumType(ExecutionContactStatus, { name: 'ExecutionContactStatus' });

export enum TriggerStatus {
  pending = 'pending',
  triggered = 'triggered',
  cancelled = 'cancelled',
}
registerEnumType(TriggerStatus, { name: 'TriggerStatus' });

export enum FlowNodeType {
  start = 'start',
  say = 'say',
  ask = 'ask',
  transfer = 'transfer',
  voicemail = 'voicemail',
  end = 'end',
}
registerEnumType(FlowNodeType, { name: 'FlowNodeType' });
