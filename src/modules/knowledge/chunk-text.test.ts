import { chunkText, DEFAULT_CHUNK_OPTIONS } from './chunk-text.js';
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

describe('chunkText, exactly', () => {
  const s1 = 'aaaa bbbb cccc dddd.';
  const s2 = 'eeee ffff gggg hhhh.';
  const s3 = 'iiii jjjj kkkk llll.';

  it('reads CRLF and lone CR as line breaks, and a blank line holding spaces or tabs as a paragraph break', () => {
    expect(chunkText('a b\r\n\r\nc d\r\ne')).toEqual(['a b\n\nc d e']);
    expect(chunkText('a\r\rb\rc')).toEqual(['a\n\nb c']);
    expect(chunkText('one\n \t \ntwo\n\n\n\nthree')).toEqual(['one\n\ntwo\n\nthree']);
  });

  it('cuts after a sentence end followed by a quote or a closing bracket', () => {
    const text = 'He said "stop." Then left. (Really!) Next [one?] done';
    expect(chunkText(text, { maxChars: 20, overlap: 0 })).toEqual(['He said "stop."', 'Then left. (Really!)', 'Next [one?] done']);
  });

  it('joins the sentences of a paragraph with a space and paragraphs with a blank line', () => {
    expect(chunkText(`${s1} ${s2}\n\nxx yy`, { maxChars: 30, overlap: 0 })).toEqual([s1, `${s2}\n\nxx yy`]);
  });

  it('fills a chunk up to maxChars exactly', () => {
    expect(chunkText(`${s1} ${s2}`, { maxChars: 41, overlap: 0 })).toEqual([`${s1} ${s2}`]);
    expect(chunkText(`${s1} ${s2}`, { maxChars: 40, overlap: 0 })).toEqual([s1, s2]);
  });

  it('carries the end of the chunk before, from its first word starting within the last `overlap` characters', () => {
    expect(chunkText(`${s1} ${s2}`, { maxChars: 30, overlap: 10 })).toEqual([s1, `dddd. ${s2}`]);
    expect(chunkText(`${s1} ${s2} ${s3}`, { maxChars: 40, overlap: 19 })).toEqual([s1, `bbbb cccc dddd. ${s2}`, `ffff gggg hhhh. ${s3}`]);
  });

  it('carries nothing when the end has no space to start at, and the unit alone when the tail does not fit with it', () => {
    // the whole chunk fits in the overlap, but chunk + unit does not fit in maxChars
    expect(chunkText(`${s1} ${s2} ${s3}`, { maxChars: 40, overlap: 20 })).toEqual([s1, s2, s3]);
    expect(chunkText(`${s1} ${s2} ${s3}`, { maxChars: 40, overlap: 0 })).toEqual([s1, s2, s3]);
    expect(chunkText('abcdefghij klmnopqrst', { maxChars: 12, overlap: 5 })).toEqual(['abcdefghij', 'klmnopqrst']);
  });

  it('cuts a long sentence at its last space before maxChars', () => {
    expect(chunkText('aaa bbb ccc ddd', { maxChars: 7, overlap: 0 })).toEqual(['aaa bbb', 'ccc ddd']);
    expect(chunkText('aaaa bbbb', { maxChars: 4, overlap: 0 })).toEqual(['aaaa', 'bbbb']);
    expect(chunkText('aaaaaaa', { maxChars: 3, overlap: 0 })).toEqual(['aaa', 'aaa', 'a']);
  });

  it('uses 800 characters with 100 of overlap by default', () => {
    expect(DEFAULT_CHUNK_OPTIONS).toEqual({ maxChars: 800, overlap: 100 });
    const words = Array.from({ length: 200 }, (_, i) => `w${String(i).padStart(3, '0')}`).join(' '); // 999 characters
    const chunks = chunkText(words);
    expect(chunks.map((chunk) => chunk.length)).toEqual([799, 299]);
    expect(chunks[1]!.startsWith('w140 w141')).toBe(true);
  });

  it.each([
    [{ maxChars: 1.5, overlap: 0 }, 'maxChars must be a positive integer'],
    [{ maxChars: -1, overlap: 0 }, 'maxChars must be a positive integer'],
    [{ maxChars: 10, overlap: -1 }, 'overlap must be an integer from 0 to maxChars - 1'],
    [{ maxChars: 10, overlap: 0.5 }, 'overlap must be an integer from 0 to maxChars - 1'],
    [{ maxChars: 10, overlap: 11 }, 'overlap must be an integer from 0 to maxChars - 1'],
  ])('refuses %j', (options, message) => {
    expect(() => chunkText('text', options)).toThrow(new RangeError(message));
  });

  it('takes the smallest options that make progress', () => {
    expect(chunkText('ab', { maxChars: 1, overlap: 0 })).toEqual(['a', 'b']);
    expect(chunkText('ab cd', { maxChars: 3, overlap: 2 })).toEqual(['ab', 'cd']);
  });
});

describe('chunkText at the edges', () => {
  it('drops blank lines at the end', () => {
    expect(chunkText('Hello.\n\n\n')).toEqual(['Hello.']);
  });

  it('keeps a paragraph of exactly maxChars whole, rather than packing its first sentence with the paragraph before', () => {
    expect(chunkText('x\n\nAb. Cd.', { maxChars: 7, overlap: 0 })).toEqual(['x', 'Ab. Cd.']);
    expect(chunkText('x\n\naaa bbb', { maxChars: 7, overlap: 0 })).toEqual(['x', 'aaa bbb']);
    expect(chunkText('x\n\nAb. Cd.', { maxChars: 8, overlap: 0 })).toEqual(['x', 'Ab. Cd.']);
  });

  it('keeps the tail when tail and unit make exactly maxChars', () => {
    expect(chunkText('aaaa bbbb cccc dddd. eeee ffff gggg hhhh.', { maxChars: 26, overlap: 10 })).toEqual([
      'aaaa bbbb cccc dddd.',
      'dddd. eeee ffff gggg hhhh.',
    ]);
  });
});

describe('chunkText and a chunk no longer than the overlap', () => {
  it('carries nothing of a chunk of exactly `overlap` characters, nor of a shorter one', () => {
    expect(chunkText('ab cd\n\nefgh', { maxChars: 8, overlap: 5 })).toEqual(['ab cd', 'efgh']);
    expect(chunkText('ab c\n\nefg hi', { maxChars: 8, overlap: 7 })).toEqual(['ab c', 'efg hi']);
    expect(chunkText(`aaaaa bbbbb ccccc ddddd\n\n${'e'.repeat(18)}`, { maxChars: 40, overlap: 23 })).toEqual(['aaaaa bbbbb ccccc ddddd', 'e'.repeat(18)]);
  });

  it('carries the words that start within the last `overlap` characters of a longer one', () => {
    expect(chunkText('ab cd\n\nefgh', { maxChars: 8, overlap: 4 })).toEqual(['ab cd', 'cd\n\nefgh']);
  });
});
