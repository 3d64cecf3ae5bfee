import { registerEnumType } from 'type-graphql';

/**
 * A carrier's kind: the name its module declares (`carriers/<kind>/`), in its routes
 * (`/telephony/<kind>/…`) and in the `carrier` column of connections, programs, calls and
 * recordings. Which kinds exist is the list of modules the gateway was built with
 * (`carriers/built-in.ts`, plus any a test registers), not this type: the service checks a kind
 * against that list, and the GraphQL enums below are filled from it when the schema is built.
 */
export type CarrierKind = string;

/** Where a program's calls go: the built-in simulated carrier, a registered carrier's kind, or (a call's only) `web`. */
export type ProgramCarrier = CarrierKind;
/** The words of ProgramCarrier that are no carrier module's (a module may not take them as its kind). */
export const ProgramCarrier = {
  /** The built-in simulated carrier: no account, seeded outcomes. */
  simulator: 'simulator',
  /** A web call's: the browser is the line (calls only; a program cannot be placed over it). */
  web: 'web',
} as const;

/** What the GraphQL enums of carriers are filled from: each registered carrier's kind and what it is. */
export interface CarrierDescriptor {
  readonly kind: CarrierKind;
  /** One line on what it is, e.g. "Twilio Programmable Voice": the GraphQL enums' value descriptions. */
  readonly label: string;
}

// The GraphQL enums `CarrierKind` and `ProgramCarrier`: empty objects that TypeGraphQL reads while a
// schema is built (`withCarrierEnums`), so a schema's enums are exactly its gateway's carriers.
const CARRIER_KIND_VALUES: Record<string, string> = {};
const CARRIER_KIND_CONFIG: Record<string, { description: string }> = {};
const PROGRAM_CARRIER_VALUES: Record<string, string> = {};
const PROGRAM_CARRIER_CONFIG: Record<string, { description: string }> = {};
/** The GraphQL type of a connection's carrier (`@Field(() => CarrierKindEnum)`): the registered kinds. */
export const CarrierKindEnum: object = CARRIER_KIND_VALUES;
/** The GraphQL type of a program's, call's or recording's carrier: simulator, the registered kinds, web. */
export const ProgramCarrierEnum: object = PROGRAM_CARRIER_VALUES;
registerEnumType(CARRIER_KIND_VALUES, {
  name: 'CarrierKind',
  description: 'A carrier a connection is made to: one of the gateway’s carrier modules',
  valuesConfig: CARRIER_KIND_CONFIG,
});
registerEnumType(PROGRAM_CARRIER_VALUES, {
  name: 'ProgramCarrier',
  description: 'Where a program’s calls are placed',
  valuesConfig: PROGRAM_CARRIER_CONFIG,
});

/** The values of the ProgramCarrier enum, in its order: the simulator, each registered kind, web. */
export const programCarrierValues = (kinds: readonly CarrierKind[]): CarrierKind[] => [ProgramCarrier.simulator, ...kinds, ProgramCarrier.web];

/** Runs `build` (synchronous: TypeGraphQL reads the enum objects while it builds) with the enums of carriers filled from `carriers`. */
export function withCarrierEnums<T>(carriers: readonly CarrierDescriptor[], build: () => T): T {
  const fill = (values: Record<string, string>, config: Record<string, { description: string }>, entries: [string, string][]) => {
    for (const key of Object.keys(values)) delete values[key];
    for (const key of Object.keys(config)) delete config[key];
    for (const [kind, description] of entries) {
      values[kind] = kind;
      config[kind] = { description };
    }
  };
  const ours = carriers.map(({ kind, label }): [string, string] => [kind, label]);
  fill(CARRIER_KIND_VALUES, CARRIER_KIND_CONFIG, ours);
  fill(PROGRAM_CARRIER_VALUES, PROGRAM_CARRIER_CONFIG, [
    [ProgramCarrier.simulator, 'The built-in simulated carrier: no account, seeded outcomes (DIALER_SEED, DIALER_SPEED_MS)'],
    ...carriers.map(({ kind, label }): [string, string] => [
      kind,
      `${label}: the organization’s connection there, with the program’s fromNumberId as caller ID`,
    ]),
    [ProgramCarrier.web, 'A web call from a browser (a call’s carrier only: a program cannot use it)'],
  ]);
  try {
    return build();
  } finally {
    fill(CARRIER_KIND_VALUES, CARRIER_KIND_CONFIG, []);
    fill(PROGRAM_CARRIER_VALUES, PROGRAM_CARRIER_CONFIG, []);
  }
}

/** How a call reached its agent: over the phone (a carrier) or from a browser tab (a web call). */
export enum CallChannel {
  phone = 'phone',
  web = 'web',
}
registerEnumType(CallChannel, {
  name: 'CallChannel',
  description: 'How a call reached its agent',
  valuesConfig: {
    phone: { description: 'A phone call, through a carrier' },
    web: { description: 'A web call: a person talking from a browser tab (POST /api/web-calls)' },
  },
});

export enum CallDirection {
  outbound = 'outbound',
  inbound = 'inbound',
}
registerEnumType(CallDirection, {
  name: 'CallDirection',
  description: 'Who started the call',
  valuesConfig: {
    outbound: { description: 'Placed by the gateway (a program’s execution)' },
    inbound: { description: 'Placed by a caller to one of the organization’s numbers' },
  },
});

/** A call's life at the carrier; the last five are final. */
export enum CallStatus {
  queued = 'queued',
  ringing = 'ringing',
  in_progress = 'in_progress',
  completed = 'completed',
  busy = 'busy',
  no_answer = 'no_answer',
  failed = 'failed',
  canceled = 'canceled',
}
registerEnumType(CallStatus, {
  name: 'CallStatus',
  description: 'Where a call is at the carrier: queued → ringing → in_progress → one final status',
  valuesConfig: {
    queued: { description: 'Created; the carrier has not reported it ringing yet' },
    ringing: { description: 'The callee’s phone is ringing' },
    in_progress: { description: 'Answered (by a person or a machine) and live' },
    completed: { description: 'Answered and ended (final)' },
    busy: { description: 'The callee was busy (final)' },
    no_answer: { description: 'Nobody answered (final)' },
    failed: { description: 'The carrier could not place the call, or it was never confirmed (final)' },
    canceled: { description: 'Canceled before it was answered (final)' },
  },
});
