// The scale section's measures, in the order they run on each database. A new measure is a file
// exporting a ScaleMeasure (types.ts) and a line here; it gets a seeded gateway and reports rows.
import { importMeasure } from './import.js';
import { pagesMeasure } from './pages.js';
import { snapshotMeasure } from './snapshot.js';
import type { ScaleMeasure } from './types.js';

export const SCALE_MEASURES: ScaleMeasure[] = [pagesMeasure, snapshotMeasure, importMeasure];
