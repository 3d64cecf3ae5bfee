import type { AgentVariable } from './agent-variable.types.js';
import { screeningSection } from './screening.js';
import { asPromptData, asSpokenWords, renderTemplate, variablesOf, type TemplateView } from './template-language.js';

/**
 * What one conversation knows of whom it is with: the call (none for a typed conversation), the
 * contact, the program, the variables, the time it started. Built once when the conversation
 * starts and stored with it (conversations.context), so a transcript reads with what the agent
 * knew; every template of the agent is rendered from it, and it is what a tool the agent calls is
 * told of the call (toolRequestContext).
 */
export interface CallContext {
  agentId: string;
  conversationId: string | null;
  call: { id: string; direction: 'inbound' | 'outbound'; from: string | null; to: string | null } | null;
  contact: { id: string | null; name: string | null; phone: string | null; timeZone: string | null; attributes: Record<string, unknown> } | null;
  program: { id: string; name: string } | null;
  executionId: string | null;
  organization: { name: string };
  agent: { name: string };
  /** Every variable the agent's templates had, with the value used (given, from the contact, the execution, or the default). */
  variables: Record<string, string>;
  /** When the conversation started (ISO 8601), and that moment on the contact's clock. */
  now: string;
  localTime: string;
  /** On an outbound call: the line the agent answers an automated call screener with (rendered); null or absent otherwise. */
  screening?: string | null;
}

/** Where a conversation's variables come from, most specific first (resolveVariables). */
export interface VariableSources {
  /** Given with the test message, the conversation, or the message. */
  given?: Record<string, string> | null;
  /** The contact's attributes: a variable takes the attribute of its name. */
  attributes?: Record<string, unknown> | null;
  /** The execution's `variables`, the same for every contact. */
  execution?: Record<string, string> | null;
}

/** The names an agent's templates use without declaring them, then the declared ones, each once. */
export function templateVariables(agent: { instructions: string; policy: string | null; firstMessage: string | null; variables: AgentVariable[] }): string[] {
  const used = [...variablesOf(agent.instructions), ...variablesOf(agent.policy), ...variablesOf(agent.firstMessage)];
  return [...new Set([...agent.variables.map((variable) => variable.name), ...used])];
}

/** The names an agent's templates use that it does not declare: they can have no default. */
export function undeclaredVariables(agent: Parameters<typeof templateVariables>[0]): string[] {
  const declared = new Set(agent.variables.map((variable) => variable.name));
  return templateVariables(agent).filter((name) => !declared.has(name));
}

function attributeValue(value: unknown): string | null {
  if (value === null || value === undefined) return null;
  return typeof value === 'string' ? value : typeof value === 'object' ? JSON.stringify(value) : String(value);
}

/**
 * Each variable of the agent with its value: given, else the contact's attribute of that name, else
 * the execution's, else the agent's default. `missing` names those with none of the four.
 */
export function resolveVariables(
  agent: Parameters<typeof templateVariables>[0],
  sources: VariableSources,
): { values: Record<string, string>; missing: string[] } {
  const defaults = new Map(agent.variables.map((variable) => [variable.name, variable.default ?? null]));
  const values: Record<string, string> = {};
  const missing: string[] = [];
  for (const name of templateVariables(agent)) {
    const value =
      sources.given?.[name] ??
      (sources.attributes && Object.hasOwn(sources.attributes, name) ? attributeValue(sources.attributes[name]) : null) ??
      sources.execution?.[name] ??
      defaults.get(name) ??
      null;
    if (value === null) missing.push(name);
    else values[name] = value;
  }
  // Values given for names the agent does not use are kept: a tool of the agent may want them.
  for (const [name, value] of Object.entries(sources.given ?? {})) if (!(name in values)) values[name] = value;
  return { values, missing };
}

/** `at` on the contact's clock, as a person says it (e.g. "Monday, December 21, 2026 at 9:30 AM EST"); UTC without a zone. */
export function localTime(at: Date, timeZone: string | null): string {
  const zone = timeZone ?? 'UTC';
  try {
    return new Intl.DateTimeFormat('en-US', { timeZone: zone, dateStyle: 'full', timeStyle: 'short' }).format(at) + ` (${zone})`;
  } catch {
    return new Intl.DateTimeFormat('en-US', { timeZone: 'UTC', dateStyle: 'full', timeStyle: 'short' }).format(at) + ' (UTC)';
  }
}

function object(entries: [string, TemplateView | string | boolean | null | undefined][]): TemplateView {
  const view = Object.create(null) as TemplateView;
  for (const [key, value] of entries) if (value !== null && value !== undefined) view[key] = value;
  return view;
}

/**
 * The view templates are rendered from: objects without prototypes (so no name reaches
 * `constructor` or another inherited property), every leaf a string or a boolean (so a section
 * never iterates or calls anything).
 */
export function templateView(context: CallContext): TemplateView {
  const attributes = Object.entries(context.contact?.attributes ?? {}).map(([key, value]): [string, string | boolean | null] => [
    key,
    typeof value === 'boolean' ? value : attributeValue(value),
  ]);
  return object([
    ...Object.entries(context.variables),
    [
      'contact',
      object([
        ['name', context.contact?.name],
        ['phone', context.contact?.phone],
        ['timeZone', context.contact?.timeZone],
        ['localTime', context.localTime],
        ['attributes', object(attributes)],
      ]),
    ],
    ['program', object([['name', context.program?.name]])],
    [
      'call',
      object([
        ['direction', context.call?.direction],
        ['from', context.call?.from],
        ['to', context.call?.to],
      ]),
    ],
    ['agent', object([['name', context.agent.name]])],
    ['organization', object([['name', context.organization.name]])],
    ['now', context.now],
  ]);
}

/** An agent's prompt for one conversation. */
export interface RenderedPrompt {
  /** The instructions as the model reads them, values quoted as data. */
  instructions: string;
  /** The policy as the model reads it, values quoted as data. */
  policy: string | null;
  /** The policy as a reply would repeat it: its values as words, and (on a line after) as the model read them, quoted. What redaction and the guards look for. */
  guardPolicy: string | null;
  /** Whether a value was filled in (the prompt then says that quoted values are data). */
  filled: boolean;
}

/** The agent's instructions and policy as this conversation's model reads them, and the policy its guards look for. */
export function renderedPrompt(agent: { instructions: string; policy: string | null }, context: CallContext | null): RenderedPrompt {
  if (!context) return { instructions: agent.instructions, policy: agent.policy, guardPolicy: agent.policy, filled: false };
  const view = templateView(context);
  const rendered = renderTemplate(agent.instructions, view, asPromptData);
  const instructions = context.screening ? `${rendered}\n\n${screeningSection(context.screening)}` : rendered;
  const policy = agent.policy ? renderTemplate(agent.policy, view, asPromptData) : null;
  const spoken = agent.policy ? renderTemplate(agent.policy, view, asSpokenWords) : null;
  return {
    instructions,
    policy,
    guardPolicy: spoken !== null && spoken !== policy ? `${spoken}\n${policy}` : spoken,
    filled: instructions !== agent.instructions || policy !== agent.policy,
  };
}

/** A line the caller hears, rendered from a template (values as plain words). */
export function renderedLine(template: string, context: CallContext): string {
  return renderTemplate(template, templateView(context), asSpokenWords).replace(/\s+/g, ' ').trim();
}

/**
 * What a tool the agent calls is told of the call, besides its arguments (the HTTP tools' request
 * body): the call, the contact, the conversation and the agent.
 */
export function toolRequestContext(context: CallContext) {
  return {
    call: context.call ? { id: context.call.id, direction: context.call.direction, from: context.call.from, to: context.call.to } : null,
    contact: context.contact
      ? { id: context.contact.id, name: context.contact.name, phone: context.contact.phone, attributes: context.contact.attributes }
      : null,
    conversationId: context.conversationId,
    agentId: context.agentId,
  };
}

/**
 * The conversation's context as `agent` reads it: on a call whose flow hands over to another
 * agent, that agent's own defaults fill the variables the conversation has no value for.
 */
export function contextFor(agent: Parameters<typeof templateVariables>[0] & { id: string; name: string }, context: CallContext | null): CallContext | null {
  if (!context || agent.id === context.agentId) return context;
  return { ...context, agentId: agent.id, agent: { name: agent.name }, variables: resolveVariables(agent, { given: context.variables }).values };
}
