import type { Agent } from '../../agents/agent.entity.js';
import type { CriterionOutcome } from '../../agents/agent.types.js';
import { redactPolicy } from '../../agents/prompt.js';
import type { CallContext } from '../../agents/templates/call-context.js';
import type { ModelTool } from '../../models/model.types.js';
import type { ToolCallRecord } from '../../tools/tool-call.store.js';
import type { AgentToolChoice, ToolSession } from '../../tools/tool-session.types.js';
import { SEND_DIGITS_TOOL, sendDigitsEffect, sendDigitsTool } from '../keypad/send-digits-tool.js';
import { transferCallTool } from '../transfer/transfer-tool.js';

/** A tool the agent may call on the phone, its parameters as JSON Schema (each provider wraps it its way). */
export interface CallTool {
  name: string;
  description: string;
  parameters: { type: 'object'; properties: Record<string, Record<string, unknown>>; required: string[] };
}

/** The opt-out tool's name: the person asked not to be called again. */
export const OPT_OUT_TOOL = 'opt_out';

/** The agent's tools on the phone: hang up, record a resolution (one of its criteria, when it has some), opt the person out, press keys, and transfer (when it has destinations). */
export function callTools(agent: Agent): CallTool[] {
  const labels = agent.resolutionCriteria.map((criterion) => criterion.label);
  const transfer = transferCallTool(agent);
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
    sendDigitsTool,
    ...(transfer ? [transfer] : []),
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
  /** Keys to press as touch tones into the call's audio (send_digits, checked); the model listens on rather than being asked to speak. */
  digits: string | null;
}

function text(value: unknown): string {
  return typeof value === 'string' ? value : '';
}

/**
 * One call tool, the same in every voice pipeline (speech-to-speech and streaming): `end_call` and
 * `opt_out` end the call after what is being said, `send_digits` presses keys, `reach_resolution` records one of the agent's
 * criteria (any label when it has none; its explanation redacted of the hidden policy), and any other
 * name is an error the model is told.
 */
/** `policy`: the policy as rendered for the call (what the redaction looks for); the agent's own when not given. `callerSaid`: what the caller said, never judged as the policy (prompt.ts, saysPolicy). */
export function callToolEffect(
  agent: Agent | null,
  name: string,
  args: Record<string, unknown>,
  policy: string | null = agent?.policy ?? null,
  callerSaid: readonly string[] = [],
): ToolEffect {
  const none = { endsCall: false, resolution: null, optOut: false, digits: null };
  if (name === SEND_DIGITS_TOOL) return { ...none, ...sendDigitsEffect(args) };
  if (name === 'end_call') return { ...none, output: { ending: true }, endsCall: true };
  if (name === OPT_OUT_TOOL) return { ...none, output: { optedOut: true, ending: true }, endsCall: true, optOut: true };
  if (name !== 'reach_resolution') return { ...none, output: { error: `unknown tool ${name}` } };
  const label = text(args.label).trim().slice(0, 128);
  const known = agent?.resolutionCriteria.map((criterion) => criterion.label) ?? [];
  if (!label || (known.length > 0 && !known.includes(label))) {
    return { ...none, output: { recorded: false, error: known.length > 0 ? `label must be one of: ${known.join(', ')}` : 'label is required' } };
  }
  const explanation = redactPolicy(text(args.explanation).slice(0, 2000) || 'Reached on the call', policy, callerSaid);
  return { ...none, output: { recorded: true }, resolution: { label, met: true, explanation } };
}

/** The organization's tools an agent may call on the phone (ToolRunner and ToolCallStore, composed in services.ts). */
export interface CallToolsPort {
  toolsFor(agent: AgentToolChoice, session: ToolSession): Promise<ModelTool[]>;
  store(record: ToolCallRecord): Promise<unknown>;
}

/**
 * The agent's own tools (HTTP and MCP) for one call, beside the built-in ones: their calls are
 * told of the call and its contact, checked for the policy against what the caller said, and
 * recorded through `queue` (the call's one queue of writes), so each is stored after the caller's
 * turn it answers and before the reply. A failure to read them is logged and the call goes on with
 * the built-in tools only.
 */
export async function callUserTools(
  port: CallToolsPort | undefined,
  agent: Agent,
  call: {
    organizationId: string;
    callId: string;
    /** Read when a tool is called (a prepared session's tools are made before the call's conversation is opened). */
    conversationId: string | null;
    context: CallContext | null;
    guardPolicy: string | null;
    callerSaid: () => readonly string[];
  },
  queue: (work: () => Promise<void>) => void,
  logger: { warn(details: object, message: string): void },
): Promise<ModelTool[]> {
  if (!port || (agent.toolIds.length === 0 && agent.mcpTools.length === 0)) return [];
  try {
    return await port.toolsFor(agent, {
      organizationId: call.organizationId,
      agentId: agent.id,
      get conversationId() {
        return call.conversationId;
      },
      callId: call.callId,
      context: call.context,
      guardPolicy: call.guardPolicy,
      callerSaid: call.callerSaid,
      onRecord: (record) => queue(async () => void (await port.store(record))),
    });
  } catch (error) {
    logger.warn(
      { callId: call.callId, err: error instanceof Error ? error.message : String(error) },
      'the agent’s tools could not be read; the call goes on with the built-in ones',
    );
    return [];
  }
}

/** A tool as a speech-to-speech session declares it. */
export function declared(tool: ModelTool): CallTool {
  return { name: tool.name, description: tool.description, parameters: tool.parameters as CallTool['parameters'] };
}
