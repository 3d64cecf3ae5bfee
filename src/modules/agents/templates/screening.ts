import type { FieldError } from '../../../common/errors.js';
import { checkTemplate } from './template-language.js';

/** The longest screening response a program may set, in characters (some 30 seconds spoken). */
export const SCREENING_RESPONSE_MAX = 500;

/**
 * What an outbound call's agent answers a call screener with when its program sets none: who calls,
 * from where, for whom, and why when the call has a `reason` variable (given with the call, a
 * contact attribute or the execution's).
 */
export const DEFAULT_SCREENING_RESPONSE =
  'This is {{agent.name}} from {{organization.name}}{{#contact.name}}, calling for {{contact.name}}{{/contact.name}}{{#reason}}, about {{reason}}{{/reason}}.';

/** A screening response parses within the template language's limits. */
export function screeningResponseErrors(text: string | null | undefined): FieldError[] {
  return typeof text === 'string' ? checkTemplate('screeningResponse', text).errors : [];
}

/**
 * The section an outbound call's instructions end with. Screeners (Google's Call Screen, Apple's
 * Call Screening, a carrier's or an assistant's) say so in words, and no carrier reports one, so
 * the model tells from what it hears.
 */
export function screeningSection(response: string): string {
  return [
    'If an automated call screener or assistant answers instead of the person (it asks who is calling and why, or says the call is being screened or recorded for the person), do not start the conversation with it: answer its question with exactly this line, then wait quietly for the person to come on the line:',
    JSON.stringify(response),
  ].join('\n');
}
