import { LARGE_ANSWER_BYTES, LARGE_ANSWER_LIMIT, OrganizationGate } from './organization-gate.js';

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

  it('an answer exactly at the threshold is not large', () => {
    const gate = new OrganizationGate(4);
    gate.admit('a', () => undefined);
    gate.leave('a', LARGE_ANSWER_BYTES);
    expect(gate.load('a').places).toBe(4);
  });
});
