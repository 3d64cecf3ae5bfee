import { conditionHolds, parseEdgeCondition, type NodeEvent } from '../programs/edge-condition.js';
import type { FlowEdge, FlowNode } from '../programs/call-flow.types.js';
import { FlowNodeType } from '../programs/program.enums.js';
import { WORDS, type VoiceAction } from './voice-actions.js';

export interface WalkContext {
  nodes: FlowNode[];
  edges: FlowEdge[];
  /** The Twilio voice of an agent (or the default), for say and gather. */
  voiceOf: (agentId: string | null | undefined) => string | null;
  /** Whether the agent speaks speech-to-speech (its ask node streams the call's audio). */
  isSts: (agentId: string | null | undefined) => boolean;
  machine: boolean;
}

export interface WalkResult {
  actions: VoiceAction[];
  reached: string[];
  /** The ask node the call now listens at; null when the walk hung up or transferred. */
  waitingAt: string | null;
  /** The walk reached an opt_out node: the caller's number is to go on the do-not-call list. */
  optOut?: boolean;
}

/**
 * The edge taken from `nodeId` on `event`: the first whose condition holds, else the first without
 * a condition; null when neither.
 */
export function nextNode(context: Pick<WalkContext, 'nodes' | 'edges'>, nodeId: string, event: NodeEvent): string | null {
  const known = new Set(context.nodes.map((node) => node.id));
  const out = context.edges.filter((edge) => edge.from === nodeId && known.has(edge.to));
  const matched = out.find((edge) => {
    const condition = edge.condition ? parseEdgeCondition(edge.condition) : null;
    return condition !== null && conditionHolds(condition, event);
  });
  return (matched ?? out.find((edge) => !edge.condition))?.to ?? null;
}

/** Whether any edge out of the node waits for the agent's resolution (so it is judged only then). */
export function needsResolution(context: Pick<WalkContext, 'edges'>, nodeId: string): boolean {
  return context.edges.some((edge) => edge.from === nodeId && (edge.condition === 'resolved' || edge.condition === 'unresolved'));
}

/**
 * Walks from `from` (included) until the call must listen (ask), leaves (transfer, end,
 * voicemail) or has nowhere to go (hang up). At most 50 steps, so a cycle of say nodes ends.
 */
export function walkFrom(context: WalkContext, from: string | null, event: NodeEvent): WalkResult {
  const nodes = new Map(context.nodes.map((node) => [node.id, node]));
  const actions: VoiceAction[] = [];
  const reached: string[] = [];
  let current = from;
  for (let step = 0; current && step < 50; step++) {
    const node = nodes.get(current);
    if (!node) break;
    reached.push(node.id);
    switch (node.type) {
      case FlowNodeType.say:
        if (node.label) actions.push({ kind: 'say', text: node.label, voice: context.voiceOf(node.agentId) });
        break;
      case FlowNodeType.voicemail:
        // A person is not read the voicemail: the walk goes on past it. A machine hears it, then the walk goes on (to an end, or hangs up).
        if (context.machine && node.label) actions.push({ kind: 'say', text: node.label, voice: context.voiceOf(node.agentId) });
        break;
      case FlowNodeType.ask:
        if (context.isSts(node.agentId)) {
          actions.push({ kind: 'stream' });
          return { actions, reached, waitingAt: null };
        }
        actions.push({ kind: 'gather', prompt: node.label ?? null, voice: context.voiceOf(node.agentId) });
        return { actions, reached, waitingAt: node.id };
      case FlowNodeType.transfer:
        actions.push({ kind: 'dial', number: node.transferTo! });
        return { actions, reached, waitingAt: null };
      case FlowNodeType.end:
        actions.push({ kind: 'hangup' });
        return { actions, reached, waitingAt: null };
      case FlowNodeType.opt_out:
        // The confirmation is the node's label, else the engine's own words; then the call ends.
        actions.push({ kind: 'say', text: node.label?.trim() || WORDS.optOut, voice: context.voiceOf(node.agentId) }, { kind: 'hangup' });
        return { actions, reached, waitingAt: null, optOut: true };
      default:
        break;
    }
    current = nextNode(context, node.id, event);
  }
  actions.push({ kind: 'hangup' });
  return { actions, reached, waitingAt: null };
}

export { WORDS };
