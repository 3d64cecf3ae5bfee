import { AppError } from '../../common/errors.js';
import { assertControl, assertMove, canMove, FINAL_STATES, PAUSED_STATES } from './execution-state.js';
import { ExecutionStatus as S } from './program.enums.js';

const ALL = Object.values(S);
const ALLOWED = new Set([
  'scheduled>running', 'scheduled>cancelled',
  'running>paused', 'running>paused_no_credits', 'running>paused_threshold', 'running>completed', 'running>stopped',
  'paused>running', 'paused>stopped',
  'paused_no_credits>running', 'paused_no_credits>stopped',
  'paused_threshold>running', 'paused_threshold>stopped',
]);

describe('the execution state machine (CONTRACT.md §7)', () => {
  const pairs = ALL.flatMap((from) => ALL.map((to) => [from, to] as const));

  it.each(pairs)('%s → %s', (from, to) => {
    const allowed = ALLOWED.has(`${from}>${to}`);
    expect(canMove(from, to)).toBe(allowed);
    if (allowed) expect(() => assertMove(from, to)).not.toThrow();
    else expect(() => assertMove(from, to)).toThrow(expect.objectContaining({ code: 'CONFLICT' }));
  });

  it('final states have no way out', () => {
    for (const from of FINAL_STATES) for (const to of ALL) expect(canMove(from, to)).toBe(false);
  });

  it('start only from scheduled; resume only from a paused state', () => {
    expect(assertControl('start', S.scheduled)).toBe(S.running);
    expect(() => assertControl('start', S.paused)).toThrow(AppError);
    for (const paused of PAUSED_STATES) expect(assertControl('resume', paused)).toBe(S.running);
    expect(() => assertControl('resume', S.scheduled)).toThrow(expect.objectContaining({ code: 'CONFLICT' }));
    expect(() => assertControl('resume', S.running)).toThrow(expect.objectContaining({ code: 'CONFLICT' }));
    expect(assertControl('pause', S.running)).toBe(S.paused);
    expect(() => assertControl('pause', S.paused)).toThrow(expect.objectContaining({ code: 'CONFLICT' }));
    expect(assertControl('cancel', S.scheduled)).toBe(S.cancelled);
    expect(() => assertControl('cancel', S.running)).toThrow(expect.objectContaining({ code: 'CONFLICT' }));
    expect(assertControl('stop', S.paused_no_credits)).toBe(S.stopped);
  });
});
