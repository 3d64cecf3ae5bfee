import { performance } from 'node:perf_hooks';
import type { CallTurnLatency, CallTurnTiming } from '../../telephony/call-latency.types.js';

/** A long call keeps the timings of its first turns only (a turn every few seconds: about half an hour of them). */
export const MAX_RECORDED_TURNS = 500;

const hundredths = (ms: number) => Math.round(ms * 100) / 100;

/**
 * The stamps of a call's agent turns, taken by the bridge at the stage boundaries: a turn starts
 * when the provider says the caller stopped speaking (or when we ask for a reply ourselves, after a
 * tool call), its provider share ends when the first audio of a reply reaches us, and its gateway
 * share when that audio has been written to the carrier's socket. Durations are monotonic
 * (performance.now()); only the end of speech is also kept as a wall-clock time.
 */
export class TurnClock {
  private pending: { at: number; wallAt: number | null; stale: Set<string> } | null = null;
  private lastAudioResponse = '';
  private readonly timings: CallTurnTiming[] = [];
  private firstAudioMs: number | null = null;

  constructor(private readonly observe: (turn: CallTurnTiming) => void = () => undefined) {}

  /**
   * A turn starts: the caller stopped speaking (`fromSpeech`), or we asked for a reply. Audio of the
   * reply in progress, or of the last one heard, still arriving after this belongs to before it.
   */
  begin(fromSpeech: boolean, activeResponse: string | null): void {
    const stale = new Set([activeResponse ?? '', this.lastAudioResponse].filter(Boolean));
    this.pending = { at: performance.now(), wallAt: fromSpeech ? Date.now() : null, stale };
  }

  /** An agent audio delta arrived (at `receivedAt`, now unless said): its arrival time when it is the first of the pending turn's reply, else null. */
  audio(responseId: string, receivedAt = performance.now()): number | null {
    this.lastAudioResponse = responseId || this.lastAudioResponse;
    if (!this.pending || this.pending.stale.has(responseId)) return null;
    return receivedAt;
  }

  /** That first delta was written to the carrier's socket: the turn is complete. */
  sent(receivedAt: number): void {
    const pending = this.pending;
    if (!pending) return;
    this.pending = null;
    const providerMs = hundredths(receivedAt - pending.at);
    const gatewayMs = hundredths(performance.now() - receivedAt);
    const turn: CallTurnTiming = {
      endOfSpeechAt: pending.wallAt === null ? null : new Date(pending.wallAt).toISOString(),
      totalMs: hundredths(providerMs + gatewayMs),
      providerMs,
      gatewayMs,
    };
    if (this.timings.length < MAX_RECORDED_TURNS) this.timings.push(turn);
    this.observe(turn);
  }

  /** The first message's first audio was written to the carrier, `ms` after the call was answered (once). */
  firstAudio(ms: number): void {
    this.firstAudioMs ??= hundredths(Math.max(0, ms));
  }

  /** The call's record, or null when no agent turn was completed and no first message heard. */
  summary(provider: string): CallTurnLatency | null {
    if (this.timings.length === 0 && this.firstAudioMs === null) return null;
    const sorted = this.timings.map((turn) => turn.totalMs).sort((a, b) => a - b);
    return {
      provider,
      turns: [...this.timings],
      p50Ms: sorted.length ? sorted[Math.ceil(sorted.length / 2) - 1]! : 0,
      maxMs: sorted.length ? sorted[sorted.length - 1]! : 0,
      firstAudioMs: this.firstAudioMs,
    };
  }
}
