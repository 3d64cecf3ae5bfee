import { performance } from 'node:perf_hooks';
import type { CallTurnLatency, CallTurnTiming } from '../../telephony/call-latency.types.js';
import { MAX_RECORDED_TURNS } from '../realtime/turn-latency.js';

const hundredths = (ms: number) => Math.round(ms * 100) / 100;

interface Pending {
  endOfSpeech: number;
  wallEndOfSpeech: number;
  turnEnded: number;
  replyId: number | null;
  modelAsked: number | null;
  firstChunk: number | null;
  audioArrived: number | null;
  /** Its reply was started at the recognizer's eager end of turn (adopt()). */
  eager: boolean;
}

/** When a reply started at an eager end of turn reached its stages, before its turn ended (performance.now()). */
export interface EagerStamps {
  firstChunk: number | null;
  audioArrived: number | null;
}

/**
 * The stamps of a streaming call's agent turns (performance.now()), taken at the stage boundaries:
 * the end of the caller's speech (where the recognizer says the last word ended, mapped to when that
 * audio arrived), the recognizer's end of turn, the model asked, its first chunk judged complete and
 * sent to the synthesizer, the synthesizer's first audio, and that audio written to the carrier. A
 * turn's time is split into the recognizer's, the model's, the synthesizer's, the grace period held
 * on purpose, and the gateway's own (the rest: retrieval, prompt, guard, queueing, writing).
 */
export class StreamingTurnClock {
  private pending: Pending | null = null;
  private readonly timings: CallTurnTiming[] = [];
  private bargeIns = 0;
  private firstAudioMs: number | null = null;
  /** Replies started at an eager end of turn, and those of them cancelled unheard; null: the call had no eager end of turn. */
  private eager: { started: number; cancelled: number } | null = null;

  constructor(
    private readonly graceMs: number,
    private readonly observe: (turn: CallTurnTiming) => void = () => undefined,
  ) {}

  /** The caller's turn ended (`turnEnded`), their speech at `endOfSpeech`. */
  begin(endOfSpeech: number, turnEnded: number): void {
    this.pending = {
      endOfSpeech,
      wallEndOfSpeech: Date.now() - (performance.now() - endOfSpeech),
      turnEnded,
      replyId: null,
      modelAsked: null,
      firstChunk: null,
      audioArrived: null,
      eager: false,
    };
  }

  /**
   * The pending turn is answered by a reply started before it ended (at the recognizer's eager end of
   * turn): the caller waited only from the end of the turn, so the model's share is counted from
   * there (zero when its first sentence came before), and the synthesizer's from the later of that
   * and its first sentence. The gateway's share and the grace period are counted as for any reply.
   */
  adopt(replyId: number, stamps: EagerStamps): void {
    const pending = this.pending;
    if (!pending || pending.replyId !== null) return;
    pending.replyId = replyId;
    pending.eager = true;
    pending.modelAsked = pending.turnEnded;
    if (stamps.firstChunk !== null) pending.firstChunk = Math.max(stamps.firstChunk, pending.turnEnded);
    if (stamps.audioArrived !== null) pending.audioArrived = Math.max(stamps.audioArrived, pending.firstChunk ?? pending.turnEnded);
  }

  /** A reply was started at an eager end of turn. */
  eagerStarted(): void {
    this.eager ??= { started: 0, cancelled: 0 };
    this.eager.started += 1;
  }

  /** A reply started at an eager end of turn was cancelled before it was heard. */
  eagerCancelled(): void {
    this.eager ??= { started: 0, cancelled: 0 };
    this.eager.cancelled += 1;
  }

  /** The reply that answers the pending turn asked its model. */
  modelAsked(replyId: number): void {
    if (!this.pending || this.pending.replyId !== null) return;
    this.pending.replyId = replyId;
    this.pending.modelAsked = performance.now();
  }

  firstChunk(replyId: number): void {
    if (this.pending?.replyId === replyId && this.pending.firstChunk === null) this.pending.firstChunk = performance.now();
  }

  audioArrived(replyId: number): void {
    if (this.pending?.replyId === replyId && this.pending.audioArrived === null) this.pending.audioArrived = performance.now();
  }

  /** The earliest the reply's first audio may go to the caller (the grace period after the end of speech), or null for a reply that answers no turn. */
  earliestAudio(replyId: number): number | null {
    return this.pending?.replyId === replyId ? this.pending.endOfSpeech + this.graceMs : null;
  }

  /** The reply's first audio was written to the carrier: the turn is complete. */
  sent(replyId: number): void {
    const pending = this.pending;
    if (!pending || pending.replyId !== replyId) return;
    this.pending = null;
    const now = performance.now();
    const modelAsked = pending.modelAsked ?? pending.turnEnded;
    const firstChunk = pending.firstChunk ?? modelAsked;
    const audioArrived = pending.audioArrived ?? now;
    const totalMs = now - pending.endOfSpeech;
    const recognizerMs = Math.max(0, pending.turnEnded - pending.endOfSpeech);
    const modelMs = Math.max(0, firstChunk - modelAsked);
    const synthesizerMs = Math.max(0, audioArrived - firstChunk);
    // Audio that came before the grace period was over waited on purpose until then.
    const graceWait = Math.max(0, Math.min(now, pending.endOfSpeech + this.graceMs) - audioArrived);
    const gatewayMs = Math.max(0, totalMs - recognizerMs - modelMs - synthesizerMs - graceWait);
    const turn: CallTurnTiming = {
      endOfSpeechAt: new Date(pending.wallEndOfSpeech).toISOString(),
      totalMs: hundredths(totalMs),
      providerMs: hundredths(recognizerMs + modelMs + synthesizerMs),
      gatewayMs: hundredths(gatewayMs),
      recognizerMs: hundredths(recognizerMs),
      modelMs: hundredths(modelMs),
      synthesizerMs: hundredths(synthesizerMs),
      waitMs: hundredths(graceWait),
      ...(pending.eager ? { eagerStart: true } : {}),
    };
    if (this.timings.length < MAX_RECORDED_TURNS) this.timings.push(turn);
    this.observe(turn);
  }

  /** The caller spoke over a reply whose audio had begun. */
  bargeIn(): void {
    this.bargeIns += 1;
  }

  /** The first message's first audio was written to the carrier, `ms` after the call was answered (once). */
  firstAudio(ms: number): void {
    this.firstAudioMs ??= hundredths(Math.max(0, ms));
  }

  /** The call's record, or null when no agent turn was completed, nobody barged in and no first message was heard. */
  summary(provider: string): CallTurnLatency | null {
    if (this.timings.length === 0 && this.bargeIns === 0 && this.firstAudioMs === null && this.eager === null) return null;
    const sorted = this.timings.map((turn) => turn.totalMs).sort((a, b) => a - b);
    return {
      provider,
      turns: [...this.timings],
      p50Ms: sorted.length ? sorted[Math.ceil(sorted.length / 2) - 1]! : 0,
      maxMs: sorted.length ? sorted[sorted.length - 1]! : 0,
      bargeIns: this.bargeIns,
      firstAudioMs: this.firstAudioMs,
      ...(this.eager ? { eagerReplies: this.eager.started, eagerCancelled: this.eager.cancelled } : {}),
    };
  }
}
