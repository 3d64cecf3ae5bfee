import { createHash } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { FlowEdge, FlowNode } from '../call-flow.types.js';
import { FlowNodeType } from '../program.enums.js';
import { CALL_OUTCOMES, reachesNodes, type CallOutcome, type DialedOutcome, type CallRequest, type CallResult, type Dialer } from './dialer.js';

export type OutcomeWeights = Record<DialedOutcome, number>;

export const DEFAULT_OUTCOME_WEIGHTS: OutcomeWeights = { answered: 70, no_answer: 15, busy: 5, voicemail: 5, failed: 5 };

export interface SimulatedDialerOptions {
  /** Same seed, phone and attempt → same outcome, run after run. */
  seed?: string;
  /** How long each call takes, in milliseconds. */
  speedMs?: number;
  /** Relative weights of the outcomes (need not add up to 100). */
  weights?: Partial<OutcomeWeights>;
}

/** A number in [0, 1) from sha256(seed, phone, attempt). */
function draw(seed: string, phone: string, attempt: number): number {
  const digest = createHash('sha256').update(`${seed}\u0000${phone}\u0000${attempt}`).digest();
  return digest.readUInt32BE(0) / 2 ** 32;
}

/** The outcome `draw` lands on when the outcomes share [0, 1) by weight. */
export function pickOutcome(value: number, weights: OutcomeWeights): DialedOutcome {
  const total = CALL_OUTCOMES.reduce((sum, outcome) => sum + Math.max(0, weights[outcome]), 0);
  let edge = 0;
  for (const outcome of CALL_OUTCOMES) {
    edge += Math.max(0, weights[outcome]) / total;
    if (value < edge) return outcome;
  }
  return CALL_OUTCOMES.findLast((outcome) => weights[outcome] > 0) ?? 'failed';
}

/**
 * The nodes a call with this outcome reaches: from the start node (type `start`, else the
 * first node), each step takes the first edge whose condition is the outcome, else the first
 * edge without a condition; a node is never visited twice, so a cycle ends the walk.
 */
export function walkFlow(flow: { nodes: FlowNode[]; edges: FlowEdge[] } | null, outcome: CallOutcome): string[] {
  if (!flow || flow.nodes.length === 0) return [];
  const start = flow.nodes.find((node) => node.type === FlowNodeType.start) ?? flow.nodes[0];
  const known = new Set(flow.nodes.map((node) => node.id));
  const reached = [start.id];
  let current = start.id;
  for (;;) {
    const out = flow.edges.filter((edge) => edge.from === current && known.has(edge.to));
    const next = out.find((edge) => edge.condition === outcome) ?? out.find((edge) => !edge.condition);
    if (!next || reached.includes(next.to)) return reached;
    reached.push(next.to);
    current = next.to;
  }
}

/** Places no real call: outcomes are seeded and deterministic, so a campaign can be run and watched offline. */
export class SimulatedDialer implements Dialer {
  private readonly seed: string;
  private readonly speedMs: number;
  private readonly weights: OutcomeWeights;

  constructor(options: SimulatedDialerOptions = {}) {
    this.seed = options.seed ?? 'gateway';
    this.speedMs = options.speedMs ?? 200;
    this.weights = { ...DEFAULT_OUTCOME_WEIGHTS, ...options.weights };
  }

  /** What placeCall will answer, without the wait. */
  outcomeOf(phone: string, attempt: number): DialedOutcome {
    return pickOutcome(draw(this.seed, phone, attempt), this.weights);
  }

  async placeCall(call: CallRequest): Promise<CallResult> {
    if (this.speedMs > 0) await sleep(this.speedMs);
    const outcome = this.outcomeOf(call.phone, call.attempt);
    // A call that never connects reaches no node; a voicemail walks its branch (a voicemail node, if the flow has one).
    const reachedNodeIds = reachesNodes(outcome) ? walkFlow(call.flow, outcome) : [];
    // Answered calls last 30 s to 5 min, seeded like the outcome; a voicemail 20 s; the rest never connect.
    const talk = 30 + Math.floor(draw(this.seed, call.phone, -call.attempt) * 270);
    const durationSeconds = outcome === 'answered' ? talk : outcome === 'voicemail' ? 20 : 0;
    return { outcome, reachedNodeIds, durationSeconds };
  }
}
