import { createRequire } from 'node:module';
import type * as AwesomePhonenumber from 'awesome-phonenumber';

// libphonenumber's metadata (awesome-phonenumber, Google's own library compiled), on first use: most
// numbers never need it.
let lib: typeof AwesomePhonenumber | undefined;
/** The country calling codes libphonenumber knows: ITU's codes are prefix-free, so a number has at most one. */
let callingCodes: ReadonlySet<string> | undefined;

/** A 0 in the second to fourth digit: the only numbers that may have a 0 right after their country code. */
const ZERO_AFTER_CODE = /^\+\d{1,3}0/;

/**
 * The one form of an E.164 number that the do-not-call list and contacts store and compare. A
 * national trunk 0 written after the country code (`+44 0 20 7123 4567`, as numbers are often
 * copied from a national form) is dropped where the country's numbering plan dials it as a trunk
 * prefix, as libphonenumber's metadata says, and kept where it is part of the number (Italy:
 * `+39 06 …`). Any other number is kept as written. Only a number with a 0 right after its country
 * code is parsed (tens of microseconds); every other one costs a lookup, so a 10,000-row import of
 * `+1703…` numbers is not 10,000 parses.
 */
export function phoneKey(e164: string): string {
  if (!ZERO_AFTER_CODE.test(e164)) return e164;
  lib ??= createRequire(import.meta.url)('awesome-phonenumber') as typeof AwesomePhonenumber;
  // Numbers at run time, whatever the typings say.
  callingCodes ??= new Set(lib.getSupportedCallingCodes().map(String));
  const code = [1, 2, 3].map((length) => e164.slice(1, 1 + length)).find((prefix) => callingCodes!.has(prefix));
  if (code === undefined || e164[1 + code.length] !== '0') return e164;
  return lib.parsePhoneNumber(e164).number?.e164 ?? e164;
}
