import type { CallQuery } from '../../api/generated';

export type Turn = NonNullable<NonNullable<CallQuery['call']['turnLatency']>['turns'][number]>;

const PARTS = [
  { key: 'recognizer', label: 'recognizer' },
  { key: 'wait', label: 'pause' },
  { key: 'model', label: 'model' },
  { key: 'synthesizer', label: 'synthesizer' },
  { key: 'provider', label: 'provider' },
  { key: 'gateway', label: 'gateway' },
] as const;

/** A turn's milliseconds by who spent them: a streaming turn's recognizer, pause, model and synthesizer (the provider's rest, if any), else the provider's whole share; then the gateway's. */
export function partsOf(turn: Turn): { key: (typeof PARTS)[number]['key']; label: string; ms: number }[] {
  const streamed = turn.recognizerMs !== null || turn.modelMs !== null || turn.synthesizerMs !== null;
  const known = streamed ? (turn.recognizerMs ?? 0) + (turn.waitMs ?? 0) + (turn.modelMs ?? 0) + (turn.synthesizerMs ?? 0) : 0;
  const values: Record<string, number> = streamed
    ? {
        recognizer: turn.recognizerMs ?? 0,
        wait: turn.waitMs ?? 0,
        model: turn.modelMs ?? 0,
        synthesizer: turn.synthesizerMs ?? 0,
        provider: Math.max(0, turn.providerMs - known),
        gateway: turn.gatewayMs,
      }
    : { provider: turn.providerMs, gateway: turn.gatewayMs };
  return PARTS.map((part) => ({ ...part, ms: values[part.key] ?? 0 })).filter((part) => part.ms > 0);
}

const ms = (value: number) => `${value < 10 ? value.toFixed(1) : Math.round(value)} ms`;

/** One turn's latency as a stacked bar, scaled to the call's slowest turn, with its numbers in words. */
export function LatencyBar({ turn, index, scaleMs }: { turn: Turn; index: number; scaleMs: number }) {
  const parts = partsOf(turn);
  const width = 300;
  let x = 0;
  const words = parts.map((part) => `${part.label} ${ms(part.ms)}`).join(', ');
  return (
    <div className="latency" data-testid="latency-bar">
      <svg
        viewBox={`0 0 ${width} 14`}
        width="100%"
        height="14"
        preserveAspectRatio="none"
        role="img"
        aria-label={`Turn ${index + 1}: ${ms(turn.totalMs)} (${words})`}
      >
        {parts.map((part) => {
          const w = (part.ms / Math.max(scaleMs, 1)) * width;
          const rect = <rect key={part.key} className={`part-${part.key}`} x={x} y={0} width={w} height={14} />;
          x += w;
          return rect;
        })}
      </svg>
      <p className="latency-words">
        Turn {index + 1}: <strong>{ms(turn.totalMs)}</strong> — {words}
      </p>
    </div>
  );
}

export function LatencyLegend() {
  return (
    <ul className="legend" aria-label="Latency parts">
      {PARTS.map((part) => (
        <li key={part.key}>
          <span className={`swatch part-${part.key}`} aria-hidden="true" /> {part.label}
        </li>
      ))}
    </ul>
  );
}
