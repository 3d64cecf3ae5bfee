// Reading a carrier's JSON media frames (twilio-media.ts, telnyx-media.ts): a frame that is not a
// JSON object is nobody's event, and a field of the wrong type reads as empty rather than throwing.

export type Json = Record<string, unknown>;

/** A frame as a JSON object (or array), or null for anything else: not JSON, a scalar, null. */
export function jsonFrame(data: string): Json | null {
  try {
    const parsed: unknown = JSON.parse(data);
    return parsed && typeof parsed === 'object' ? (parsed as Json) : null;
  } catch {
    return null;
  }
}

/** A string, or '' for anything else. */
export const text = (value: unknown): string => (typeof value === 'string' ? value : '');

/** The object under `name`, or {} when there is none. */
export const field = (message: Json, name: string): Json => {
  const value = message[name];
  return value && typeof value === 'object' ? (value as Json) : {};
};
