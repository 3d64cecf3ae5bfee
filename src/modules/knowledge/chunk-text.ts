export interface ChunkOptions {
  /** Longest chunk, in characters. */
  maxChars: number;
  /** Characters of the previous chunk's end repeated at the start of the next, so a passage cut in two still reads whole. */
  overlap: number;
}

export const DEFAULT_CHUNK_OPTIONS: ChunkOptions = { maxChars: 800, overlap: 100 };

interface Unit {
  text: string;
  /** What joins it to the unit before it: a paragraph break or a space inside a paragraph. */
  joiner: string;
}

/** Cuts a piece longer than max at the last whitespace before max, or hard when there is none. */
function splitLong(text: string, max: number): string[] {
  const pieces: string[] = [];
  let rest = text;
  while (rest.length > max) {
    const space = rest.lastIndexOf(' ', max);
    // Stryker disable next-line EqualityOperator: equivalent, the text is trimmed, so a space is never at 0
    const cut = space > 0 ? space : max;
    // Stryker disable next-line MethodExpression: equivalent, whitespace is single spaces by now and the cut is before one
    pieces.push(rest.slice(0, cut).trim());
    rest = rest.slice(cut).trim();
  }
  // Stryker disable next-line ConditionalExpression: equivalent, rest is trimmed non-empty text or a hard cut's non-empty remainder
  if (rest) pieces.push(rest);
  return pieces;
}

/** Paragraphs, and the sentences of paragraphs too long for one chunk, in order. */
function unitsOf(text: string, max: number): Unit[] {
  const paragraphs = text
    .replace(/\r\n?/g, '\n')
    .split(/\n\s*\n/)
    .map((paragraph) => paragraph.replace(/\s+/g, ' ').trim())
    .filter(Boolean);
  return paragraphs.flatMap((paragraph) => {
    const sentences = paragraph.length <= max ? [paragraph] : paragraph.split(/(?<=[.!?]["')\]]?)\s+/);
    return sentences.flatMap((sentence) => splitLong(sentence, max)).map((piece, index) => ({ text: piece, joiner: index === 0 ? '\n\n' : ' ' }));
  });
}

/**
 * The end of a chunk, at most `overlap` characters, starting at a word. '' for a chunk no longer
 * than `overlap`: the whole chunk would not fit before the next unit (that is why it was closed).
 */
function tailOf(chunk: string, overlap: number): string {
  if (chunk.length <= overlap) return '';
  const start = chunk.length - overlap;
  const space = chunk.slice(start).search(/\s/);
  return space < 0 ? '' : chunk.slice(start + space).trim();
}

/**
 * Splits text into chunks of at most maxChars, cutting at paragraph and then sentence
 * boundaries, each chunk after the first starting with up to `overlap` characters of the one before.
 */
export function chunkText(text: string, options: ChunkOptions = DEFAULT_CHUNK_OPTIONS): string[] {
  const { maxChars, overlap } = options;
  if (!Number.isInteger(maxChars) || maxChars < 1) throw new RangeError('maxChars must be a positive integer');
  if (!Number.isInteger(overlap) || overlap < 0 || overlap >= maxChars) {
    throw new RangeError('overlap must be an integer from 0 to maxChars - 1');
  }
  const chunks: string[] = [];
  let current = '';
  for (const unit of unitsOf(text, maxChars)) {
    const joined = current ? current + unit.joiner + unit.text : unit.text;
    if (joined.length <= maxChars) {
      current = joined;
      continue;
    }
    chunks.push(current);
    // Units are never longer than maxChars, so the unit alone always fits when the tail does not.
    const tail = tailOf(current, overlap);
    const withTail = tail ? tail + unit.joiner + unit.text : unit.text;
    current = withTail.length <= maxChars ? withTail : unit.text;
  }
  if (current) chunks.push(current);
  return chunks;
}
