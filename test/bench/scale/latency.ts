// Latency of one request, sequential (one connection, keep-alive), after a warm-up: its p50 and p99 in ms.
import { performance } from 'node:perf_hooks';
import type { ApiClient } from '../client.js';

export function percentile(sorted: number[], share: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil(share * sorted.length) - 1)]!;
}

/** Times `count` GETs of `path` (each answered 200, or it throws), after `warmup` untimed ones. */
export async function latency(api: ApiClient, path: string, count: number, warmup = 5): Promise<{ p50: number; p99: number }> {
  for (let i = 0; i < warmup; i++) await api.get(path);
  const times: number[] = [];
  for (let i = 0; i < count; i++) {
    const started = performance.now();
    await api.get(path);
    times.push(performance.now() - started);
  }
  times.sort((a, b) => a - b);
  return { p50: percentile(times, 0.5), p99: percentile(times, 0.99) };
}
