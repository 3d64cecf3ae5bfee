import type { Agent } from '../../agents/agent.entity.js';
import type { ChatMessage } from '../../agents/agent.ports.js';

/** The tool that hands the call to a person: one of the agent's transferDestinations, by name. */
export const TRANSFER_CALL_TOOL = 'transfer_call';

/** What the caller hears before the carrier dials the destination. */
export function transferLine(name: string): string {
  return `Connecting you to ${name}.`;
}

/** What the caller hears before a warm transfer's hold (then the carrier's hold music). */
export function holdLine(name: string): string {
  return `Please hold while I connect you to ${name}.`;
}

/** The transcript's line for a transfer the carrier took (stored as the agent's), with what a warm transfer's person was told. */
export function transferredLine(name: string, briefing: string | null = null): string {
  return briefing ? `[the call was transferred to ${name}; they were briefed: ${briefing}]` : `[the call was transferred to ${name}]`;
}

/** What a dial that reached no one means, by the carrier's word (Twilio's DialCallStatus). */
const UNREACHED: Record<string, { why: string; line: (name: string) => string }> = {
  busy: { why: 'the line was busy', line: (name) => `I'm sorry, ${name} is busy right now.` },
  'no-answer': { why: 'nobody answered', line: (name) => `I'm sorry, ${name} didn't answer.` },
  failed: { why: 'the call could not be placed', line: (name) => `I'm sorry, I couldn't reach ${name}.` },
  canceled: { why: 'the call was cancelled before anyone answered', line: (name) => `I'm sorry, the call to ${name} didn't go through.` },
};
const unreached = (status: string) => UNREACHED[status] ?? { why: `the dial ended ${status}`, line: (name: string) => `I'm sorry, I couldn't reach ${name}.` };

/** What the caller hears first when a transfer's dial reached no one and the agent is back. */
export function returnedLine(name: string, dialStatus: string): string {
  return `${unreached(dialStatus).line(name)} I'm back with you: how else can I help?`;
}

/** A batch call's transcript line (the agent's, which its model reads with the turns) for a transfer that gave the caller back. */
export function returnedNote(name: string, dialStatus: string): string {
  return `[the transfer to ${name} failed: ${unreached(dialStatus).why} (dial status ${dialStatus}); the caller is back with the agent]`;
}

/**
 * What the agent's model is told, after its instructions, when a transfer gave the caller back: this
 * call so far (its transcript), to whom the transfer went, how the dial ended, and why.
 */
export function returnedSection(soFar: ChatMessage[], name: string, dialStatus: string): string {
  const lines = soFar.map((message) => `${message.role === 'user' ? 'Caller' : 'Agent'}: ${message.content}`).join('\n');
  return (
    `\n\nThis call so far:\n${lines}\n\n` +
    `Earlier in this call you transferred the caller to ${name}, but the transfer failed: ${unreached(dialStatus).why} (the carrier's dial status: ${dialStatus}). ` +
    `The caller is back with you and has just been told so. Go on helping them; transfer again only if they ask.`
  );
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
      'Hand the call to a person: the caller hears "Connecting you to <name>", then is connected and you leave the call; ' +
      'if no one answers there, the caller comes back to you and you are told why. ' +
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
