import type { CarrierModule } from './carrier-module.js';
import { telnyxModule } from './telnyx/index.js';
import { TelnyxCarrier } from './telnyx/telnyx.carrier.js';
import { twilioModule } from './twilio/index.js';
import { TwilioCarrier } from './twilio/twilio.carrier.js';

/** Where the built-in carriers' REST sides are (TWILIO_API_BASE_URL, TELNYX_API_BASE_URL); absent: the carriers' own. */
export interface CarrierApiUrls {
  twilioApiBaseUrl?: string;
  telnyxApiBaseUrl?: string;
}

/**
 * The carriers the gateway is built with, one line each: the list the connection service, the
 * routes, the runner and the GraphQL enums (`CarrierKind`, `ProgramCarrier`) read their kinds from.
 */
export function builtInCarrierModules(urls: CarrierApiUrls = {}): CarrierModule[] {
  return [twilioModule(new TwilioCarrier(urls.twilioApiBaseUrl)), telnyxModule(new TelnyxCarrier(urls.telnyxApiBaseUrl))];
}
