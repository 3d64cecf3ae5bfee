import type { AutoPauseRule } from '../program.types.js';

/** nodeCounts with each of these nodes (reached by a contact for the first time) counted once more. */
export function addReached(nodeCounts: Record<string, number>, reachedNodeIds: readonly string[]): Record<string, number> {
  const next = { ...nodeCounts };
  for (const nodeId of new Set(reachedNodeIds)) next[nodeId] = (next[nodeId] ?? 0) + 1;
  return next;
}

/** A rule whose node was just counted and whose count is now at its threshold (or past it). */
export function trippedRule(rules: readonly AutoPauseRule[], nodeCounts: Record<string, number>, reachedNodeIds: readonly string[]): AutoPauseRule | undefined {
  return rules.find((rule) => reachedNodeIds.includes(rule.nodeId) && (nodeCounts[rule.nodeId] ?? 0) >= rule.threshold);
}

/** The counts a resume leaves: each rule with resetOnResume starts its node's count again. */
export function countsAfterResume(rules: readonly AutoPauseRule[], nodeCounts: Record<string, number>): Record<string, number> {
  const next = { ...nodeCounts };
  for (const rule of rules) if (rule.resetOnResume) next[rule.nodeId] = 0;
  return next;
}
