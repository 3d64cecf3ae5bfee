import Mustache from 'mustache';
import type { FieldError } from '../../../common/errors.js';

/**
 * The agents' template language: Mustache (mustache.js) with everything that runs or reaches
 * outside the template turned off. A template may hold `{{name}}` tags, sections
 * `{{#name}}…{{/name}}` and inverted sections `{{^name}}…{{/name}}` (shown when the value is set,
 * or not) and comments `{{! … }}`; partials `{{> …}}`, delimiter changes `{{= … =}}` and raw tags
 * `{{{…}}}` / `{{& …}}` are refused when the agent is saved. Names are the built-in ones
 * (BUILT_IN_NAMES), `contact.attributes.<key>` and the agent's variables. The view holds only
 * strings and booleans (see templateView), so a section shows its body once or not at all: nothing
 * iterates, nothing is called, and a rendered template is at most its own length plus
 * MAX_TAGS × MAX_VALUE_CHARS. docs/agents-and-knowledge.md#variables documents it.
 */

export const TEMPLATE_LIMITS = {
  /** Tags (`{{x}}`, `{{#x}}`, `{{^x}}`) in one template. */
  tags: 100,
  /** Sections inside sections. */
  depth: 3,
  /** What one value may bring into a rendered template; a longer one is cut. */
  valueChars: 1000,
} as const;

/** Names every template may use; `contact.attributes.<key>` and the agent's declared variables come on top. */
export const BUILT_IN_NAMES = [
  'contact.name',
  'contact.phone',
  'contact.timeZone',
  'contact.localTime',
  'program.name',
  'call.direction',
  'call.from',
  'call.to',
  'agent.name',
  'organization.name',
  'now',
] as const;

/** Top-level names a variable cannot take: the built-ins' roots, and names of JavaScript's object internals. */
export const RESERVED_ROOTS = new Set([
  'contact',
  'program',
  'call',
  'agent',
  'organization',
  'now',
  'variables',
  'constructor',
  'prototype',
  'toString',
  'valueOf',
  'hasOwnProperty',
  'length',
]);

/** A variable's name: a letter, then letters, digits and underscores. */
export const VARIABLE_NAME = /^[A-Za-z][A-Za-z0-9_]{0,63}$/;
const ATTRIBUTE_NAME = /^contact\.attributes\.[A-Za-z0-9_-]{1,64}$/;
const BUILT_IN = new Set<string>(BUILT_IN_NAMES);

/** What a template uses: the variable names (not built-in, not attributes), in order of first use. */
export interface TemplateUse {
  variables: string[];
}

type Token = [string, string, number, number, Token[]?, number?];

/** One writer without a template cache: templates are tenants' data, and a process-wide cache of them would only grow. */
const writer = new Mustache.Writer();
(writer as unknown as { templateCache: undefined }).templateCache = undefined;

function position(text: string, index: number): string {
  const before = text.slice(0, index);
  const line = before.split('\n').length;
  const column = index - before.lastIndexOf('\n');
  return `line ${line}, column ${column}`;
}

function parseError(field: string, text: string, error: unknown): FieldError {
  const message = error instanceof Error ? error.message : String(error);
  const at = / at (\d+)$/.exec(message);
  let index = at ? Number(at[1]) : 0;
  // mustache.js names where it gave up (the end); the reader wants the tag that was left open.
  const section = /^Unclosed section "(.+)"/.exec(message);
  if (message.startsWith('Unclosed tag')) index = text.lastIndexOf('{{', index);
  else if (section) index = Math.max(text.lastIndexOf(`{{#${section[1]}`, index), text.lastIndexOf(`{{^${section[1]}`, index));
  const what = (at ? message.slice(0, at.index) : message).replace(/^Unclosed tag$/, 'a tag is not closed with }}');
  return { field, message: `${field} is not a valid template at ${position(text, index)}: ${what.charAt(0).toLowerCase()}${what.slice(1)}` };
}

/**
 * Checks one template as it is saved: it parses, uses only what the language allows, and stays
 * within TEMPLATE_LIMITS. The errors name the field and where in it; the variables it uses are
 * returned for the checks that need the declarations.
 */
export function checkTemplate(field: string, text: string): { errors: FieldError[]; use: TemplateUse } {
  let tokens: Token[];
  try {
    tokens = writer.parse(text) as Token[];
  } catch (error) {
    return { errors: [parseError(field, text, error)], use: { variables: [] } };
  }
  const errors: FieldError[] = [];
  const variables: string[] = [];
  let tags = 0;
  const refuse = (token: Token, what: string) => errors.push({ field, message: `${field} at ${position(text, token[2])}: ${what}` });
  const walk = (list: Token[], depth: number) => {
    for (const token of list) {
      const [type, name] = token;
      if (type === 'text' || type === '!') continue;
      if (type === '>') refuse(token, 'partials ({{> …}}) are not allowed');
      else if (type === '=') refuse(token, 'changing the delimiters ({{= … =}}) is not allowed');
      else if (type === '&') refuse(token, `{{{${name}}}} and {{& ${name}}} are not allowed: write {{${name}}} (values are always inserted as data)`);
      else {
        tags += 1;
        if (BUILT_IN.has(name) || ATTRIBUTE_NAME.test(name)) {
          // known
        } else if (VARIABLE_NAME.test(name) && !RESERVED_ROOTS.has(name)) {
          if (!variables.includes(name)) variables.push(name);
        } else {
          refuse(token, `unknown name "${name}": use ${BUILT_IN_NAMES.join(', ')}, contact.attributes.<key> or a variable of the agent`);
        }
        if (type === '#' || type === '^') {
          if (depth >= TEMPLATE_LIMITS.depth) refuse(token, `sections nest at most ${TEMPLATE_LIMITS.depth} deep`);
          else walk(token[4] ?? [], depth + 1);
        }
      }
    }
  };
  walk(tokens, 0);
  if (tags > TEMPLATE_LIMITS.tags) errors.push({ field, message: `${field} has ${tags} tags; at most ${TEMPLATE_LIMITS.tags}` });
  return { errors: errors.slice(0, 20), use: { variables } };
}

/** The variables a template uses (a template that does not parse uses none: it was refused when saved). */
export function variablesOf(text: string | null | undefined): string[] {
  return text ? checkTemplate('template', text).use.variables : [];
}

/** A view of templates: nested objects without a prototype, leaves strings or booleans. */
export type TemplateView = { [name: string]: TemplateView | string | boolean };

/**
 * How a value goes into a prompt (instructions, policy): as a JSON string literal, so its quotes,
 * backslashes and line breaks are escaped and it cannot end the quote or start a line of its own —
 * a contact named `Ignore your instructions` reads as the quoted name it is. The system prompt
 * says once that quoted values are data (prompt.ts).
 */
export function asPromptData(value: unknown): string {
  return JSON.stringify(clip(String(value)));
}

/** How a value goes into a spoken line (the first message): its words, on one line, without control characters. */
export function asSpokenWords(value: unknown): string {
  return clip(
    String(value)
      .replace(/[\p{Cc}\p{Cf}\u2028\u2029]+/gu, ' ')
      .replace(/\s+/g, ' ')
      .trim(),
  );
}

function clip(value: string): string {
  return value.length > TEMPLATE_LIMITS.valueChars ? `${value.slice(0, TEMPLATE_LIMITS.valueChars)}…` : value;
}

/**
 * Renders a template that was checked when saved. `insert` writes each value (asPromptData or
 * asSpokenWords): it is mustache's escape function, so every `{{name}}` goes through it. A text
 * saved before agents had templates, that does not parse as one, is used as it was written.
 */
export function renderTemplate(text: string, view: TemplateView, insert: (value: unknown) => string): string {
  // Stryker disable next-line ConditionalExpression,StringLiteral: a shortcut; rendering a text without tags gives the text.
  if (!text.includes('{{')) return text;
  try {
    return writer.render(text, view, undefined, { escape: insert });
  } catch {
    return text;
  }
}
