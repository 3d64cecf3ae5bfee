import { AsyncLocalStorage } from 'node:async_hooks';
import { EventEmitter } from 'node:events';
import type { NextFunction, Request, Response } from 'express';
import { AnswerBudget } from './answer-budget.js';
import { LARGE_ANSWER_BYTES, LARGE_ANSWER_LIMIT, OrganizationGate } from './organization-gate.js';

/** Enough of an Express response for the gate: locals, the end flags and the finish/close events. */
function fakeResponse(organizationId: string | null, budget?: AnswerBudget) {
  const res = Object.assign(new EventEmitter(), {
    locals: {
      principal: { actor: organizationId ? { organizationId } : null, authError: null },
      ...(budget ? { answerBudget: budget } : {}),
    } as Record<string, unknown>,
    writableEnded: false,
    destroyed: false,
  });
  return res;
}

/** Runs the gate's middleware on a fake response; answers whether next() was called. */
function pass(gate: OrganizationGate, res: ReturnType<typeof fakeResponse>): { passed: boolean } {
  const outcome = { passed: false };
  const next: NextFunction = () => {
    outcome.passed = true;
  };
  gate.middleware()({} as Request, res as unknown as Response, next);
  return outcome;
}

/** Admits `n` requests of `org` and returns the order in which they started. */
function admitMany(gate: OrganizationGate, org: string, n: number, started: number[]): void {
  for (let i = 0; i < n; i++) gate.admit(org, () => started.push(i));
}

describe('OrganizationGate', () => {
  it('runs up to its limit per organization and starts the others in arrival order as places free up', () => {
    const gate = new OrganizationGate(2);
    const started: number[] = [];
    admitMany(gate, 'a', 4, started);
    expect(started).toEqual([0, 1]);
    expect(gate.load('a')).toEqual({ running: 2, waiting: 2, places: 2 });
    gate.leave('a', 100);
    expect(started).toEqual([0, 1, 2]);
    gate.leave('a', 100);
    gate.leave('a', 100);
    expect(started).toEqual([0, 1, 2, 3]);
    gate.leave('a', 100);
    expect(gate.load('a')).toEqual({ running: 0, waiting: 0, places: 2 });
  });

  it('counts each organization on its own', () => {
    const gate = new OrganizationGate(1);
    const a: number[] = [];
    const b: number[] = [];
    admitMany(gate, 'a', 2, a);
    admitMany(gate, 'b', 1, b);
    expect([a, b]).toEqual([[0], [0]]);
  });

  it('gives an organization whose answers are large LARGE_ANSWER_LIMIT places until its answers are small again', () => {
    const gate = new OrganizationGate(16);
    gate.admit('a', () => undefined);
    gate.leave('a', LARGE_ANSWER_BYTES * 8);
    expect(gate.load('a').places).toBe(LARGE_ANSWER_LIMIT);
    const started: number[] = [];
    admitMany(gate, 'a', 3, started);
    expect(started).toEqual([0]);
    gate.leave('a', LARGE_ANSWER_BYTES * 8);
    expect(started).toEqual([0, 1]);
    // Small answers bring the average down and the places back.
    for (let i = 0; i < 30; i++) {
      gate.admit('a', () => undefined);
      gate.leave('a', 1000);
    }
    expect(gate.load('a').places).toBe(16);
    expect(started).toEqual([0, 1, 2]);
    // Another organization was never weighed down.
    expect(gate.load('b').places).toBe(16);
  });

  it('keeps a running average: one small answer after a very large one does not give the places back', () => {
    const gate = new OrganizationGate(16);
    gate.weigh('a', LARGE_ANSWER_BYTES * 8);
    gate.weigh('a', 1000);
    expect(gate.load('a').places).toBe(LARGE_ANSWER_LIMIT);
  });

  it('an answer exactly at the threshold is not large', () => {
    const gate = new OrganizationGate(4);
    gate.admit('a', () => undefined);
    gate.leave('a', LARGE_ANSWER_BYTES);
    expect(gate.load('a').places).toBe(4);
  });

  it('starts a waiting request in its own async context, not in that of the request that left', () => {
    const requests = new AsyncLocalStorage<string>();
    const gate = new OrganizationGate(1);
    const seen: (string | undefined)[] = [];
    requests.run('first', () => gate.admit('a', () => seen.push(requests.getStore())));
    requests.run('second', () => gate.admit('a', () => seen.push(requests.getStore())));
    expect(seen).toEqual(['first']);
    requests.run('first', () => gate.leave('a', 10));
    expect(seen).toEqual(['first', 'second']);
  });

  it('weighs an answer at once with weigh(), without a place being left', () => {
    const gate = new OrganizationGate(8);
    expect(gate.averageAnswerBytes('a')).toBe(0);
    gate.weigh('a', LARGE_ANSWER_BYTES + 1);
    expect(gate.load('a')).toEqual({ running: 0, waiting: 0, places: LARGE_ANSWER_LIMIT });
    expect(gate.averageAnswerBytes('a')).toBe(LARGE_ANSWER_BYTES + 1);
    // A leave without a size does not count in the average.
    gate.admit('a', () => undefined);
    gate.leave('a');
    expect(gate.load('a').places).toBe(LARGE_ANSWER_LIMIT);
    gate.leave('a', 0);
    expect(gate.load('a').places).toBe(8);
  });
});

describe('OrganizationGate.middleware', () => {
  it('lets requests without a caller, and every request when turned off, through without counting them', () => {
    const anonymous = fakeResponse(null);
    expect(pass(new OrganizationGate(1), anonymous).passed).toBe(true);
    const off = new OrganizationGate(0);
    expect([pass(off, fakeResponse('a')).passed, pass(off, fakeResponse('a')).passed]).toEqual([true, true]);
    expect(off.load('a').running).toBe(0);
  });

  it("holds an organization's request until a place frees up, and leaves once when the answer finishes and closes", () => {
    const gate = new OrganizationGate(1);
    const first = fakeResponse('a');
    const second = fakeResponse('a');
    expect(pass(gate, first).passed).toBe(true);
    const waiting = pass(gate, second);
    expect(waiting.passed).toBe(false);
    expect(gate.load('a')).toEqual({ running: 1, waiting: 1, places: 1 });
    first.locals.answerBytes = 100;
    first.emit('finish');
    first.emit('close');
    expect(waiting.passed).toBe(true);
    expect(gate.load('a')).toEqual({ running: 1, waiting: 0, places: 1 });
    second.emit('close');
    expect(gate.load('a')).toEqual({ running: 0, waiting: 0, places: 1 });
  });

  it('weighs the organization by the size of what each request answered', () => {
    const gate = new OrganizationGate(4);
    const res = fakeResponse('a');
    pass(gate, res);
    res.locals.answerBytes = LARGE_ANSWER_BYTES * 2;
    res.emit('finish');
    expect(gate.load('a').places).toBe(LARGE_ANSWER_LIMIT);
    // No size known (the client went away before an answer): not counted.
    const gone = fakeResponse('b');
    pass(gate, gone);
    gone.locals.answerBytes = 'unknown';
    gone.emit('close');
    expect(gate.load('b')).toEqual({ running: 0, waiting: 0, places: 4 });
    // Nothing was counted: the next answer is the whole average.
    gate.weigh('b', LARGE_ANSWER_BYTES * 2);
    expect(gate.load('b').places).toBe(LARGE_ANSWER_LIMIT);
  });

  it('passes the place on when the request was answered (timed out) or its client left while it waited', () => {
    for (const flag of ['writableEnded', 'destroyed'] as const) {
      const gate = new OrganizationGate(1);
      const first = fakeResponse('a');
      const answered = fakeResponse('a');
      pass(gate, first);
      const held = pass(gate, answered);
      answered[flag] = true;
      first.emit('finish');
      expect(held.passed).toBe(false);
      expect(gate.load('a')).toEqual({ running: 0, waiting: 0, places: 1 });
    }
  });

  it('weighs the organization as soon as a request spends its answer budget, and not again when it finishes', () => {
    const gate = new OrganizationGate(4);
    const budget = new AnswerBudget(LARGE_ANSWER_BYTES);
    const res = fakeResponse('a', budget);
    pass(gate, res);
    expect(gate.load('a').places).toBe(4);
    expect(() => budget.charge(LARGE_ANSWER_BYTES + 1)).toThrow();
    // Still running, already weighed: the organization's next requests get one place.
    expect(gate.load('a')).toEqual({ running: 1, waiting: 0, places: LARGE_ANSWER_LIMIT });
    // The refusal it finally sends is short; it does not count as a second, small answer.
    res.locals.answerBytes = 200;
    res.emit('finish');
    expect(gate.load('a')).toEqual({ running: 0, waiting: 0, places: LARGE_ANSWER_LIMIT });
  });
});

describe('OrganizationGate.take', () => {
  it('waits in turn with the organization’s requests and gives its place back once', async () => {
    const gate = new OrganizationGate(1);
    const started: number[] = [];
    gate.admit('a', () => started.push(0));
    let taken = false;
    const place = gate.take('a').then((leave) => {
      taken = true;
      return leave;
    });
    admitMany(gate, 'a', 1, started);
    await Promise.resolve();
    expect([taken, gate.load('a')]).toEqual([false, { running: 1, waiting: 2, places: 1 }]);
    gate.leave('a');
    const leave = await place;
    expect([taken, started, gate.load('a').running]).toEqual([true, [0], 1]);
    leave();
    leave();
    expect([started, gate.load('a')]).toEqual([[0, 0], { running: 1, waiting: 0, places: 1 }]);
    // Off (CONCURRENCY_PER_ORG=0): a place at once, nothing counted.
    const off = new OrganizationGate(0);
    (await off.take('a'))();
    expect(off.load('a')).toEqual({ running: 0, waiting: 0, places: 0 });
  });
});
