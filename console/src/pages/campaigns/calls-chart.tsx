import type { LiveCallFragment } from '../../api/generated';

export const OUTCOMES = ['answered', 'voicemail', 'no_answer', 'busy', 'failed', 'do_not_call'] as const;
const LABELS: Record<(typeof OUTCOMES)[number], string> = {
  answered: 'Answered',
  voicemail: 'Voicemail',
  no_answer: 'No answer',
  busy: 'Busy',
  failed: 'Failed',
  do_not_call: 'Do not call',
};
const BUCKETS = 24;
const WIDTH = 640;
const HEIGHT = 180;
const AXIS = 24;

interface Bucket {
  start: number;
  counts: Record<string, number>;
  total: number;
}

/** Ended calls counted by outcome in equal spans of time, from the first end to the last. */
export function bucketsOf(calls: LiveCallFragment[]): { buckets: Bucket[]; spanMs: number } {
  const ended = calls.filter((call) => call.endedAt && call.outcome).map((call) => ({ at: Date.parse(call.endedAt!), outcome: call.outcome! }));
  if (ended.length === 0) return { buckets: [], spanMs: 0 };
  const first = Math.min(...ended.map((call) => call.at));
  const last = Math.max(...ended.map((call) => call.at));
  const spanMs = Math.max(1000, Math.ceil((last - first + 1) / BUCKETS));
  const count = Math.min(BUCKETS, Math.floor((last - first) / spanMs) + 1);
  const buckets: Bucket[] = Array.from({ length: count }, (_, index) => ({ start: first + index * spanMs, counts: {}, total: 0 }));
  for (const call of ended) {
    const bucket = buckets[Math.min(count - 1, Math.floor((call.at - first) / spanMs))]!;
    bucket.counts[call.outcome] = (bucket.counts[call.outcome] ?? 0) + 1;
    bucket.total++;
  }
  return { buckets, spanMs };
}

const time = (ms: number) => new Date(ms).toLocaleTimeString(undefined, { hour: '2-digit', minute: '2-digit', second: '2-digit' });

/** Calls over time by outcome: a stacked bar per span of time, drawn in SVG, with the same numbers as a table. */
export function CallsChart({ calls }: { calls: LiveCallFragment[] }) {
  const { buckets, spanMs } = bucketsOf(calls);
  if (buckets.length === 0) return <p>No call has ended yet.</p>;
  const highest = Math.max(...buckets.map((bucket) => bucket.total));
  const barWidth = (WIDTH - 8) / Math.max(buckets.length, 6);
  const scale = (HEIGHT - AXIS - 8) / highest;
  const totals = OUTCOMES.map((outcome) => [outcome, buckets.reduce((sum, bucket) => sum + (bucket.counts[outcome] ?? 0), 0)] as const);
  return (
    <figure className="chart">
      <svg
        viewBox={`0 0 ${WIDTH} ${HEIGHT}`}
        role="img"
        aria-label={`Calls ended over time: ${totals.map(([outcome, total]) => `${LABELS[outcome]} ${total}`).join(', ')}`}
        data-testid="calls-chart"
      >
        {buckets.map((bucket, index) => {
          let y = HEIGHT - AXIS;
          return (
            <g key={bucket.start}>
              {OUTCOMES.map((outcome) => {
                const count = bucket.counts[outcome] ?? 0;
                if (count === 0) return null;
                const height = count * scale;
                y -= height;
                return (
                  <rect key={outcome} className={`outcome-${outcome}`} x={4 + index * barWidth + 1} y={y} width={barWidth - 2} height={height}>
                    <title>{`${time(bucket.start)}: ${count} ${LABELS[outcome].toLowerCase()}`}</title>
                  </rect>
                );
              })}
            </g>
          );
        })}
        <line x1={4} x2={WIDTH - 4} y1={HEIGHT - AXIS} y2={HEIGHT - AXIS} className="axis" />
        <text x={4} y={HEIGHT - 6} className="axis-label">
          {time(buckets[0]!.start)}
        </text>
        <text x={WIDTH - 4} y={HEIGHT - 6} textAnchor="end" className="axis-label">
          {time(buckets[buckets.length - 1]!.start + spanMs)}
        </text>
      </svg>
      <figcaption>
        <ul className="legend">
          {totals.map(([outcome, total]) => (
            <li key={outcome}>
              <span className={`swatch outcome-${outcome}`} aria-hidden="true" /> {LABELS[outcome]}: <span data-testid={`outcome-${outcome}`}>{total}</span>
            </li>
          ))}
        </ul>
        <p className="hint">
          Each bar is {Math.round(spanMs / 1000)} s of calls ending, highest {highest}.
        </p>
      </figcaption>
    </figure>
  );
}
