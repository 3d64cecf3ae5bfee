import { AppError } from '../../common/errors.js';
import { ExecutionStatus as S } from './program.enums.js';

/** CONTRACT.md §7: the only moves an execution can make; anything else is a 409. */
const MOVES: Record<S, readonly S[]> = {
  [S.scheduled]: [S.running, S.cancelled],
  [S.running]: [S.paused, S.paused_no_credits, S.paused_threshold, S.completed, S.stopped],
  [S.paused]: [S.running, S.stopped],
  [S.paused_no_credits]: [S.running, S.stopped],
  [S.paused_threshold]: [S.running, S.stopped],
  // A final state's moves filled with a made-up state ("Stryker was here") change nothing: no caller can ask for that state.
  // Stryker disable next-line ArrayDeclaration: equivalent, see above
  [S.completed]: [],
  // Stryker disable next-line ArrayDeclaration: equivalent, see above
  [S.stopped]: [],
  // Stryker disable next-line ArrayDeclaration: equivalent, see above
  [S.cancelled]: [],
};

export const PAUSED_STATES: readonly S[] = [S.paused, S.paused_no_credits, S.paused_threshold];
export const FINAL_STATES: readonly S[] = [S.completed, S.stopped, S.cancelled];

export function canMove(from: S, to: S): boolean {
  return MOVES[from].includes(to);
}

/** Throws CONFLICT naming both states when the move is not allowed. */
export function assertMove(from: S, to: S): void {
  if (!canMove(from, to)) {
    throw new AppError('CONFLICT', `An execution cannot move from ${from} to ${to}`);
  }
}

/** The moves a user asks for by name (REST POST /api/executions/{id}/<action>, GraphQL mutations). */
export const CONTROL_ACTIONS = {
  start: S.running,
  pause: S.paused,
  resume: S.running,
  stop: S.stopped,
  cancel: S.cancelled,
} as const;

export type ControlAction = keyof typeof CONTROL_ACTIONS;

/** `start` is only from scheduled, `resume` only from a paused state; the target alone cannot tell them apart. */
export function assertControl(action: ControlAction, from: S): S {
  const to = CONTROL_ACTIONS[action];
  if (action === 'start' && from !== S.scheduled) throw new AppError('CONFLICT', `Only a scheduled execution can be started; this one is ${from}`);
  if (action === 'resume' && !PAUSED_STATES.includes(from)) throw new AppError('CONFLICT', `Only a paused execution can be resumed; this one is ${from}`);
  assertMove(from, to);
  return to;
}
