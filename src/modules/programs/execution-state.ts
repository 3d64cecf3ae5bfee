import { AppError } from '../../common/errors.js';
import { ExecutionStatus as S } from './program.enums.js';

/** CONTRACT.md §7: the only moves an execution can make; anything else is a 409. */
const MOVES: Record<S, readonly S[]> = {
  [S.preparing]: [S.scheduled, S.cancelled],
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
function permitted(action: ControlAction, from: S): boolean {
  if (action === 'start') return from === S.scheduled;
  if (action === 'resume') return PAUSED_STATES.includes(from);
  return canMove(from, CONTROL_ACTIONS[action]);
}

/** The actions a user may ask for from `from`, in CONTROL_ACTIONS' order. */
export function allowedActions(from: S): ControlAction[] {
  return (Object.keys(CONTROL_ACTIONS) as ControlAction[]).filter((action) => permitted(action, from));
}

/** What each action is, for its refusal: its past participle and the states it is asked from. */
const REFUSAL: Record<ControlAction, { done: string; from: string; instead: ControlAction | null }> = {
  start: { done: 'started', from: 'a scheduled one', instead: 'resume' },
  pause: { done: 'paused', from: 'a running one', instead: null },
  resume: { done: 'resumed', from: 'a paused one', instead: 'start' },
  stop: { done: 'stopped', from: 'a running or paused one', instead: 'cancel' },
  cancel: { done: 'cancelled', from: 'a preparing or scheduled one (that has not started)', instead: 'stop' },
};

/**
 * The state `action` leads to from `from`; else CONFLICT saying which actions `from` allows, the
 * likely one first (cancel a running one: stop it), each with its REST route and GraphQL mutation.
 */
export function assertControl(action: ControlAction, from: S, executionId = '{id}'): S {
  if (permitted(action, from)) return CONTROL_ACTIONS[action];
  const { done, from: allowedFrom, instead } = REFUSAL[action];
  const others = allowedActions(from).sort((a, b) => Number(b === instead) - Number(a === instead));
  const how = (other: ControlAction) => `${other} (POST /api/executions/${executionId}/${other}, GraphQL ${other}Execution)`;
  const next = others.length > 0 ? `Use ${others.map(how).join(' or ')}` : `${from} is final: nothing moves it`;
  throw new AppError('CONFLICT', `An execution that is ${from} cannot be ${done}: only ${allowedFrom} can. ${next}`);
}
