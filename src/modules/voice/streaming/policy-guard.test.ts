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
  });

  it('lets ordinary replies through, one-word policy sentences included', () => {
    expect(guard.leaks('No. We open at nine, and a discount is possible for members.')).toBe(false);
    expect(new PolicyGuard(null).leaks('Never offer a discount above ten percent to anyone.')).toBe(false);
  });
});
