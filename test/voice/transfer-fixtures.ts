import type { TestOrganization } from '../helpers/app.js';

// What the transfer tests of every carrier share (transfer.test.ts on Twilio, telnyx-transfer.test.ts on
// Telnyx): an agent's destinations, cold to a number and to a SIP URI, warm with a briefing; and the
// call's transfer as the REST door shows it.

export const BILLING = { name: 'Billing desk', number: '+14155550100', description: 'Questions about invoices and payments', mode: 'cold' };
export const FRONT = { name: 'Front desk', number: 'sip:front@pbx.example.com', description: 'Anything else' };
export const SALES = {
  name: 'Sales desk',
  number: '+14155550123',
  description: 'New orders',
  mode: 'warm',
  briefing: 'A caller about a new order for {{contact.name}}.',
};

/** The call's transfer on REST (null: none). */
export const transferOf = async (org: TestOrganization, callId: string) =>
  ((await org.rest.get(`/api/calls/${callId}`)).body as { transfer: Record<string, unknown> | null }).transfer;

/** The whole transfer record of a cold transfer whose dial the person answered (completed, after `durationSeconds`). */
export const answeredColdTransfer = (destination: { name: string; number: string }, durationSeconds: number) => ({
  destinationName: destination.name,
  destination: destination.number,
  mode: 'cold',
  transferredAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
  dialStatus: 'completed',
  dialDurationSeconds: durationSeconds,
  dialEndedAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
  // The person answered: the caller is not given back.
  returnedAt: null,
  // No one is briefed on a cold transfer.
  briefing: null,
  summary: null,
  summaryError: null,
});
