import { registerEnumType } from 'type-graphql';

/** The carriers a connection can be made to; each one is an adapter behind `CarrierAdapter`. */
export enum CarrierKind {
  twilio = 'twilio',
}
registerEnumType(CarrierKind, {
  name: 'CarrierKind',
  description: 'A carrier a connection is made to',
  valuesConfig: { twilio: { description: 'Twilio Programmable Voice' } },
});

/** Where a program's calls go: the built-in simulated carrier, or the organization's real one. */
export enum ProgramCarrier {
  simulator = 'simulator',
  twilio = 'twilio',
}
registerEnumType(ProgramCarrier, {
  name: 'ProgramCarrier',
  description: 'Where a program’s calls are placed',
  valuesConfig: {
    simulator: { description: 'The built-in simulated carrier: no account, seeded outcomes (DIALER_SEED, DIALER_SPEED_MS)' },
    twilio: { description: 'The organization’s Twilio connection, with the program’s fromNumberId as caller ID' },
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
