// The time to create an execution of a campaign over the million-member audience: one request, whose
// work is the snapshot of every callable member into the execution's work queue (one INSERT … SELECT).
import { performance } from 'node:perf_hooks';
import type { ScaleContext, ScaleMeasure, ScaleRow } from './types.js';

const FLOW = {
  name: 'Scale flow',
  nodes: [
    { id: 'start', type: 'start' },
    { id: 'say', type: 'say', label: 'Hello' },
    { id: 'done', type: 'end' },
  ],
  edges: [
    { from: 'start', to: 'say' },
    { from: 'say', to: 'done', condition: 'answered' },
  ],
};

async function rows(context: ScaleContext): Promise<ScaleRow[]> {
  const { api, audienceId, database } = context;
  const flow = await api.post<{ id: string }>('/api/call-flows', FLOW);
  const program = await api.post<{ id: string }>('/api/programs', { name: 'Scale campaign', kind: 'campaign', flowId: flow.id, audienceId });
  await api.post(`/api/programs/${program.id}/activate`);
  const started = performance.now();
  const execution = await api.post<{ totalContacts: number }>(`/api/programs/${program.id}/executions`);
  const ms = performance.now() - started;
  context.log(`    ${database} snapshot of ${execution.totalContacts.toLocaleString('en')} contacts: ${(ms / 1000).toFixed(1)} s`);
  return [
    {
      measure: `snapshot an execution of ${execution.totalContacts.toLocaleString('en')} contacts (POST …/executions)`,
      database,
      p50: ms,
      p99: null,
      target: null,
      met: null,
    },
  ];
}

export const snapshotMeasure: ScaleMeasure = { name: 'snapshot', run: rows };
