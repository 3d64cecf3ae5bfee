import type { CarrierKind } from '../telephony.enums.js';
import type { CarrierAdapter, RecordingCarrier } from '../carrier.js';
import type { CarrierModule } from './carrier-module.js';

/** The carriers the gateway speaks, by kind: each one folder under `carriers/`. */
export type CarrierModules = Partial<Record<CarrierKind, CarrierModule>>;

/** The module of a kind named in a route, or null for a kind no module serves (the route answers 404). */
export function carrierModuleOf(modules: CarrierModules, kind: string): CarrierModule | null {
  return Object.prototype.hasOwnProperty.call(modules, kind) ? (modules[kind as CarrierKind] ?? null) : null;
}

/**
 * The gateway's carriers: the built-in modules, then `added` (a module of a kind already listed
 * serves it in place of the built-in one). The one place the list is made (src/services.ts); a
 * test registers a throwaway carrier through the gateway's seams (test/telephony/carrier-seam.test.ts).
 */
export function withCarrierModules(builtIn: CarrierModule[], added: CarrierModule[]): Required<CarrierModules> {
  const modules: CarrierModules = {};
  for (const module of [...builtIn, ...added]) modules[module.kind] = module;
  return modules as Required<CarrierModules>;
}

/** Each carrier's REST side by kind, as the connection service, the runner and the recordings read it. */
export function adaptersOf(modules: Required<CarrierModules>): Record<CarrierKind, CarrierAdapter & Partial<RecordingCarrier>> {
  return Object.fromEntries(Object.entries(modules).map(([kind, module]) => [kind, module.adapter])) as Record<
    CarrierKind,
    CarrierAdapter & Partial<RecordingCarrier>
  >;
}

/** The carriers that keep recordings (their adapters are RecordingCarriers), by kind. */
export function recordingCarriersOf(modules: Required<CarrierModules>): Partial<Record<CarrierKind, RecordingCarrier>> {
  const carriers: Partial<Record<CarrierKind, RecordingCarrier>> = {};
  for (const [kind, { adapter }] of Object.entries(modules) as [CarrierKind, CarrierModule][]) {
    if (adapter.parseRecordingCallback && adapter.openRecording && adapter.deleteRecording) carriers[kind] = adapter as RecordingCarrier;
  }
  return carriers;
}
