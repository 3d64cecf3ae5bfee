import type { Agent } from '../../agents/agent.entity.js';

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
