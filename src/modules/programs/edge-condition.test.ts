import { conditionHolds, isEdgeCondition, parseEdgeCondition } from './edge-condition.js';

describe('edge conditions', () => {
  it('parses the documented forms and nothing else', () => {
    expect(parseEdgeCondition('answered')).toEqual({ kind: 'outcome', outcome: 'answered' });
    expect(parseEdgeCondition('digit:#')).toEqual({ kind: 'digit', digit: '#' });
    expect(parseEdgeCondition('said:  Move It ')).toEqual({ kind: 'said', words: 'move it' });
    expect(parseEdgeCondition('no_input')).toEqual({ kind: 'no_input' });
    for (const bad of ['digit:12', 'digit:a', 'said:', 'said:   ', 'Answered', 'resolved!', '']) expect(isEdgeCondition(bad)).toBe(false);
  });

  it('matches what happened at the node', () => {
    const holds = (condition: string, event: Parameters<typeof conditionHolds>[1]) => conditionHolds(parseEdgeCondition(condition)!, event);
    expect(holds('digit:1', { digits: '12' })).toBe(true);
    expect(holds('digit:1', { digits: '21' })).toBe(false);
    expect(holds('digit:1', { speech: '1' })).toBe(false);
    expect(holds('said:move it', { speech: 'Could you MOVE   it please' })).toBe(true);
    expect(holds('said:move it', { speech: 'remove item' })).toBe(true); // a substring, as documented
    expect(holds('said:goodbye', { speech: 'hello' })).toBe(false);
    expect(holds('resolved', { resolved: true })).toBe(true);
    expect(holds('resolved', { resolved: null })).toBe(false);
    expect(holds('unresolved', { resolved: false })).toBe(true);
    expect(holds('unresolved', { resolved: null })).toBe(false);
    expect(holds('no_input', { noInput: true })).toBe(true);
    expect(holds('voicemail', { outcome: 'answered' })).toBe(false);
  });
});
