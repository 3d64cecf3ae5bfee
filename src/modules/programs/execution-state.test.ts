import { AppError } from '../../common/errors.js';
import { assertControl, assertMove, canMove, CONTROL_ACTIONS, FINAL_STATES, PAUSED_STATES, type ControlAction } from './execution-state.js';
import { ExecutionStatus as S } from './program.enums.js';

// Written out from CONTRACT.md §7, not read from the module: the table the code must match.
const ALL = ['scheduled', 'running', 'paused', 'paused_no_credits', 'paused_threshold', 'completed', 'stopped', 'cancelled'] as S[];
const ALLOWED = new Set([
  'scheduled>running', 'scheduled>cancelled',
  'running>paused', 'running>paused_no_credits', 'running>paused_threshold', 'running>completed', 'running>stopped',
  'paused>running', 'paused>stopped',
  'paused_no_credits>running', 'paused_no_credits>stopped',
  'paused_threshold>running', 'paused_threshold>stopped',
]);

function refusal(fn: () => unknown): AppError {
  try {
    fn();
  } catch (error) {
    if (error instanceof AppError) return error;
    throw error;
  }
  throw new Error('expected CONFLICT');
}

describe('the execution state machine (CONTRACT.md §7)', () => {
  it('has the eight states of the contract', () => {
    expect(Object.values(S).sort()).toEqual([...ALL].sort());
    expect([...PAUSED_STATES].sort()).toEqual(['paused', 'paused_no_credits', 'paused_threshold']);
    expect([...FINAL_STATES].sort()).toEqual(['cancelled', 'completed', 'stopped']);
  });

  const pairs = ALL.flatMap((from) => ALL.map((to) => [from, to] as const));

  it.each(pairs)('%s → %s', (from, to) => {
    const allowed = ALLOWED.has(`${from}>${to}`);
    expect(canMove(from, to)).toBe(allowed);
    if (allowed) expect(assertMove(from, to)).toBeUndefined();
    else {
      const error = refusal(() => assertMove(from, to));
      expect(error.code).toBe('CONFLICT');
      expect(error.message).toBe(`An execution cannot move from ${from} to ${to}`);
    }
  });
});

describe('control actions by name', () => {
  it('map to their target states', () => {
    expect(CONTROL_ACTIONS).toEqual({ start: 'running', pause: 'paused', resume: 'running', stop: 'stopped', cancel: 'cancelled' });
  });

  // What each action does from each state: the state it leads to, or the CONFLICT message.
  const expected: Record<ControlAction, Partial<Record<S, S>>> = {
    start: { scheduled: S.running },
    resume: { paused: S.running, paused_no_credits: S.running, paused_threshold: S.running },
    pause: { running: S.paused },
    stop: { running: S.stopped, paused: S.stopped, paused_no_credits: S.stopped, paused_threshold: S.stopped },
    cancel: { scheduled: S.cancelled },
  };
  const cases = (Object.keys(expected) as ControlAction[]).flatMap((action) => ALL.map((from) => [action, from] as const));

  it.each(cases)('%s from %s', (action, from) => {
    const to = expected[action][from];
    if (to) {
      expect(assertControl(action, from)).toBe(to);
      return;
    }
    const error = refusal(() => assertControl(action, from));
    expect(error.code).toBe('CONFLICT');
    if (action === 'start') expect(error.message).toBe(`Only a scheduled execution can be started; this one is ${from}`);
    else if (action === 'resume') expect(error.message).toBe(`Only a paused execution can be resumed; this one is ${from}`);
    else expect(error.message).toBe(`An execution cannot move from ${from} to ${CONTROL_ACTIONS[action]}`);
  });
});
