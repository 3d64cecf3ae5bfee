/** Every event type written to the outbox; a filter naming any other is a 400 on both doors. */
export const EVENT_TYPES = [
  'execution.created',
  'execution.started',
  'execution.paused',
  'execution.resumed',
  'execution.completed',
  'execution.stopped',
  'execution.cancelled',
  'execution.progress',
  'call.started',
  'call.ended',
  'call.analyzed',
  'conversation.message',
  'conversation.ended',
  'tool.called',
  'agent.activated',
  'agent.archived',
  'trigger.fired',
  'contact.opted_out',
  'knowledge.document.ready',
  'knowledge.document.failed',
  'import.progress',
  'import.completed',
  'import.failed',
  'import.cancelled',
] as const;

export type EventType = (typeof EVENT_TYPES)[number];
