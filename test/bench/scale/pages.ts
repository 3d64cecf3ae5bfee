// The first and the last page of a million-member audience's members, of the contacts list and of the
// credit ledger (a list with one fixed order), and a search: p50/p99 through the REST door. The last
// page is read by the list's lastCursor (the keyset); beside it, the same page by its number (OFFSET),
// which a cursor replaces.
import type { ScaleContext, ScaleMeasure, ScaleRow } from './types.js';
import { latency } from './latency.js';

const TARGET_MS = 50;

async function rows(context: ScaleContext): Promise<ScaleRow[]> {
  const { api, audienceId, segmentId, requests, database } = context;
  const members = `/api/audience/${audienceId}/members?limit=20`;
  const first = await api.get<{ meta: { lastCursor: string; totalPages: number; total: number } }>(members);
  const contacts = '/api/contacts?limit=20';
  const contactsFirst = await api.get<{ meta: { lastCursor: string; totalPages: number } }>(contacts);
  // Digits of one contact's number, as a user searches (its name `Contact <n>` and its phone hold them).
  const search = `/api/contacts?limit=20&search=${Math.max(1, Math.floor(context.rows * 0.777))}`;
  const segment = `/api/audience/${segmentId}/members?limit=20`;
  const segmentFirst = await api.get<{ meta: { lastCursor: string } }>(segment);
  const ledger = '/api/organization/credit-ledger?limit=20';
  const ledgerFirst = await api.get<{ meta: { lastCursor: string; total: number } }>(ledger);
  const paths: [string, string, boolean][] = [
    [`members of a ${first.meta.total.toLocaleString('en')}-member audience: first page`, members, true],
    ['members: last page (lastCursor)', `${members}&cursor=${first.meta.lastCursor}`, true],
    ['contacts: first page', contacts, true],
    ['contacts: last page (lastCursor)', `${contacts}&cursor=${contactsFirst.meta.lastCursor}`, true],
    ['contacts: search (digits of one contact’s number: a match by name and by phone)', search, true],
    ['segment (gold in Europe/*): first page of members, with its count', segment, false],
    ['segment: last page (lastCursor)', `${segment}&cursor=${segmentFirst.meta.lastCursor}`, false],
    [`credit ledger of ${ledgerFirst.meta.total.toLocaleString('en')} entries: first page`, ledger, true],
    ['credit ledger: last page (lastCursor)', `${ledger}&cursor=${ledgerFirst.meta.lastCursor}`, true],
  ];
  const out: ScaleRow[] = [];
  for (const [measure, path, targeted] of paths) {
    const { p50, p99 } = await latency(api, path, requests);
    context.log(`    ${database} ${measure}: p50 ${p50.toFixed(1)} ms, p99 ${p99.toFixed(1)} ms`);
    out.push({ measure, database, p50, p99, target: targeted ? `≤ ${TARGET_MS} ms on PostgreSQL; PGlite ≤ 5× PostgreSQL` : null, met: null });
  }
  // The last page by number: what a client that jumps pays (three requests: each reads every row before it).
  const byOffset = await latency(api, `${members}&page=${first.meta.totalPages}`, 3, 1);
  context.log(`    ${database} members last page by page number: p50 ${byOffset.p50.toFixed(1)} ms`);
  out.push({ measure: 'members: last page by page number (OFFSET), for comparison', database, p50: byOffset.p50, p99: byOffset.p99, target: null, met: null });
  return out;
}

export const pagesMeasure: ScaleMeasure = { name: 'pages', run: rows };
