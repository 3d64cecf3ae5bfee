import type { CallRequest, CallResult, Dialer } from '../../src/modules/programs/runner/dialer.js';
import { startTestApp, type TestApp, type TestOrganization } from '../helpers/app.js';
import { testRunner } from '../runner/fixtures.js';
import { createAudience, createContact, executionsOf, insertProgram, syncProgram } from './fixtures.js';

let app: TestApp;
let acme: TestOrganization;

beforeAll(async () => {
  app = await startTestApp();
  acme = await app.organization('Acme');
});
afterAll(() => app.close());

/** A carrier whose calls hang until the test lets them end. */
class HangingDialer implements Dialer {
  readonly calls: CallRequest[] = [];
  private readonly pending: ((result: CallResult) => void)[] = [];
  placeCall(call: CallRequest): Promise<CallResult> {
    this.calls.push(call);
    return new Promise((resolve) => this.pending.push(resolve));
  }
  finishAll(result: CallResult): void {
    for (const resolve of this.pending.splice(0)) resolve(result);
  }
}

const ANSWERED: CallResult = { outcome: 'answered', reachedNodeIds: [], durationSeconds: 30 };

it('a trigger that fires while the contact is on a call for an earlier date calls it again once that call is recorded', async () => {
  await app.sql('update organizations set credit_balance = 10 where id = ?', [acme.organizationId]);
  const contactId = await createContact(acme, { attributes: { birthday: '2043-05-01' } });
  const programId = await insertProgram(app, acme, { audienceId: await createAudience(acme, [contactId]) });
  await syncProgram(app, programId);
  const fireDue = (now: string) => app.gateway.services.triggers.fireDue(new Date(now));
  const now = new Date('2043-05-01T09:00:00Z');
  const dialer = new HangingDialer();
  const runner = testRunner(app, { dialer, clock: () => now });

  expect(await fireDue('2043-05-01T09:00:00Z')).toEqual({ triggered: 1, cancelled: 0 });
  await runner.tick();
  expect(dialer.calls).toHaveLength(1);

  // The date moves on and its trigger fires mid-call.
  await acme.rest.put(`/api/contacts/${contactId}`, { attributes: { birthday: '2043-05-02' } });
  expect(await fireDue('2043-05-02T09:00:00Z')).toEqual({ triggered: 1, cancelled: 0 });
  expect(await executionsOf(app, programId)).toMatchObject([{ total_contacts: 1, contacts_in_progress: 1, contacts_pending: 0 }]);

  dialer.finishAll(ANSWERED);
  await runner.idle();
  expect(await executionsOf(app, programId)).toMatchObject([{ status: 'running', contacts_pending: 1, contacts_in_progress: 0, contacts_completed: 0 }]);
  const [row] = await app.sql('select status, attempts, requeue, last_outcome, completed_at from execution_contacts where contact_id = ?', [contactId]);
  expect(row).toMatchObject({ status: 'pending', attempts: 0, requeue: false, last_outcome: 'answered', completed_at: null });

  await runner.tick();
  expect(dialer.calls).toHaveLength(2);
  expect(dialer.calls[1]!.attempt).toBe(1);
  dialer.finishAll(ANSWERED);
  await runner.idle();
  expect(await executionsOf(app, programId)).toMatchObject([{ status: 'completed', contacts_pending: 0, contacts_completed: 1 }]);
  await runner.stop();
});
