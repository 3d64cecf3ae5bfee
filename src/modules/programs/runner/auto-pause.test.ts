import { addReached, countsAfterResume, trippedRule } from './auto-pause.js';

const rule = (nodeId: string, threshold: number, resetOnResume = false) => ({ nodeId, threshold, resetOnResume });

describe('auto-pause counting', () => {
  it('counts each reached node once more, a node named twice in one step once, and leaves the input alone', () => {
    const before = { a: 2, b: 1 };
    expect(addReached(before, ['a', 'c', 'a'])).toEqual({ a: 3, b: 1, c: 1 });
    expect(before).toEqual({ a: 2, b: 1 });
    expect(addReached({}, [])).toEqual({});
  });

  it('trips a rule whose node was just reached and whose count is at its threshold or past it', () => {
    const rules = [rule('a', 3), rule('b', 2)];
    expect(trippedRule(rules, { a: 3, b: 0 }, ['a'])).toEqual(rule('a', 3));
    expect(trippedRule(rules, { a: 4 }, ['a'])).toEqual(rule('a', 3));
    expect(trippedRule(rules, { a: 2 }, ['a'])).toBeUndefined();
  });

  it('does not trip a rule whose node was not reached in this step, even at its threshold', () => {
    const rules = [rule('a', 1), rule('b', 2)];
    expect(trippedRule(rules, { a: 5, b: 2 }, ['b'])).toEqual(rule('b', 2));
    expect(trippedRule(rules, { a: 5 }, ['c'])).toBeUndefined();
    // a reached node that was never counted reads as 0
    expect(trippedRule([rule('z', 1)], {}, ['z'])).toBeUndefined();
  });

  it('starts again from 0 only the nodes of rules with resetOnResume, leaving the input alone', () => {
    const counts = { a: 3, b: 5, c: 1 };
    expect(countsAfterResume([rule('a', 3, true), rule('b', 9, false)], counts)).toEqual({ a: 0, b: 5, c: 1 });
    expect(counts).toEqual({ a: 3, b: 5, c: 1 });
  });
});
