/** How many of a policy sentence's first words, said in a row, count as starting to say it. */
export const PREFIX_WORDS = 4;

function words(text: string): string[] {
  return text
    .toLowerCase()
    .split(/[^\p{L}\p{N}]+/u)
    .filter(Boolean);
}

/**
 * What the streaming pipeline checks before a chunk of the agent's reply goes to the synthesizer:
 * whether the reply so far, with that chunk, says a sentence of the hidden policy or begins one
 * (its first PREFIX_WORDS words, or all of a shorter sentence), in any case, spacing or punctuation.
 * Stronger than the text replies' redaction (prompt.ts), which replaces whole sentences after the
 * fact: here the words are never spoken, because the chunk that would start them is never sent.
 * Sentences of one word are left out, as there: every "No" would cut replies.
 */
export class PolicyGuard {
  private readonly openings: string[][];

  constructor(policy: string | null) {
    this.openings = (policy ?? '')
      .split(/(?<=[.!?])\s+|\n+/u)
      .map(words)
      .filter((sentence) => sentence.length >= 2)
      .map((sentence) => sentence.slice(0, PREFIX_WORDS));
  }

  /** Whether `text` (the reply so far and the next chunk) says or begins a policy sentence. */
  leaks(text: string): boolean {
    if (this.openings.length === 0) return false;
    const said = words(text);
    return this.openings.some((opening) => {
      for (let start = 0; start + opening.length <= said.length; start++) {
        if (opening.every((word, index) => said[start + index] === word)) return true;
      }
      return false;
    });
  }
}
