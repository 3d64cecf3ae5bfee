import { chunkText } from './chunk-text.js';
import { toOrQuery } from './retrieval.js';

const sentence = (n: number) => `Sentence number ${n} talks about topic ${n} in some detail.`;

describe('chunkText', () => {
  it('keeps a short text as one chunk, with whitespace tidied', () => {
    expect(chunkText('  Hello   world.\n\n\n  Second\nparagraph.  ')).toEqual(['Hello world.\n\nSecond paragraph.']);
  });

  it('answers no chunk for text with nothing but whitespace', () => {
    expect(chunkText(' \n\n \t ')).toEqual([]);
  });

  it('cuts between paragraphs before cutting inside one', () => {
    const first = 'a'.repeat(30) + '.';
    const second = 'b'.repeat(30) + '.';
    const chunks = chunkText(`${first}\n\n${second}`, { maxChars: 50, overlap: 0 });
    expect(chunks).toEqual([first, second]);
  });

  it('cuts a long paragraph at sentence ends, every chunk within maxChars', () => {
    const paragraph = Array.from({ length: 40 }, (_, i) => sentence(i)).join(' ');
    const chunks = chunkText(paragraph, { maxChars: 200, overlap: 0 });
    expect(chunks.length).toBeGreaterThan(1);
    for (const chunk of chunks) {
      expect(chunk.length).toBeLessThanOrEqual(200);
      expect(chunk).toMatch(/^Sentence number \d+/);
      expect(chunk).toMatch(/detail\.$/);
    }
    expect(chunks.join(' ')).toBe(paragraph);
  });

  it('starts each later chunk with the end of the one before, at a word', () => {
    const paragraph = Array.from({ length: 30 }, (_, i) => sentence(i)).join(' ');
    const chunks = chunkText(paragraph, { maxChars: 200, overlap: 60 });
    expect(chunks.length).toBeGreaterThan(2);
    for (let i = 1; i < chunks.length; i++) {
      const previous = chunks[i - 1]!;
      const current = chunks[i]!;
      expect(current.length).toBeLessThanOrEqual(200);
      // the longest start of this chunk, up to a space and at most 60 characters, that ends the previous one
      let carried = 0;
      for (let k = 1; k <= 60; k++) if (current[k] === ' ' && previous.endsWith(current.slice(0, k))) carried = k;
      expect(carried).toBeGreaterThan(0);
      expect(previous.length - carried === 0 || /\s/.test(previous[previous.length - carried - 1]!)).toBe(true);
    }
    // every sentence survives somewhere
    for (let i = 0; i < 30; i++) expect(chunks.some((chunk) => chunk.includes(sentence(i)))).toBe(true);
  });

  it('splits a sentence longer than maxChars at spaces, and a word longer than that hard', () => {
    const words = Array.from({ length: 100 }, (_, i) => `word${i}`).join(' ');
    const wordChunks = chunkText(words, { maxChars: 80, overlap: 0 });
    expect(wordChunks.every((chunk) => chunk.length <= 80)).toBe(true);
    expect(wordChunks.join(' ')).toBe(words);

    const blob = 'x'.repeat(250);
    expect(chunkText(blob, { maxChars: 100, overlap: 10 })).toEqual(['x'.repeat(100), 'x'.repeat(100), 'x'.repeat(50)]);
  });

  it('refuses options that cannot make progress', () => {
    expect(() => chunkText('text', { maxChars: 0, overlap: 0 })).toThrow(RangeError);
    expect(() => chunkText('text', { maxChars: 100, overlap: 100 })).toThrow(RangeError);
  });
});

describe('toOrQuery', () => {
  it('joins the distinct words with | and drops every other character', () => {
    expect(toOrQuery("What's the refund policy? refund & (policy) | !x:*")).toBe('what | s | the | refund | policy | x');
  });

  it('answers an empty string when no word is left', () => {
    expect(toOrQuery(' ?!& ')).toBe('');
  });
});
