/** A clause may be spoken on its own once it is this long (a comma after two words is not worth a pause). */
export const MIN_CLAUSE_CHARS = 40;
/** Text without any punctuation is cut at a space past this length, so a run-on reply still starts to play. */
export const MAX_CHUNK_CHARS = 200;

const SENTENCE_END = /[.!?…]["')\]]*\s/gu;
const CLAUSE_END = /[,;:—–]\s/gu;

/**
 * Cuts a reply being written into what can be spoken now: each sentence as soon as its end and the
 * space after it arrive; a clause (up to a comma, a semicolon, a colon or a dash) once it is at least
 * MIN_CLAUSE_CHARS long; a run without punctuation at a space past MAX_CHUNK_CHARS. The rest waits
 * for more text or for `flush`. Chunks keep their spaces, so joined they are exactly the text.
 */
export class SentenceChunker {
  private buffer = '';

  /** More of the reply; returns the chunks it completed, in order. */
  push(delta: string): string[] {
    this.buffer += delta;
    const chunks: string[] = [];
    for (;;) {
      const cut = this.cutAt();
      if (cut <= 0) break;
      chunks.push(this.buffer.slice(0, cut));
      this.buffer = this.buffer.slice(cut);
    }
    return chunks;
  }

  /** The reply is complete: what is left, if anything but spaces. */
  flush(): string | null {
    const rest = this.buffer;
    this.buffer = '';
    return rest.trim() ? rest : null;
  }

  /** Text received but not yet cut. */
  get pending(): string {
    return this.buffer;
  }

  private cutAt(): number {
    SENTENCE_END.lastIndex = 0;
    const sentence = SENTENCE_END.exec(this.buffer);
    if (sentence) return sentence.index + sentence[0].length;
    CLAUSE_END.lastIndex = 0;
    for (let clause = CLAUSE_END.exec(this.buffer); clause; clause = CLAUSE_END.exec(this.buffer)) {
      const end = clause.index + clause[0].length;
      if (end >= MIN_CLAUSE_CHARS) return end;
    }
    if (this.buffer.length > MAX_CHUNK_CHARS) {
      const space = this.buffer.lastIndexOf(' ', MAX_CHUNK_CHARS);
      return space > 0 ? space + 1 : MAX_CHUNK_CHARS;
    }
    return 0;
  }
}
