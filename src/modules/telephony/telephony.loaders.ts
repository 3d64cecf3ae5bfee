import DataLoader from 'dataloader';
import type { Actor } from '../../common/actor.js';
import type { CarrierConnection } from './carrier-connection.entity.js';
import type { CarrierConnectionService } from './carrier-connection.service.js';
import type { PhoneNumber } from './phone-number.entity.js';
import type { PhoneNumberService } from './phone-number.service.js';

/** Per-request batches for PhoneNumber.carrierConnection and Program.fromNumber: one statement per relation, not per row. */
export class TelephonyLoaders {
  readonly carrierConnections: DataLoader<string, CarrierConnection | null>;
  readonly phoneNumbers: DataLoader<string, PhoneNumber | null>;

  constructor(connections: CarrierConnectionService, numbers: PhoneNumberService, actor: Actor) {
    this.carrierConnections = new DataLoader(async (ids) => {
      const found = await connections.connectionsFor(actor, ids);
      return ids.map((id) => found.get(id) ?? null);
    });
    this.phoneNumbers = new DataLoader(async (ids) => {
      const found = await numbers.numbersFor(actor, ids);
      return ids.map((id) => found.get(id) ?? null);
    });
  }
}

declare module '../../graphql/context.js' {
  interface GraphQLLoaders {
    telephony: TelephonyLoaders;
  }
}
