import { ProgramKind, ProgramStatus } from '../../src/modules/programs/program.enums.js';
import { startTestApp, type TestApp, type TestOrganization } from '../helpers/app.js';
import { createAudience, createContact, insertProgram, syncProgram, triggerRows } from './fixtures.js';

let app: TestApp;
let acme: TestOrganization;

beforeAll(async () => {
  app = await startTestApp();
  acme = await app.organization('Acme');
});
afterAll(() => app.close());

/** [contact, value, status] of every trigger, in a stable order (rows of one sync share created_at). */
const statuses = async (programId: string) => sorted((await triggerRows(app, programId)).map((row) => [row.contact_id, row.attribute_value, row.status]));
const sorted = (rows: string[][]) => rows.sort((a, b) => a.join().localeCompare(b.join()));

describe('syncProgram', () => {
  it('creates one pending trigger per member with the date, at the time of day in the contact zone', async () => {
    const ny = await createContact(acme, { name: 'Nora', timeZone: 'America/New_York', attributes: { birthday: '2030-03-10' } });
    const paris = await createContact(acme, { name: 'Pierre', timeZone: 'Europe/Paris', attributes: { birthday: '2030-07-01T22:30:00Z' } });
    const utc = await createContact(acme, { attributes: { birthday: '2030-12-31' } });
    const none = await createContact(acme, { name: 'No date', attributes: { anniversary: '2030-01-01' } });
    const junk = await createContact(acme, { name: 'Junk', attributes: { birthday: 'soon' } });
    const past = await createContact(acme, { name: 'Past', attributes: { birthday: '2020-01-01' } });
    const optedOut = await createContact(acme, { name: 'Out', optedOut: true, attributes: { birthday: '2030-05-05' } });
    const outsider = await createContact(acme, { name: 'Not a member', attributes: { birthday: '2030-05-05' } });
    const audienceId = await createAudience(acme, [ny, paris, utc, none, junk, past, optedOut]);
    const programId = await insertProgram(app, acme, { audienceId, liveTrigger: { attribute: 'birthday', source: 'contact', offsetDays: -1, timeOfDay: '09:00' } });

    const result = await syncProgram(app, programId);
    expect(result).toMatchObject({ programId, created: 3, cancelled: 0, pending: 3 });
    const rows = await triggerRows(app, programId);
    const byContact = new Map(rows.map((row) => [row.contact_id, row]));
    expect(rows).toHaveLength(3);
    expect(rows.every((row) => row.status === 'pending' && row.triggered_at === null)).toBe(true);
    // The day before, 09:00 local: New York is still on EST on March 9 2030 (DST starts March 10).
    expect(byContact.get(ny)).toMatchObject({ attribute_value: '2030-03-10', contact_name: 'Nora' });
    expect(byContact.get(ny)!.trigger_at.toISOString()).toBe('2030-03-09T14:00:00.000Z');
    // 22:30Z on July 1 is July 2 in Paris: the day before is July 1, 09:00 CEST.
    expect(byContact.get(paris)!.trigger_at.toISOString()).toBe('2030-07-01T07:00:00.000Z');
    expect(byContact.get(utc)!.trigger_at.toISOString()).toBe('2030-12-30T09:00:00.000Z');
    expect(byContact.get(utc)!.contact_phone).toMatch(/^\+1415555/);
    for (const id of [none, junk, past, optedOut, outsider]) expect(byContact.has(id)).toBe(false);

    // A second sync changes nothing.
    expect(await syncProgram(app, programId)).toMatchObject({ created: 0, cancelled: 0, pending: 3 });
    expect(await triggerRows(app, programId)).toHaveLength(3);
  });

  it('follows contacts: a changed date cancels the old trigger and makes a new one; opt-out, removal and deletion cancel', async () => {
    const [changer, quitter, leaver, deleted, mover] = await Promise.all(
      ['Changer', 'Quitter', 'Leaver', 'Deleted', 'Mover'].map((name) => createContact(acme, { name, attributes: { birthday: '2031-04-04' } })),
    );
    const audienceId = await createAudience(acme, [changer!, quitter!, leaver!, deleted!, mover!]);
    const programId = await insertProgram(app, acme, { audienceId });
    await syncProgram(app, programId);
    expect((await triggerRows(app, programId)).map((row) => row.status)).toEqual(Array(5).fill('pending'));

    // Each change goes through the contacts module's doors; its hooks resync without being asked.
    expect((await acme.rest.put(`/api/contacts/${changer}`, { attributes: { birthday: '2031-09-09' } })).status).toBe(200);
    expect((await acme.rest.put(`/api/contacts/${quitter}`, { optedOut: true })).status).toBe(200);
    expect((await acme.rest.request('DELETE', `/api/audience/${audienceId}/members`, { contactIds: [leaver] })).status).toBe(204);
    expect((await acme.rest.delete(`/api/contacts/${deleted}`)).status).toBe(204);
    expect((await acme.rest.put(`/api/contacts/${mover}`, { timeZone: 'Asia/Tokyo', name: 'Moved' })).status).toBe(200);

    const rows = await triggerRows(app, programId);
    const before = await statuses(programId);
    expect(before).toEqual(sorted([
      [changer!, '2031-04-04', 'cancelled'],
      [quitter!, '2031-04-04', 'cancelled'],
      [leaver!, '2031-04-04', 'cancelled'],
      [deleted!, '2031-04-04', 'cancelled'],
      [mover!, '2031-04-04', 'pending'],
      [changer!, '2031-09-09', 'pending'],
    ]));
    // The mover's pending trigger follows the new zone and name: 09:00 in Tokyo is 00:00Z.
    const moved = rows.find((row) => row.contact_id === mover)!;
    expect([moved.trigger_at.toISOString(), moved.contact_name]).toEqual(['2031-04-04T00:00:00.000Z', 'Moved']);

    // Opting back in, re-joining or changing the date back revives the cancelled trigger: still one row per (contact, date).
    await acme.rest.put(`/api/contacts/${quitter}`, { optedOut: false });
    await acme.rest.post(`/api/audience/${audienceId}/members`, { contactIds: [leaver] });
    await acme.rest.put(`/api/contacts/${changer}`, { attributes: { birthday: '2031-04-04' }, name: 'Changed back' });
    expect(await statuses(programId)).toEqual(sorted([
      [changer!, '2031-04-04', 'pending'],
      [quitter!, '2031-04-04', 'pending'],
      [leaver!, '2031-04-04', 'pending'],
      [deleted!, '2031-04-04', 'cancelled'],
      [mover!, '2031-04-04', 'pending'],
      [changer!, '2031-09-09', 'cancelled'],
    ]));
    const revived = (await triggerRows(app, programId)).find((row) => row.contact_id === changer && row.attribute_value === '2031-04-04')!;
    expect([revived.trigger_at.toISOString(), revived.contact_name, revived.triggered_at]).toEqual(['2031-04-04T09:00:00.000Z', 'Changed back', null]);
    // A date whose time has passed is not revived.
    await acme.rest.put(`/api/contacts/${quitter}`, { optedOut: true });
    await app.sql('update contacts set opted_out = false where id = ?', [quitter]);
    await syncProgram(app, programId, new Date('2031-04-05T00:00:00Z'));
    expect(await statuses(programId)).toContainEqual([quitter!, '2031-04-04', 'cancelled']);
    // A date that changes back to a new value gets its trigger.
    await acme.rest.put(`/api/contacts/${quitter}`, { attributes: { birthday: '2031-05-05' } });
    expect(await statuses(programId)).toContainEqual([quitter, '2031-05-05', 'pending']);
  });

  it('adds members when they join, and cancels every pending trigger when the audience is deleted', async () => {
    const first = await createContact(acme, { attributes: { birthday: '2032-01-01' } });
    const audienceId = await createAudience(acme, [first]);
    const programId = await insertProgram(app, acme, { audienceId });
    await syncProgram(app, programId);
    const joiner = await createContact(acme, { attributes: { birthday: '2032-02-02' } });
    await acme.rest.post(`/api/audience/${audienceId}/members`, { contactIds: [joiner] });
    expect(await statuses(programId)).toEqual(sorted([
      [first, '2032-01-01', 'pending'],
      [joiner, '2032-02-02', 'pending'],
    ]));
    expect((await acme.rest.delete(`/api/audience/${audienceId}`)).status).toBe(204);
    expect((await triggerRows(app, programId)).map((row) => row.status)).toEqual(['cancelled', 'cancelled']);
  });

  it('keeps no pending trigger for a program that is not live and active', async () => {
    const contactId = await createContact(acme, { attributes: { birthday: '2033-03-03' } });
    const audienceId = await createAudience(acme, [contactId]);
    const draft = await insertProgram(app, acme, { audienceId, status: ProgramStatus.draft });
    const campaign = await insertProgram(app, acme, { audienceId, kind: ProgramKind.campaign, liveTrigger: null });
    expect(await syncProgram(app, draft)).toMatchObject({ created: 0, pending: 0 });
    expect(await syncProgram(app, campaign)).toMatchObject({ created: 0, pending: 0 });

    const active = await insertProgram(app, acme, { audienceId });
    expect(await syncProgram(app, active)).toMatchObject({ created: 1, pending: 1 });
    await app.sql(`update programs set status = 'archived' where id = ?`, [active]);
    expect(await syncProgram(app, active)).toMatchObject({ created: 0, cancelled: 1, pending: 0 });
  });
});
