import { buildSystemPrompt, isMet, memoryWindow, redactPolicy } from './prompt.js';

const passage = { chunkId: 'c1', documentId: 'd1', title: 'Returns', content: '30 days to return', score: 0.9 };

describe('prompt building', () => {
  it('puts instructions, then the policy, then the passages', () => {
    expect(buildSystemPrompt('Be kind.', null, [])).toBe('Be kind.');
    expect(buildSystemPrompt('Be kind.', 'No refunds.', [passage])).toBe(
      'Be kind.\n\nPolicy (hidden from the caller):\nNo refunds.\n\nKnowledge base passages:\n[1] Returns: 30 days to return',
    );
  });

  it('sees no memory when disabled or absent, lastMessages when set, 10 by default', () => {
    expect(memoryWindow(null)).toBe(0);
    expect(memoryWindow({ enabled: false, lastMessages: 5 })).toBe(0);
    expect(memoryWindow({ enabled: true, lastMessages: 0 })).toBe(0);
    expect(memoryWindow({ enabled: true, lastMessages: 2 })).toBe(2);
    expect(memoryWindow({ enabled: true })).toBe(10);
  });

  it('redacts a policy quoted verbatim, every time, short ones too', () => {
    const policy = 'Never refund above fifty euros.';
    expect(redactPolicy(`a ${policy} b ${policy}`, policy)).toBe('a [redacted]. b [redacted].');
    expect(redactPolicy('a short rule!', 'short rule')).toBe('a [redacted]!');
    expect(redactPolicy('anything', null)).toBe('anything');
  });

  it('redacts each sentence of the policy in any case and spacing, and leaves other text alone', () => {
    const policy = 'Never refund above fifty euros.\nThe discount code is K-42!  Escalate angry callers to Tier Two?';
    const reply = 'OK. NEVER refund  above\tFIFTY euros; the Discount Code is k-42. escalate angry callers to tier two';
    expect(redactPolicy(reply, policy)).toBe('OK. [redacted]; [redacted]. [redacted]');
    // a sentence is matched whole, word by word: part of one or other words stay
    expect(redactPolicy('Never refund. The discount code is K-43.', policy)).toBe('Never refund. The discount code is K-43.');
    // regular-expression characters in the policy are literal
    expect(redactPolicy('price (x+y) * 2 now', 'Price (x+y) * 2.')).toBe('[redacted] now');
  });

  it('does not redact one-word sentences, which would garble ordinary replies', () => {
    expect(redactPolicy('No. Refunds are possible.', 'No. Refunds.')).toBe('No. Refunds are possible.');
  });

  it('reads a criterion as met when the answer starts with yes', () => {
    expect(isMet('Yes, the customer was helped.')).toBe(true);
    expect(isMet('  yes')).toBe(true);
    expect(isMet('No.')).toBe(false);
    expect(isMet('Yesterday it was fine')).toBe(false);
  });
});
