import type { TestOrganization } from '../helpers/app.js';
import type { FakeTelnyx } from '../support/fake-telnyx.js';

// An organization's Telnyx connection to the loopback Telnyx (test/support/fake-telnyx.ts) and a number
// on it: what the Telnyx files share (telnyx-carrier.test.ts, the recordings on Telnyx, the streaming
// and transfer calls of test/voice/telnyx-fixtures.ts).

/** A random US number (+1415…), unique enough for one file's numbers. */
export const randomNumber = () => `+1415${String(Math.floor(Math.random() * 9_000_000) + 1_000_000)}`;

/** The fields of a Telnyx connection to the loopback Telnyx, with the overrides given. */
export const telnyxConnectionFields = (telnyx: FakeTelnyx, applicationId: string, overrides: Record<string, unknown> = {}) => ({
  name: 'Telnyx',
  carrier: 'telnyx',
  accountSid: telnyx.accountSid,
  authToken: telnyx.apiKey,
  publicKey: telnyx.publicKey,
  applicationId,
  ...overrides,
});

/** Creates the organization's connection and a random number on it (REST): their ids and the number. */
export async function connectTelnyx(
  organization: TestOrganization,
  telnyx: FakeTelnyx,
  applicationId: string,
): Promise<{ connectionId: string; from: string; fromNumberId: string }> {
  const connection = await organization.rest.post('/api/carrier-connections', telnyxConnectionFields(telnyx, applicationId));
  if (connection.status !== 201) throw new Error(`the Telnyx connection was refused: ${JSON.stringify(connection.body)}`);
  const from = randomNumber();
  const number = await organization.rest.post('/api/phone-numbers', { number: from, carrierConnectionId: connection.body.id });
  if (number.status !== 201) throw new Error(`the number was refused: ${JSON.stringify(number.body)}`);
  return { connectionId: connection.body.id as string, from, fromNumberId: number.body.id as string };
}
