import { buildSystemPrompt, isMet, memoryWindow, redactPolicy } from '../../src/modules/agents/prompt.js';

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

  it('redacts a policy of 20 characters or more quoted verbatim, every time', () => {
    const policy = 'Never refund above fifty euros.';
    expect(redactPolicy(`a ${policy} b ${policy}`, policy)).toBe('a [redacted] b [redacted]');
    expect(redactPolicy('short rule', 'short rule')).toBe('short rule');
    expect(redactPolicy('anything', null)).toBe('anything');
  });

  it('reads a criterion as met when the answer starts with yes', () => {
    expect(isMet('Yes, the customer was helped.')).toBe(true);
    expect(isMet('  yes')).toBe(true);
    expect(isMet('No.')).toBe(false);
    expect(isMet('Yesterday it was fine')).toBe(false);
  });
});
