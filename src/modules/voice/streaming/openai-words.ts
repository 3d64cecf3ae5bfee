// OpenAI's own words about a failure reach the call record, but never the key. Its refusals quote
// the key they were given, masked (`Incorrect API key provided: sk-proj-****…abcd.`), and even the
// masked form names the key's kind and its last characters: both are cut here.

const KEY_LIKE = /\bsk-[A-Za-z0-9_*-]{3,}/g;

/** `text` with the key, and anything shaped like an OpenAI key, replaced by `sk-…`; at most `max` characters. */
export function openAiWords(text: string, apiKey: string | undefined, max = 300): string {
  let out = apiKey ? text.split(apiKey).join('sk-…') : text;
  out = out.replace(KEY_LIKE, 'sk-…').replace(/\s+/g, ' ').trim();
  return out.length > max ? `${out.slice(0, max - 1)}…` : out;
}

/** The `message` of OpenAI's error JSON (`{"error":{"message":…}}`), or null when the body is not that. */
export function openAiErrorMessage(body: string): string | null {
  try {
    const parsed: unknown = JSON.parse(body);
    const error = parsed && typeof parsed === 'object' ? (parsed as { error?: unknown }).error : undefined;
    const message = error && typeof error === 'object' ? (error as { message?: unknown }).message : undefined;
    return typeof message === 'string' && message ? message : null;
  } catch {
    return null;
  }
}
