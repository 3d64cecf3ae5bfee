import { registerEnumType } from 'type-graphql';

/** The carriers a connection can be made to; each one is an adapter behind `CarrierAdapter`. */
export enum CarrierKind {
  twilio = 'twilio',
  telnyx = 'telnyx',
}
registerEnumType(CarrierKind, {
  name: 'CarrierKind',
  description: 'A carrier a connection is made to',
  valuesConfig: { twilio: { description: 'Twilio Programmable Voice' }, telnyx: { description: 'Telnyx Programmable Voice, through TeXML' } },
});

/** Where a program's calls go: the built-in simulated carrier, or the organization's real one. */
export enum ProgramCarrier {
  simulator = 'simulator',
  twilio = 'twilio',
  telnyx = 'telnyx',
  /** A web call's: the browser is the line (calls only; a program cannot be placed over it). */
  web = 'web',
}
registerEnumType(ProgramCarrier, {
  name: 'ProgramCarrier',
  description: 'Where a program’s calls are placed',
  valuesConfig: {
    simulator: { description: 'The built-in simulated carrier: no account, seeded outcomes (DIALER_SEED, DIALER_SPEED_MS)' },
    twilio: { description: 'The organization’s Twilio connection, with the program’s fromNumberId as caller ID' },
    telnyx: { description: 'The organization’s Telnyx connection (its TeXML application), with the program’s fromNumberId as caller ID' },
    web: { description: 'A web call from a browser (a call’s carrier only: a program cannot use it)' },
  },
});

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
