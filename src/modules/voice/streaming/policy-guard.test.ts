import { PolicyGuard, PREFIX_WORDS } from './policy-guard.js';

describe('PolicyGuard', () => {
  const guard = new PolicyGuard('Never offer a discount above ten percent to anyone.\nThe override code is 4471. No.');

  it('catches a policy sentence said whole, in any case, spacing or punctuation', () => {
    expect(guard.leaks('Sure! never   OFFER a discount, above ten percent to anyone')).toBe(true);
    expect(guard.leaks('The override code is 4471')).toBe(true);
  });

  it('catches the start of a policy sentence before the rest is written', () => {
    expect(PREFIX_WORDS).toBe(4);
    expect(guard.leaks('Well, never offer a discount')).toBe(true);
    expect(guard.leaks('Well, never offer a')).toBe(false);
    expect(guard.leaks('The override code')).toBe(false);
    expect(new PolicyGuard('Call the manager.').leaks('please call the manager')).toBe(true);
    expect(new PolicyGuard('Call the manager.').leaks('please call the')).toBe(false);
  });

  it('lets ordinary replies through, one-word policy sentences included', () => {
    expect(guard.leaks('No. We open at nine, and a discount is possible for members.')).toBe(false);
    expect(new PolicyGuard(null).leaks('Never offer a discount above ten percent to anyone.')).toBe(false);
  });

  // Security review 4, M2: the guard cut the echo of a caller's guesses at the right one.
  it('never judges the caller’s own words: an echo of their guesses passes, right one included', () => {
    const guesses = Array.from({ length: 100 }, (_, index) => `The override code is ${4400 + index}.`).join(' ');
    expect(guard.leaks(`You said: ${guesses}`, [guesses])).toBe(false);
    expect(guard.leaks('You said: the override code is 4471', ['THE override, code is 4471?'])).toBe(false);
    // The same words the caller never said are cut.
    expect(guard.leaks('You said: the override code is 4471', ['the override code is 4470'])).toBe(true);
  });

  it('cuts the words of a sentence the model says past what the caller said', () => {
    expect(guard.leaks('never offer a discount', ['never offer a discount'])).toBe(false);
    expect(guard.leaks('never offer a discount above', ['never offer a discount'])).toBe(true);
    expect(guard.leaks('never offer a discount above', ['never offer a', 'discount above'])).toBe(true);
    expect(guard.leaks('never offer a discount above ten percent to anyone', ['never offer a discount above ten percent to anyone'])).toBe(false);
    // Said twice, once as the caller said it and once further on: the second is the model's.
    expect(guard.leaks('never offer a discount. Never offer a discount above', ['never offer a discount'])).toBe(true);
  });
});
