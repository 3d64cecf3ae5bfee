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
 * Stronger than the text replies' check (prompt.ts), which judges whole sentences after the fact:
 * here the words are never spoken, because the chunk that would start them is never sent.
 * Sentences of one word are left out, as there: every "No" would cut replies.
 *
 * Words the caller said are theirs: a run of a policy sentence's first words counts only where the
 * caller never said that run, so an echo of the caller's guesses is never cut (the cut would tell
 * them which guess begins the policy). Past what the caller said, each further word of the sentence
 * the reply says is the model's, and is cut.
 */
export class PolicyGuard {
  private readonly sentences: string[][];

  constructor(policy: string | null) {
    this.sentences = (policy ?? '')
      .split(/(?<=[.!?])\s+|\n+/u)
      .map(words)
      .filter((sentence) => sentence.length >= 2);
  }

  /** Whether `text` (the reply so far and the next chunk) says or begins a policy sentence that `callerSaid` does not. */
  leaks(text: string, callerSaid: readonly string[] = []): boolean {
    if (this.sentences.length === 0) return false;
    const said = words(text);
    const theirs = callerSaid.map((line) => ` ${words(line).join(' ')} `);
    let leaks = false;
    for (const sentence of this.sentences) {
      const least = Math.min(PREFIX_WORDS, sentence.length);
      for (let start = 0; start + least <= said.length; start++) {
        let length = 0;
        while (length < sentence.length && said[start + length] === sentence[length]) length++;
        if (length < least) continue;
        const run = ` ${sentence.slice(0, length).join(' ')} `;
        // Every sentence and place is looked at, whatever was found before: the work does not depend on which matched.
        leaks = !theirs.some((line) => line.includes(run)) || leaks;
      }
    }
    return leaks;
  }
}
