// Two rows of the bench's voice section (issue #45): how soon the agent's first word is on the line
// after the answer, and what the builtin voice (eSpeak NG) costs.
//
// Answer → first audio: each call's `firstAudioMs` as the gateway recorded it (from the answer it
// stamped while handling the inbound webhook to the first message's first audio written to the
// carrier), against a baseline measured in the same run for the same call: the carrier's own part
// (on the bench's clock, from the webhook's answer received to the media stream's `start` sent) plus
// the provider's declared delay for that first audio (ElevenLabs' double: its first-audio delay; the
// speech-to-speech doubles answer a first message at once). What is left is the gateway's own share,
// whose target is p99 ≤ FIRST_AUDIO_GATEWAY_P99_TARGET_MS at 100 concurrent calls.
//
// The builtin voice: the CPU (this process, the voice's thread included) to speak a fixed set of
// agent lines, per second of speech made, against the builtin modem's encoding of the same lines in
// the same run (what the builtin synthesizer cost before it spoke).
import { encodeSpeech } from '../../src/modules/voice/streaming/builtin-modem.js';
import { EspeakVoices } from '../../src/modules/voice/streaming/espeak-voices.js';

/** Issue #45: answer → first agent audio ≤ 150 ms of gateway time, p99 at 100 concurrent calls. */
export const FIRST_AUDIO_GATEWAY_P99_TARGET_MS = 150;

export interface FirstAudioCall {
  /** As the gateway recorded it (null: no first message was heard). */
  firstAudioMs: number | null;
  /** The carrier's part, on the bench's clock: the webhook's answer received → the stream's start sent. */
  carrierMs: number;
}

export interface FirstAudioNumbers {
  calls: number;
  /** Calls with no first audio recorded. */
  missing: number;
  firstAudioMs: { p50: number; p99: number } | null;
  baselineMs: { p50: number; p99: number } | null;
  gatewayMs: { p50: number; p99: number } | null;
  /** p99 of firstAudioMs ÷ p99 of the baseline. */
  ratioP99: number | null;
  providerMs: number;
}

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

const spread = (values: number[]) => (values.length === 0 ? null : { p50: percentile(values, 50), p99: percentile(values, 99) });

export function firstAudioNumbers(calls: FirstAudioCall[], providerMs: number): FirstAudioNumbers {
  const heard = calls.filter((call): call is FirstAudioCall & { firstAudioMs: number } => call.firstAudioMs !== null);
  const firstAudio = heard.map((call) => call.firstAudioMs);
  const baseline = heard.map((call) => call.carrierMs + providerMs);
  const gateway = heard.map((call) => call.firstAudioMs - call.carrierMs - providerMs);
  const first = spread(firstAudio);
  const base = spread(baseline);
  return {
    calls: calls.length,
    missing: calls.length - heard.length,
    firstAudioMs: first,
    baselineMs: base,
    gatewayMs: spread(gateway),
    ratioP99: first && base && base.p99 > 0 ? first.p99 / base.p99 : null,
    providerMs,
  };
}

export interface BuiltinVoiceCpu {
  lines: number;
  speechSeconds: number;
  /** CPU ms per second of speech: the builtin voice's, and the modem's for the same lines. */
  voiceMsPerSecond: number;
  modemMsPerSecond: number;
}

/** Agent lines of a few lengths, as a reply is pushed sentence by sentence. */
const LINES = [
  'Hello, this is Ada calling from Acme.',
  'Of course, I can move your delivery to Monday morning between nine and eleven.',
  'Is there anything else I can help you with today?',
  'Your order number is four two seven one, and it left our warehouse yesterday.',
  'Thank you, goodbye.',
];

const cpuMs = () => {
  const usage = process.cpuUsage();
  return (usage.user + usage.system) / 1000;
};

/** Speaks LINES `rounds` times, one utterance at a time (after one to start the thread), and the modem encodes them as often. */
export async function builtinVoiceCpu(rounds = 4): Promise<BuiltinVoiceCpu> {
  const voices = new EspeakVoices();
  try {
    await voices.speak('Warming up.');
    let samples = 0;
    const start = cpuMs();
    for (let round = 0; round < rounds; round++) for (const line of LINES) samples += (await voices.speak(line)).ulaw.length;
    const voiceCpu = cpuMs() - start;
    const speechSeconds = samples / 8000;
    let modemSamples = 0;
    const modemStart = cpuMs();
    for (let round = 0; round < rounds * 10; round++) for (const line of LINES) modemSamples += encodeSpeech(line).length;
    const modemCpu = cpuMs() - modemStart;
    return { lines: rounds * LINES.length, speechSeconds, voiceMsPerSecond: voiceCpu / speechSeconds, modemMsPerSecond: modemCpu / (modemSamples / 8000) };
  } finally {
    await voices.close();
  }
}

export function firstAudioMarkdown(rows: { provider: string; calls: number; numbers: FirstAudioNumbers }[], voice: BuiltinVoiceCpu | null): string {
  const fmt = (value: number | null | undefined, digits = 1) => (value === null || value === undefined ? 'n/a' : value.toFixed(digits));
  const lines: string[] = [];
  if (rows.length > 0) {
    lines.push(
      `Answer → first agent audio (the first message), per call as the gateway recorded it (\`firstAudioMs\`), against a baseline of the same call: the carrier's part (webhook answered → stream \`start\`, the bench's clock) plus the provider's declared delay for it. ` +
        `The gateway's share is the difference (target p99 ≤ ${FIRST_AUDIO_GATEWAY_P99_TARGET_MS} ms at 100 calls).`,
      '',
      `| mode | calls | firstAudioMs p50 / p99 | baseline p50 / p99 (provider ms) | firstAudioMs ÷ baseline (p99) | gateway share p50 / p99 (ms; ≤ ${FIRST_AUDIO_GATEWAY_P99_TARGET_MS}) | no first audio |`,
      '|---|---:|---:|---:|---:|---:|---:|',
      ...rows.map(
        ({ provider, calls, numbers }) =>
          `| ${provider} | ${calls} | ${fmt(numbers.firstAudioMs?.p50)} / ${fmt(numbers.firstAudioMs?.p99)} | ${fmt(numbers.baselineMs?.p50)} / ${fmt(numbers.baselineMs?.p99)} (${numbers.providerMs}) | ` +
          `${fmt(numbers.ratioP99, 2)}× | ${fmt(numbers.gatewayMs?.p50)} / ${fmt(numbers.gatewayMs?.p99)}${numbers.gatewayMs ? (numbers.gatewayMs.p99 <= FIRST_AUDIO_GATEWAY_P99_TARGET_MS ? ' ✓' : ' ✗') : ''} | ${numbers.missing} |`,
      ),
    );
  }
  if (voice) {
    if (lines.length > 0) lines.push('');
    lines.push(
      `The builtin voice (eSpeak NG in its thread, 22.05 kHz → 8 kHz μ-law): ${voice.lines} agent lines, ${voice.speechSeconds.toFixed(1)} s of speech, ` +
        `**${voice.voiceMsPerSecond.toFixed(1)} ms CPU per second of speech** (${(voice.voiceMsPerSecond / voice.modemMsPerSecond).toFixed(0)}× the builtin modem's ${voice.modemMsPerSecond.toFixed(2)} ms for the same lines in this run); ` +
        `one core speaks for about ${Math.floor(1000 / voice.voiceMsPerSecond)} agents talking without a pause.`,
    );
  }
  return lines.join('\n');
}
