import { ProgramCarrier, type CarrierKind } from '../telephony.enums.js';
import type { CarrierAdapter, RecordingCarrier } from '../carrier.js';
import type { CarrierModule } from './carrier-module.js';

/** The carriers the gateway speaks, by kind: each one folder under `carriers/`. */
export type CarrierModules = Readonly<Record<CarrierKind, CarrierModule>>;

/** A kind is a path segment of its routes and a value of the `carrier` columns (whose check says the same: Migration20270102090000). */
const KIND = /^[a-z][a-z0-9-]{1,31}$/;

/** The module of a kind (named in a route, an input or a row), or null for a kind no module serves. */
export function carrierModuleOf(modules: CarrierModules, kind: string): CarrierModule | null {
  return Object.prototype.hasOwnProperty.call(modules, kind) ? (modules[kind] ?? null) : null;
}

/**
 * The gateway's carriers: the built-in modules (`carriers/built-in.ts`), then `added` (a module of a
 * kind already listed serves it in place of the built-in one). The one place the list is made
 * (src/services.ts); a test registers a throwaway carrier of its own kind through the gateway's seams
 * (test/telephony/carrier-seam.test.ts). A kind that could not be a route's segment, or that is a
 * word of ProgramCarrier's own (simulator, web), is refused at start.
 */
export function withCarrierModules(builtIn: CarrierModule[], added: CarrierModule[]): CarrierModules {
  const modules: Record<CarrierKind, CarrierModule> = {};
  for (const module of [...builtIn, ...added]) {
    if (!KIND.test(module.kind) || Object.values<string>(ProgramCarrier).includes(module.kind)) {
      throw new Error(`A carrier module's kind must be 2 to 32 lowercase letters, digits or - (not simulator or web): ${JSON.stringify(module.kind)}`);
    }
    modules[module.kind] = module;
  }
  return modules;
}

/** Each carrier's REST side by kind, as the connection service, the runner and the recordings read it. */
export function adaptersOf(modules: CarrierModules): Record<CarrierKind, CarrierAdapter & Partial<RecordingCarrier>> {
  return Object.fromEntries(Object.entries(modules).map(([kind, module]) => [kind, module.adapter]));
}

/** The carriers that keep recordings (their adapters are RecordingCarriers), by kind. */
export function recordingCarriersOf(modules: CarrierModules): Record<CarrierKind, RecordingCarrier> {
  const carriers: Record<CarrierKind, RecordingCarrier> = {};
  for (const [kind, { adapter }] of Object.entries(modules)) {
    if (adapter.parseRecordingCallback && adapter.openRecording && adapter.deleteRecording) carriers[kind] = adapter as RecordingCarrier;
  }
  return carriers;
}
