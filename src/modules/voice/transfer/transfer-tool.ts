import type { Agent } from '../../agents/agent.entity.js';

/** The tool that hands the call to a person: one of the agent's transferDestinations, by name. */
export const TRANSFER_CALL_TOOL = 'transfer_call';

/** What the caller hears before the carrier dials the destination. */
export function transferLine(name: string): string {
  return `Connecting you to ${name}.`;
}

/** The transcript's line for a transfer the carrier took (stored as the agent's). */
export function transferredLine(name: string): string {
  return `[the call was transferred to ${name}]`;
}

/**
 * transfer_call as the model is offered it (a CallTool, listed by call-tools.ts) when the agent has
 * destinations: `destination` is an enum of their names, so the model cannot make up a number; each
 * destination's description tells it when to use which. None without destinations.
 */
export function transferCallTool(agent: Agent) {
  const destinations = agent.transferDestinations ?? [];
  if (destinations.length === 0) return null;
  const when = destinations.map((each) => `${each.name}${each.description ? `: ${each.description}` : ''}`).join('; ');
  return {
    name: TRANSFER_CALL_TOOL,
    description:
      'Hand the call to a person: the caller hears "Connecting you to <name>", then is connected and you leave the call. ' +
      `Use it when the caller asks for a person or needs what one of these can do: ${when}. Tell the caller first that you are transferring them.`,
    parameters: {
      type: 'object' as const,
      properties: {
        destination: { type: 'string', enum: destinations.map((each) => each.name), description: 'Whom to connect the caller to' },
      },
      required: ['destination'],
    },
  };
}
