import { AppError } from '../../common/errors.js';
import { allowedActions, assertControl, assertMove, canMove, CONTROL_ACTIONS, FINAL_STATES, PAUSED_STATES, type ControlAction } from './execution-state.js';
import { ExecutionStatus as S } from './program.enums.js';

// Written out from CONTRACT.md §7 (and `preparing`, docs/campaigns.md), not read from the module: the table the code must match.
const ALL = ['preparing', 'scheduled', 'running', 'paused', 'paused_no_credits', 'paused_threshold', 'completed', 'stopped', 'cancelled'] as S[];
const ALLOWED = new Set([
  'preparing>scheduled',
  'preparing>cancelled',
  'scheduled>running',
  'scheduled>cancelled',
  'running>paused',
  'running>paused_no_credits',
  'running>paused_threshold',
  'running>completed',
  'running>stopped',
  'paused>running',
  'paused>stopped',
  'paused_no_credits>running',
  'paused_no_credits>stopped',
  'paused_threshold>running',
  'paused_threshold>stopped',
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
  it('has the eight states of the contract, and preparing', () => {
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
    cancel: { preparing: S.cancelled, scheduled: S.cancelled },
  };
  const cases = (Object.keys(expected) as ControlAction[]).flatMap((action) => ALL.map((from) => [action, from] as const));

  it.each(cases)('%s from %s', (action, from) => {
    const to = expected[action][from];
    if (to) {
      expect(assertControl(action, from)).toBe(to);
      return;
    }
    const error = refusal(() => assertControl(action, from, 'e1'));
    expect(error.code).toBe('CONFLICT');
    // The actions the state allows, named with both doors' words; the one the caller likely meant first.
    const allowed = (Object.keys(expected) as ControlAction[]).filter((other) => expected[other][from]);
    const instead = { cancel: 'stop', stop: 'cancel', start: 'resume', resume: 'start', pause: null }[action];
    const ordered = [...allowed.filter((other) => other === instead), ...allowed.filter((other) => other !== instead)];
    const route = (other: string) => `${other} (POST /api/executions/e1/${other}, GraphQL ${other}Execution)`;
    const [done, allowedFrom] = {
      start: ['started', 'a scheduled one'],
      pause: ['paused', 'a running one'],
      resume: ['resumed', 'a paused one'],
      stop: ['stopped', 'a running or paused one'],
      cancel: ['cancelled', 'a preparing or scheduled one (that has not started)'],
    }[action];
    const next = ordered.length > 0 ? `Use ${ordered.map(route).join(' or ')}` : `${from} is final: nothing moves it`;
    expect(error.message).toBe(`An execution that is ${from} cannot be ${done}: only ${allowedFrom} can. ${next}`);
    expect(allowedActions(from)).toEqual(allowed.sort((a, b) => Object.keys(CONTROL_ACTIONS).indexOf(a) - Object.keys(CONTROL_ACTIONS).indexOf(b)));
  });

  it('a running execution asked to cancel is told to stop: the verb, its route and its mutation', () => {
    expect(refusal(() => assertControl('cancel', S.running, 'e1')).message).toBe(
      'An execution that is running cannot be cancelled: only a preparing or scheduled one (that has not started) can. ' +
        'Use stop (POST /api/executions/e1/stop, GraphQL stopExecution) or pause (POST /api/executions/e1/pause, GraphQL pauseExecution)',
    );
    expect(refusal(() => assertControl('stop', S.scheduled)).message).toBe(
      'An execution that is scheduled cannot be stopped: only a running or paused one can. ' +
        'Use cancel (POST /api/executions/{id}/cancel, GraphQL cancelExecution) or start (POST /api/executions/{id}/start, GraphQL startExecution)',
    );
    expect(refusal(() => assertControl('resume', S.completed)).message).toBe(
      'An execution that is completed cannot be resumed: only a paused one can. completed is final: nothing moves it',
    );
  });
});
