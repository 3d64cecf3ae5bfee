import { RE2JS } from 're2js';

/**
 * Regular expressions a tenant writes (a JSON Schema's `pattern` and `patternProperties`) run on RE2
 * (re2js, a pure JavaScript port), whose matching time is linear in the input: V8's backtracking
 * engine takes exponential time on patterns such as `^(a+)+$`, on the main thread. The pattern is
 * written in JavaScript's syntax and translated; what RE2 cannot express (lookarounds,
 * backreferences, repeat counts over 1000) is refused when the schema is saved.
 */

/** What ajv's `code.regExp` engine hands out: ajv calls `test`, and keys its cache of patterns by `toString`. */
export interface LinearRegExp {
  test(input: string): boolean;
  toString(): string;
}

/**
 * The largest compiled pattern accepted (RE2's instructions; a repeat of a character class costs about
 * one per count): when the fast automaton gives up, the time to match is this times the input's length.
 */
export const MAX_PROGRAM_SIZE = 1000;

function compile(pattern: string, flags: string): RE2JS {
  const inline = flags.includes('i') ? '(?i)' : '';
  return RE2JS.compile(inline + RE2JS.translateRegExp(pattern));
}

/** Why a pattern cannot run on the linear-time engine, or null when it can. */
export function linearPatternProblem(pattern: string): string | null {
  try {
    // Stryker disable next-line StringLiteral: the flags do not change whether a pattern compiles
    const size = compile(pattern, '').programSize();
    return size > MAX_PROGRAM_SIZE ? `it compiles to ${size} instructions; at most ${MAX_PROGRAM_SIZE} (use smaller repeat counts)` : null;
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    // Stryker disable next-line Regex: the prefix is only ever at the start
    return message.replace(/^error parsing regexp: /, '');
  }
}

/** The pattern compiled on RE2; throws when it cannot be (checked at save with linearPatternProblem). */
export function linearRegExp(pattern: string, flags = ''): LinearRegExp {
  const compiled = compile(pattern, flags);
  return { test: (input: string) => compiled.test(input), toString: () => `/${pattern}/${flags}` };
}
