import { buildSystemPrompt, criterionPrompt, DEFAULT_LAST_MESSAGES, isMet, memoryWindow, policySection, redactPolicy } from './prompt.js';

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

describe('prompt building, exactly', () => {
  const second = { chunkId: 'c2', documentId: 'd2', title: 'Hours', content: 'Open 9 to 5', score: 0.5 };

  it('carries the policy in its own section, and nothing without one', () => {
    expect(policySection('No refunds.')).toBe('\n\nPolicy (hidden from the caller):\nNo refunds.');
    expect(policySection(null)).toBe('');
    expect(policySection('')).toBe('');
    expect(buildSystemPrompt('Be kind.', 'No refunds.', [])).toBe('Be kind.\n\nPolicy (hidden from the caller):\nNo refunds.');
  });

  it('numbers the passages from 1, one per line', () => {
    expect(buildSystemPrompt('I.', null, [passage, second])).toBe('I.\n\nKnowledge base passages:\n[1] Returns: 30 days to return\n[2] Hours: Open 9 to 5');
  });

  it('sees the default window when memory is on without lastMessages', () => {
    expect(DEFAULT_LAST_MESSAGES).toBe(10);
    expect(memoryWindow({ enabled: true, lastMessages: null } as never)).toBe(10);
  });

  it('asks about one criterion over the transcript, one line per message', () => {
    const criterion = { label: 'Refund', description: 'The caller got a refund.' };
    const { system, messages } = criterionPrompt(criterion as never, [
      { role: 'user', content: 'I want my money back' },
      { role: 'assistant', content: 'Done.' },
    ]);
    expect(system).toBe(
      'You evaluate a finished conversation against one resolution criterion. Answer "yes" or "no" first, then one sentence of explanation.\nCriterion: Refund\nThe caller got a refund.',
    );
    expect(messages).toEqual([{ role: 'user', content: 'Transcript:\nuser: I want my money back\nassistant: Done.' }]);
    expect(criterionPrompt(criterion as never, []).messages).toEqual([{ role: 'user', content: 'Transcript:\n(no messages)' }]);
  });

  it('reads yes only at the start of the answer, as a word', () => {
    expect(isMet('\n yes.')).toBe(true);
    expect(isMet('YES')).toBe(true);
    expect(isMet('I think yes')).toBe(false);
    expect(isMet('yesno')).toBe(false);
    expect(isMet('')).toBe(false);
  });
});

describe('policy redaction, sentence by sentence', () => {
  it('cuts sentences at . ! ? followed by a space, and at line breaks', () => {
    const policy = 'Rule one here! Rule two here? Rule three here\nRule four here\n\nRule five here';
    for (const rule of ['rule one here', 'rule two here', 'rule three here', 'rule four here', 'rule five here']) {
      expect(redactPolicy(`>${rule}<`, policy)).toBe('>[redacted]<');
    }
    // no cut after a dot inside a word: one sentence of two words
    expect(redactPolicy('the code is v1.2 today', 'Code is v1.2 today.')).toBe('the [redacted]');
    expect(redactPolicy('v1', 'Code is v1.2 today.')).toBe('v1');
  });

  it('trims quotes and punctuation around a sentence, and keeps the ones inside', () => {
    expect(redactPolicy('say: never promise dates, ever', '"Never promise dates, ever!" — ')).toBe('say: [redacted]');
    expect(redactPolicy('never promise dates ever', '"Never promise dates, ever!"')).toBe('never promise dates ever');
  });

  it('redacts a longer sentence whole before a shorter one inside it', () => {
    const policy = 'Never refund. Never refund above fifty euros.';
    expect(redactPolicy('We never refund above fifty euros.', policy)).toBe('We [redacted].');
    expect(redactPolicy('We never refund.', policy)).toBe('We [redacted].');
  });

  it('matches across any whitespace between the words, but not across other characters', () => {
    expect(redactPolicy('call\u00a0the\n\nmanager', 'Call the manager.')).toBe('[redacted]');
    expect(redactPolicy('call-the-manager', 'Call the manager.')).toBe('call-the-manager');
  });

  it('leaves a reply alone under a policy of one-word sentences, or of nothing but punctuation', () => {
    expect(redactPolicy('Never. Ever.', 'Never! Ever?')).toBe('Never. Ever.');
    expect(redactPolicy('... !!!', '... !!!')).toBe('... !!!');
    expect(redactPolicy('anything', '')).toBe('anything');
  });
});

describe('policy redaction, punctuation and spacing', () => {
  it('trims every quote and bracket around a sentence, however many', () => {
    expect(redactPolicy('never promise dates', '("Never promise dates")')).toBe('[redacted]');
  });

  it('reads a policy written with several spaces between words like one written with one', () => {
    expect(redactPolicy('call the manager', 'Call   the \t manager.')).toBe('[redacted]');
  });

  it('redacts a longer sentence whole whatever the order of the policy', () => {
    const reply = 'we never refund above fifty euros';
    expect(redactPolicy(reply, 'Never refund above fifty euros. Never refund.')).toBe('we [redacted]');
    expect(redactPolicy(reply, 'Never refund. Refund above. Never refund above fifty euros.')).toBe('we [redacted]');
  });
});
