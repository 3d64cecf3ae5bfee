import type { Agent } from '../../agents/agent.entity.js';
import type { CriterionOutcome } from '../../agents/agent.types.js';
import { redactPolicy } from '../../agents/prompt.js';

/** A tool the agent may call on the phone, its parameters as JSON Schema (each provider wraps it its way). */
export interface CallTool {
  name: string;
  description: string;
  parameters: { type: 'object'; properties: Record<string, Record<string, unknown>>; required: string[] };
}

/** The opt-out tool's name: the person asked not to be called again. */
export const OPT_OUT_TOOL = 'opt_out';

/** The agent's tools on the phone: hang up, record a resolution (one of its criteria, when it has some), and opt the person out. */
export function callTools(agent: Agent): CallTool[] {
  const labels = agent.resolutionCriteria.map((criterion) => criterion.label);
  return [
    {
      name: 'end_call',
      description: 'Hang up the phone call. Say goodbye first; the call ends once that has been heard.',
      parameters: { type: 'object', properties: { reason: { type: 'string' } }, required: [] },
    },
    {
      name: 'reach_resolution',
      description: 'Record that the conversation reached one of its resolution criteria.',
      parameters: {
        type: 'object',
        properties: { label: { type: 'string', ...(labels.length > 0 ? { enum: labels } : {}) }, explanation: { type: 'string' } },
        required: ['label'],
      },
    },
    {
      name: OPT_OUT_TOOL,
      description:
        'The person asked not to be called again (stop calling, remove me from your list). Their number is put on the do-not-call list ' +
        'and the call ends: say a short confirmation first, for example "Understood, we will not call you again. Goodbye."',
      parameters: { type: 'object', properties: { reason: { type: 'string' } }, required: [] },
    },
  ];
}

/** What a call tool does: what the model is told, and what the pipeline must do about it. */
export interface ToolEffect {
  output: Record<string, unknown>;
  /** The call ends once what the agent says now has been heard (end_call, opt_out). */
  endsCall: boolean;
  /** A resolution to record on the conversation. */
  resolution: CriterionOutcome | null;
  /** The person's number goes on the do-not-call list (opt_out). */
  optOut: boolean;
}

function text(value: unknown): string {
  return typeof value === 'string' ? value : '';
}

/**
 * One call tool, the same in every voice pipeline (speech-to-speech and streaming): `end_call` and
 * `opt_out` end the call after what is being said, `reach_resolution` records one of the agent's
 * criteria (any label when it has none; its explanation redacted of the hidden policy), and any other
 * name is an error the model is told.
 */
export function callToolEffect(agent: Agent | null, name: string, args: Record<string, unknown>): ToolEffect {
  const none = { endsCall: false, resolution: null, optOut: false };
  if (name === 'end_call') return { ...none, output: { ending: true }, endsCall: true };
  if (name === OPT_OUT_TOOL) return { ...none, output: { optedOut: true, ending: true }, endsCall: true, optOut: true };
  if (name !== 'reach_resolution') return { ...none, output: { error: `unknown tool ${name}` } };
  const label = text(args.label).trim().slice(0, 128);
  const known = agent?.resolutionCriteria.map((criterion) => criterion.label) ?? [];
  if (!label || (known.length > 0 && !known.includes(label))) {
    return { ...none, output: { recorded: false, error: known.length > 0 ? `label must be one of: ${known.join(', ')}` : 'label is required' } };
  }
  const explanation = redactPolicy(text(args.explanation).slice(0, 2000) || 'Reached on the call', agent?.policy ?? null);
  return { ...none, output: { recorded: true }, resolution: { label, met: true, explanation } };
}
