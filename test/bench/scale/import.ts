// A CSV import's rate: a file of --scale-import-rows rows (100,000 by default) sent to POST /api/imports
// (create), then the same file again (upsert: every row an update), each timed from the request to the
// import's end; beside them the baseline of the same run, the same rows through the JSON import
// (POST /api/contacts/import, 10,000 a request), so the ratio says what the job costs over the
// gateway's fastest existing path. The gateway's RSS is sampled meanwhile: the file is streamed, so its
// growth should not follow the file's size.
import { createReadStream, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import type { ScaleContext, ScaleMeasure, ScaleRow } from './types.js';

const phone = (base: number, i: number) => `+1628${String(base + i).padStart(7, '0')}`;

function rss(pid: number): number {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8')
    .split('\n')
    .find((each) => each.startsWith('VmRSS:'));
  return Number(line?.replace(/\D+/g, '') ?? 0) * 1024;
}

/** Sends the file as a stream and waits for the import's end; its time and the peak RSS seen. */
async function timedImport(
  context: ScaleContext,
  pid: number,
  file: string,
  query: string,
): Promise<{ ms: number; peak: number; job: Record<string, unknown> }> {
  let peak = rss(pid);
  const started = performance.now();
  const response = await fetch(`${context.api.base}/api/imports?${query}`, {
    method: 'POST',
    headers: { 'x-api-key': context.api.key, 'content-type': 'text/csv' },
    body: createReadStream(file) as never,
    duplex: 'half',
  } as RequestInit);
  const sent = (await response.json()) as { id: string };
  if (response.status !== 202) throw new Error(`POST /api/imports answered ${response.status}: ${JSON.stringify(sent)}`);
  for (;;) {
    peak = Math.max(peak, rss(pid));
    const job = await context.api.get<Record<string, unknown>>(`/api/imports/${sent.id}`);
    if (job.status === 'completed' || job.status === 'failed' || job.status === 'cancelled') return { ms: performance.now() - started, peak, job };
    await sleep(200);
  }
}

async function rows(context: ScaleContext): Promise<ScaleRow[]> {
  const { database, importRows: count, pid } = context;
  const dir = mkdtempSync(join(tmpdir(), 'gateway-bench-import-'));
  try {
    const file = join(dir, 'contacts.csv');
    const lines = ['externalId,name,phone,timeZone,attributes.tier'];
    for (let i = 0; i < count; i++) lines.push(`crm-${i},Person ${i},${phone(1_000_000, i)},Europe/Paris,${i % 10 === 0 ? 'gold' : 'silver'}`);
    writeFileSync(file, `${lines.join('\r\n')}\r\n`);
    const atStart = rss(pid);

    // The baseline: the same number of new rows through the JSON import, 10,000 a request.
    const jsonStarted = performance.now();
    for (let start = 0; start < count; start += 10_000) {
      const contacts = Array.from({ length: Math.min(10_000, count - start) }, (_, i) => ({
        name: `Json ${start + i}`,
        phone: phone(5_000_000, start + i),
        timeZone: 'Europe/Paris',
        attributes: { tier: 'silver' },
      }));
      await context.api.post('/api/contacts/import', { contacts });
    }
    const jsonMs = performance.now() - jsonStarted;
    // The CSV import's growth is counted from here, after the baseline: the JSON import's bodies (10,000
    // contacts a request) grow the heap first, and that growth is not the streamed file's.
    const idle = rss(pid);

    const created = await timedImport(context, pid, file, 'mode=create&key=externalId');
    const upserted = await timedImport(context, pid, file, 'mode=upsert&key=externalId');
    const rate = (ms: number) => Math.round(count / (ms / 1000));
    const mb = (bytes: number) => (bytes / 1024 / 1024).toFixed(0);
    context.log(
      `    ${database} CSV import of ${count.toLocaleString('en')} rows: create ${rate(created.ms)} rows/s (${created.job.imported} imported), ` +
        `upsert ${rate(upserted.ms)} rows/s (${upserted.job.updated} updated); JSON import baseline ${rate(jsonMs)} rows/s; ` +
        `CSV/JSON ${(jsonMs / created.ms).toFixed(2)}×; RSS at start ${mb(atStart)} MB, after the JSON baseline ${mb(idle)} MB, peak ${mb(Math.max(created.peak, upserted.peak))} MB`,
    );
    const label = count.toLocaleString('en');
    const note = (ms: number, extra: string) => `${rate(ms)} rows/s${extra}`;
    return [
      {
        measure: `JSON import of ${label} rows, 10,000 a request (baseline)`,
        database,
        p50: jsonMs,
        p99: null,
        target: null,
        met: null,
        note: note(jsonMs, ''),
      },
      {
        measure: `CSV import job of ${label} rows (create, POST /api/imports to completed)`,
        database,
        p50: created.ms,
        p99: null,
        target: '≥ 20,000 rows/s on PostgreSQL; RSS growth ≤ 200 MB',
        met: database === 'postgresql' ? rate(created.ms) >= 20_000 && created.peak - idle <= 200 * 1024 * 1024 : null,
        note: note(created.ms, `, ${(jsonMs / created.ms).toFixed(2)}× the JSON import's rate, RSS +${mb(created.peak - idle)} MB`),
      },
      {
        measure: `… the same file again (upsert by externalId: every row an update)`,
        database,
        p50: upserted.ms,
        p99: null,
        target: null,
        met: null,
        note: note(upserted.ms, `, RSS +${mb(upserted.peak - idle)} MB`),
      },
    ];
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export const importMeasure: ScaleMeasure = { name: 'import', run: rows };
