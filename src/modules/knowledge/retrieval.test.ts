import { toOrQuery } from './retrieval.js';

describe('toOrQuery', () => {
  it('joins the distinct lower-cased words with |, in order of first appearance', () => {
    expect(toOrQuery('Refund REFUND policy refund')).toBe('refund | policy');
    expect(toOrQuery('one')).toBe('one');
  });

  it('keeps letters and digits of any script, drops everything tsquery could read as syntax', () => {
    expect(toOrQuery("Où est l'hôtel № 42? (a&b) | !c:* <-> 'd'")).toBe('où | est | l | hôtel | 42 | a | b | c | d');
    expect(toOrQuery('東京 café')).toBe('東京 | café');
  });

  it('answers an empty string when no word is left', () => {
    expect(toOrQuery(' ?!& ')).toBe('');
    expect(toOrQuery('')).toBe('');
  });

  it('leaves out words longer than 100 characters, keeps one of 100', () => {
    const hundred = 'a'.repeat(100);
    expect(toOrQuery(`${hundred}b ${hundred} c`)).toBe(`${hundred} | c`);
  });

  it('keeps the first 64 distinct words', () => {
    const words = Array.from({ length: 70 }, (_, i) => `w${i}`);
    const query = toOrQuery(`${words.join(' ')} w0 w1`);
    expect(query.split(' | ')).toEqual(words.slice(0, 64));
  });
});
