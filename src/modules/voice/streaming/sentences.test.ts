import { MAX_CHUNK_CHARS, MIN_CLAUSE_CHARS, SentenceChunker } from './sentences.js';

/** Feeds `text` in pieces of `size` characters; returns the chunks, the flushed rest last. */
function chunk(text: string, size: number): string[] {
  const chunker = new SentenceChunker();
  const chunks: string[] = [];
  for (let at = 0; at < text.length; at += size) chunks.push(...chunker.push(text.slice(at, at + size)));
  const rest = chunker.flush();
  if (rest) chunks.push(rest);
  return chunks;
}

describe('SentenceChunker', () => {
  it('gives each sentence as soon as the space after its end arrives, whatever the pieces', () => {
    const text = 'Hello there! We open at nine. Is that all right? Thanks…  Bye';
    for (const size of [1, 2, 3, 7, 100]) {
      expect(chunk(text, size)).toEqual(['Hello there! ', 'We open at nine. ', 'Is that all right? ', 'Thanks… ', ' Bye']);
    }
    const chunker = new SentenceChunker();
    expect(chunker.push('We open at nine.')).toEqual([]); // "nine.5" could still be a number
    expect(chunker.push(' Then')).toEqual(['We open at nine. ']);
    expect(chunker.pending).toBe('Then');
  });

  it('cuts a long clause at its comma, but not a short one', () => {
    const long = 'When you come to the shop on a weekday morning, ask for Ada at the desk.';
    expect(long.indexOf(',') + 2).toBeGreaterThanOrEqual(MIN_CLAUSE_CHARS);
    expect(chunk(long, 5)).toEqual(['When you come to the shop on a weekday morning, ', 'ask for Ada at the desk.']);
    expect(chunk('Yes, we do. Sure', 4)).toEqual(['Yes, we do. ', 'Sure']);
  });

  it('cuts text without punctuation at a space past the longest chunk, and joined the chunks are the text', () => {
    const words = Array.from({ length: 120 }, (_, index) => `word${index}`).join(' ');
    const chunks = chunk(words, 13);
    expect(chunks.length).toBeGreaterThan(2);
    for (const each of chunks.slice(0, -1)) expect(each.length).toBeLessThanOrEqual(MAX_CHUNK_CHARS + 1);
    expect(chunks.join('')).toBe(words);
    expect(chunk('', 1)).toEqual([]);
    expect(chunk('   ', 1)).toEqual([]);
  });
});
