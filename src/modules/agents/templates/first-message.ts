import { FirstMessageMode } from '../agent.enums.js';
import { renderedLine, type CallContext } from './call-context.js';

/**
 * What an agent says first when its firstMessage is null, as templates: on an outbound call it names
 * the contact (when known) and the business; on an inbound call it offers help, as a receptionist does.
 */
export const DEFAULT_FIRST_MESSAGES = {
  outbound: 'Hello{{#contact.name}} {{contact.name}}{{/contact.name}}, this is {{agent.name}} calling from {{organization.name}}.',
  inbound: 'Hello, this is {{agent.name}}. How can I help you?',
} as const;

/** The line the agent opens the call with, rendered for this call; null when it waits for the caller. */
export function firstMessageFor(agent: { firstMessage: string | null; firstMessageMode: FirstMessageMode }, context: CallContext): string | null {
  if (agent.firstMessageMode === FirstMessageMode.wait_for_caller) return null;
  const template = agent.firstMessage ?? DEFAULT_FIRST_MESSAGES[context.call?.direction === 'outbound' ? 'outbound' : 'inbound'];
  const line = renderedLine(template, context).slice(0, 2000);
  return line || null;
}
