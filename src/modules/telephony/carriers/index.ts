import type { CarrierKind } from '../telephony.enums.js';
import type { CarrierModule } from './carrier-module.js';

/** The carriers the gateway speaks, by kind: each one folder under `carriers/`. */
export type CarrierModules = Partial<Record<CarrierKind, CarrierModule>>;

/** The module of a kind named in a route, or null for a kind no module serves (the route answers 404). */
export function carrierModuleOf(modules: CarrierModules, kind: string): CarrierModule | null {
  return Object.prototype.hasOwnProperty.call(modules, kind) ? (modules[kind as CarrierKind] ?? null) : null;
}
