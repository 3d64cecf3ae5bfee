// The scale section's shared shapes: what a measure is given, and the rows it reports.
import type { ApiClient } from '../client.js';

export type ScaleDatabase = 'postgresql' | 'pglite';

/** A gateway over a seeded organization of `rows` contacts, and SQL on its database. */
export interface ScaleContext {
  database: ScaleDatabase;
  rows: number;
  api: ApiClient;
  organizationId: string;
  /** A static audience whose members are every contact, and a segment (tier gold, time zone Europe/*). */
  audienceId: string;
  segmentId: string;
  /** Sequential requests per latency (after a warm-up). */
  requests: number;
  /** Rows of the CSV import measure's file (--scale-import-rows). */
  importRows: number;
  /** The gateway's process, for its RSS. */
  pid: number;
  log(line: string): void;
}

/** One row of the table: a latency (p50/p99 ms) or a single duration (ms, as p50 with no p99). */
export interface ScaleRow {
  measure: string;
  database: ScaleDatabase;
  p50: number;
  p99: number | null;
  /** The target as the issue states it, and whether it was met (null: no target, or judged across databases). */
  target: string | null;
  met: boolean | null;
  note?: string;
}

/**
 * One measure of the section: a file that reads a seeded gateway and answers its rows. New measures
 * (a CSV import's rate, the runner's CPU per dialed contact, the API's p99 during a campaign) are one
 * file each, listed in measures.ts.
 */
export interface ScaleMeasure {
  name: string;
  run(context: ScaleContext): Promise<ScaleRow[]>;
}
