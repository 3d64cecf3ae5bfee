import {
  LookAheadAgentColumnsDocument,
  LookAheadAgentColumnsExecutorDocument,
  LookAheadAgentColumnsWholeDocument,
  LookAheadAudiencesBatchedDocument,
  LookAheadContactCallsBatchedDocument,
  LookAheadContactCallsDocument,
  LookAheadAudiencesDocument,
  LookAheadKnowledgeBasesBatchedDocument,
  LookAheadKnowledgeBasesContentDocument,
  LookAheadKnowledgeBasesDocument,
  LookAheadProgramTriggersBatchedDocument,
  LookAheadProgramTriggersDocument,
} from '../generated/graphql.js';
import { startTestApp, type TestApp, type TestOrganization } from '../helpers/app.js';
import { recordStatements } from '../helpers/users.js';
import { createAudience, createContact, insertProgram, syncProgram } from '../triggers/fixtures.js';
import { ProgramKind } from '../../src/modules/programs/program.enums.js';
import { insertCall } from '../telephony/call-seed.js';
import { countedOnly } from '../helpers/pages.js';

// The relations declared with nestedRelation (src/db/nested-relation.ts) beyond agents → conversations and
// programs → executions (test/platform/queries.test.ts): knowledge bases → documents, audiences →
// contacts, programs → triggers. For each, the page read with its relations must answer what the
// relation's batch answers for the same data (the same query with the relation under @include, which
// the look-ahead leaves to the batch), deep-equal, for several argument sets; in fewer statements, the
// same number whatever the page size; and never another organization's rows.

let app: TestApp;
let org: TestOrganization;
let other: TestOrganization;

/** Runs `run` and answers what it answered with the statements it sent. */
async function measured<T>(run: () => Promise<T>): Promise<{ answer: T; statements: string[] }> {
  let answer: T;
  const statements = await recordStatements(app, async () => {
    answer = await run();
  });
  return { answer: answer!, statements };
}

/** The same query read with its page and by the batch: equal answers, and the batch's statement saved. */
async function compare(read: () => Promise<unknown>, batched: () => Promise<unknown>): Promise<unknown> {
  const withPage = await measured(read);
  const separately = await measured(batched);
  expect(withPage.answer).toEqual(separately.answer);
  expect(withPage.statements.filter((sql) => /row_number\(\)/.test(sql))).toEqual([]);
  expect(separately.statements.filter((sql) => /row_number\(\)/.test(sql)).length).toBeGreaterThan(0);
  expect(withPage.statements.length).toBeLessThan(separately.statements.length);
  return withPage.answer;
}

beforeAll(async () => {
  app = await startTestApp();
  org = await app.organization('Nested relations');
  other = await app.organization('Nested relations other');

  // Knowledge bases with 0 to 3 documents each (all ready: the status filter is checked against an empty page too).
  for (let i = 0; i < 4; i++) {
    const base = await org.rest.post('/api/knowledge-bases', { name: `Base ${i}`, description: i % 2 ? 'Odd' : null });
    expect(base.status).toBe(201);
    for (let k = 0; k < i; k++) {
      const document = await org.rest.post(`/api/knowledge-bases/${base.body.id}/documents`, {
        title: `Document ${i}.${k}`,
        content: `Renewals are due in ${k + 1} months for base ${i}.`,
        ...(k === 1 ? { contentType: 'text/markdown' } : {}),
      });
      expect(document.status).toBe(201);
    }
  }
  const foreignBase = await other.rest.post('/api/knowledge-bases', { name: 'Foreign base' });
  expect((await other.rest.post(`/api/knowledge-bases/${foreignBase.body.id}/documents`, { title: 'Foreign', content: 'Not yours.' })).status).toBe(201);

  // Audiences of 0, 2 and 4 contacts, with attributes and time zones; contacts that are in two of them.
  const contacts: string[] = [];
  for (let i = 0; i < 5; i++) {
    contacts.push(
      await createContact(org, {
        name: i === 3 ? undefined : `Member ${i}`,
        timeZone: i % 2 ? 'Europe/Paris' : null,
        attributes: { tier: i % 2 ? 'gold' : 'silver', birthday: `2050-0${i + 1}-15` },
      }),
    );
  }
  await createAudience(org, []);
  const pair = await createAudience(org, contacts.slice(0, 2));
  await createAudience(org, contacts.slice(1, 5));
  await createAudience(other, [await createContact(other, { name: 'Member foreign', attributes: { birthday: '2050-01-15' } })]);

  // A live program with a trigger per member, one triggered; a campaign program, whose triggers are none.
  const live = await insertProgram(app, org, { audienceId: pair, name: 'Live' });
  await syncProgram(app, live);
  await insertProgram(app, org, { audienceId: pair, name: 'Campaign', kind: ProgramKind.campaign, liveTrigger: null });
  // Agents with and without a policy, description and metadata, with conversations.
  for (let i = 0; i < 3; i++) {
    const agent = await org.rest.post('/api/agents', {
      name: `Agent ${i}`,
      instructions: 'Answer briefly. '.repeat(50),
      modelConfig: { model: 'builtin/echo', modelSettings: { temperature: 0.1 * i } },
      ...(i > 0 ? { description: `Agent number ${i}`, policy: 'Never promise refunds.', metadata: { team: `t${i}` } } : {}),
    });
    expect(agent.status).toBe(201);
    for (let k = 0; k < i; k++) expect((await org.rest.post(`/api/agents/${agent.body.id}/conversations`, { title: `Talk ${k}` })).status).toBe(201);
  }

  // Calls to the members, 0 to 4 each over an hour, some answered and ended (with their times), some failed.
  const start = Date.parse('2026-11-01T09:00:00.000Z');
  for (const [index, contactId] of contacts.entries()) {
    for (let k = 0; k < index; k++) {
      const queuedAt = new Date(start + (index * 10 + k) * 60_000);
      const answered = k % 2 === 0;
      await insertCall(app, {
        organizationId: org.organizationId,
        contactId,
        status: answered ? 'completed' : 'failed',
        outcome: answered ? 'human' : null,
        attempt: k + 1,
        queuedAt,
        answeredAt: answered ? new Date(queuedAt.getTime() + 5_000) : null,
        endedAt: new Date(queuedAt.getTime() + 65_000),
        durationSeconds: answered ? 60 : null,
        reachedNodeIds: answered ? ['start', 'end'] : [],
        errorText: answered ? null : 'busy',
        creditsCharged: answered ? 2 : 0,
      });
    }
  }
  const [foreignContact] = await other.rest.get('/api/contacts').then((res) => res.body.data);
  await insertCall(app, { organizationId: other.organizationId, contactId: foreignContact.id, queuedAt: new Date(start), errorText: 'foreign' });

  await app.db.database.em
    .fork()
    .execute(
      `update contact_triggers set status = 'triggered', triggered_at = now() where id = (select min(id::text)::uuid from contact_triggers where program_id = ?)`,
      [live],
    );
}, 120_000);
afterAll(() => app.close());

describe('a page reads the columns its selection shows', () => {
  it('answers what the page with every column answers, in one statement, for agents', async () => {
    const answer: any = await compare(
      () => org.graphql.ok(LookAheadAgentColumnsDocument, { limit: 10 }),
      () => org.graphql.ok(LookAheadAgentColumnsWholeDocument, { limit: 10, always: true }),
    );
    expect(answer.agents.data.map((agent: any) => [agent.hasPolicy, agent.conversations.data.length])).toEqual([
      [false, 0],
      [true, 1],
      [true, 2],
    ]);
    // The executor's read (the look-ahead): the agents' instructions are not read (nothing shows them), their policy is (hasPolicy reads it).
    const executor = await measured(() => org.graphql.ok(LookAheadAgentColumnsExecutorDocument, { limit: 10, always: true }));
    expect((executor.answer as any).agents).toEqual(answer.agents);
    expect(executor.statements).toHaveLength(1);
    expect(executor.statements[0]).toMatch(/"a0"\."policy"/);
    expect(executor.statements[0]).not.toMatch(/"instructions"|"a0"\.\*/);
    // The database's answer (src/graphql/sql-answers.ts): one statement too, which writes only what is selected.
    const written = await measured(() => org.graphql.ok(LookAheadAgentColumnsDocument, { limit: 10 }));
    expect(written.statements).toHaveLength(1);
    expect(written.statements[0]).toMatch(/coalesce\(a0\.policy, ''\) <> ''/);
    expect(written.statements[0]).not.toMatch(/instructions|a0\.\*/);
  });
});

describe('knowledge bases → documents read with the page', () => {
  const cases = [
    { documents: 2 },
    { documents: 2, page: 2 },
    { documents: 5, status: 'ready' as const },
    { documents: 5, status: 'failed' as const },
    { documents: 1, page: 9 },
  ];

  it.each(cases)('answers what the batch answers, in fewer statements: %j', async (args) => {
    const answer: any = await compare(
      () => org.graphql.ok(LookAheadKnowledgeBasesDocument, { limit: 10, ...args }),
      () => org.graphql.ok(LookAheadKnowledgeBasesBatchedDocument, { limit: 10, always: true, ...args }),
    );
    expect(answer.knowledgeBases.data).toHaveLength(4);
    // The REST door answers each base's page the same.
    for (const base of answer.knowledgeBases.data) {
      const query = new URLSearchParams({ limit: String(args.documents), page: String(args.page ?? 1), ...(args.status ? { status: args.status } : {}) });
      const rest = await org.rest.get(`/api/knowledge-bases/${base.id}/documents?${query}`);
      expect(rest.status).toBe(200);
      expect(base.documents.meta).toEqual(countedOnly(rest.body.meta));
      expect(base.documents.data.map((document: any) => document.id)).toEqual(rest.body.data.map((document: any) => document.id));
    }
  });

  it('holds every document, and none of another organization', async () => {
    const ours = await org.graphql.ok(LookAheadKnowledgeBasesDocument, { limit: 10, documents: 10 });
    expect(ours.knowledgeBases.data.map((base) => base.documents.meta.total).sort()).toEqual([0, 1, 2, 3]);
    expect(ours.knowledgeBases.data.flatMap((base) => base.documents.data.map((document) => document.title))).not.toContain('Foreign');
    const theirs = await other.graphql.ok(LookAheadKnowledgeBasesDocument, { limit: 10, documents: 10 });
    expect(theirs.knowledgeBases.data.map((base) => base.documents.data.map((document) => document.title))).toEqual([['Foreign']]);
  });

  it("a selection of the documents' text is left to the batch, which charges it to the answer budget", async () => {
    const { answer, statements } = await measured(() => org.graphql.ok(LookAheadKnowledgeBasesContentDocument, { limit: 10, documents: 10 }));
    expect(statements.filter((sql) => /row_number\(\)/.test(sql))).toHaveLength(1);
    expect(answer.knowledgeBases.data.flatMap((base) => base.documents.data.map((document) => document.content)).sort()).toEqual([
      'Renewals are due in 1 months for base 1.',
      'Renewals are due in 1 months for base 2.',
      'Renewals are due in 1 months for base 3.',
      'Renewals are due in 2 months for base 2.',
      'Renewals are due in 2 months for base 3.',
      'Renewals are due in 3 months for base 3.',
    ]);
  });

  it('costs the same statements for a page of 1 base and of 4', async () => {
    const one = await measured(() => org.graphql.ok(LookAheadKnowledgeBasesDocument, { limit: 1, documents: 5 }));
    const four = await measured(() => org.graphql.ok(LookAheadKnowledgeBasesDocument, { limit: 4, documents: 5 }));
    expect(four.answer.knowledgeBases.data).toHaveLength(4);
    expect(four.statements.length).toBe(one.statements.length);
    expect(four.statements).toHaveLength(1);
  });
});

describe('audiences → contacts read with the page', () => {
  const cases = [
    { contacts: 2 },
    { contacts: 2, page: 2 },
    { contacts: 5, sortBy: 'name', sortOrder: 'asc' as const },
    { contacts: 5, sortBy: 'phone', sortOrder: 'desc' as const },
    { contacts: 5, search: 'member 1' },
    { contacts: 1, page: 9 },
  ];

  it.each(cases)('answers what the batch answers, in fewer statements: %j', async (args) => {
    const answer: any = await compare(
      () => org.graphql.ok(LookAheadAudiencesDocument, { limit: 10, ...args }),
      () => org.graphql.ok(LookAheadAudiencesBatchedDocument, { limit: 10, always: true, ...args }),
    );
    expect(answer.audiences.data).toHaveLength(3);
    for (const audience of answer.audiences.data) {
      const query = new URLSearchParams(
        Object.entries({ limit: args.contacts, page: args.page, sortBy: args.sortBy, sortOrder: args.sortOrder, search: args.search })
          .filter(([, value]) => value !== undefined)
          .map(([key, value]): [string, string] => [key, String(value)]),
      );
      const rest = await org.rest.get(`/api/audience/${audience.id}/members?${query}`);
      expect(rest.status).toBe(200);
      expect(audience.contacts.meta).toEqual(countedOnly(rest.body.meta));
      expect(audience.contacts.data.map((contact: any) => contact.id)).toEqual(rest.body.data.map((contact: any) => contact.id));
    }
  });

  it('holds every member with its attributes, and none of another organization', async () => {
    const ours = await org.graphql.ok(LookAheadAudiencesDocument, { limit: 10, contacts: 10 });
    expect(ours.audiences.data.map((audience) => [audience.contactCount, audience.contacts.meta.total])).toEqual(
      expect.arrayContaining([
        [0, 0],
        [2, 2],
        [4, 4],
      ]),
    );
    for (const contact of ours.audiences.data.flatMap((audience) => audience.contacts.data)) {
      expect(contact.organizationId).toBe(org.organizationId);
      expect(contact.attributes.tier).toMatch(/gold|silver/);
    }
    const theirs = await other.graphql.ok(LookAheadAudiencesDocument, { limit: 10, contacts: 10 });
    expect(theirs.audiences.data.map((audience) => audience.contacts.data.map((contact) => contact.name))).toEqual([['Member foreign']]);
  });

  it('a sort field the members do not allow is refused as by the batch', async () => {
    const read = await org.graphql.run(LookAheadAudiencesDocument, { limit: 10, contacts: 2, sortBy: 'bogus' });
    const batched = await org.graphql.run(LookAheadAudiencesBatchedDocument, { limit: 10, contacts: 2, sortBy: 'bogus', always: true });
    expect(read.errors?.length).toBeGreaterThan(0);
    expect(read.errors!.map((error) => [error.extensions.code, error.message, (error as { path?: unknown }).path])).toEqual(
      batched.errors!.map((error) => [error.extensions.code, error.message, (error as { path?: unknown }).path]),
    );
  });

  it('the REST audiences list answers what GraphQL answers', async () => {
    const rest = await org.rest.get('/api/audience?limit=10');
    expect(rest.status).toBe(200);
    const graphql = await org.graphql.ok(LookAheadAudiencesDocument, { limit: 10, contacts: 1 });
    expect(rest.body.data.map((audience: any) => [audience.id, audience.name, audience.contactCount])).toEqual(
      graphql.audiences.data.map((audience) => [audience.id, audience.name, audience.contactCount]),
    );
  });

  it('costs the same statements for a page of 1 audience and of 3', async () => {
    const one = await measured(() => org.graphql.ok(LookAheadAudiencesDocument, { limit: 1, contacts: 5 }));
    const three = await measured(() => org.graphql.ok(LookAheadAudiencesDocument, { limit: 3, contacts: 5 }));
    expect(three.answer.audiences.data).toHaveLength(3);
    expect(three.statements.length).toBe(one.statements.length);
    expect(three.statements).toHaveLength(1);
  });
});

describe('programs → triggers read with the page', () => {
  const cases = [{ triggers: 1 }, { triggers: 1, page: 2 }, { triggers: 5, status: 'triggered' as const }, { triggers: 5, status: 'pending' as const }];

  it.each(cases)('answers what the batch answers, in fewer statements: %j', async (args) => {
    const answer: any = await compare(
      () => org.graphql.ok(LookAheadProgramTriggersDocument, { limit: 10, ...args }),
      () => org.graphql.ok(LookAheadProgramTriggersBatchedDocument, { limit: 10, always: true, ...args }),
    );
    for (const program of answer.programs.data) {
      const query = new URLSearchParams({ limit: String(args.triggers), page: String(args.page ?? 1), ...(args.status ? { status: args.status } : {}) });
      const rest = await org.rest.get(`/api/programs/${program.id}/triggers?${query}`);
      expect(rest.status).toBe(200);
      expect(program.triggers.map((trigger: any) => trigger.id)).toEqual(rest.body.map((trigger: any) => trigger.id));
    }
  });

  it("holds the live program's triggers, none for the campaign, none of another organization", async () => {
    const ours = await org.graphql.ok(LookAheadProgramTriggersDocument, { limit: 10, triggers: 10 });
    const byKind = Object.fromEntries(ours.programs.data.map((program) => [program.kind, program.triggers]));
    expect(byKind.campaign).toEqual([]);
    expect(byKind.live!.map((trigger) => trigger.status).sort()).toEqual(['pending', 'triggered']);
    for (const trigger of byKind.live!) expect(new Date(trigger.triggerAt).toISOString()).toBe(trigger.triggerAt);
    const theirs = await other.graphql.ok(LookAheadProgramTriggersDocument, { limit: 10, triggers: 10 });
    expect(theirs.programs.data).toEqual([]);
  });
});

describe('contacts → calls read with the page', () => {
  const cases = [
    { calls: 2 },
    { calls: 2, page: 2 },
    { calls: 5, status: 'completed' as const },
    { calls: 5, status: 'failed' as const },
    { calls: 1, page: 9 },
  ];

  it.each(cases)('answers what the batch answers, in fewer statements: %j', async (args) => {
    const answer: any = await compare(
      () => org.graphql.ok(LookAheadContactCallsDocument, { limit: 10, ...args }),
      () => org.graphql.ok(LookAheadContactCallsBatchedDocument, { limit: 10, always: true, ...args }),
    );
    expect(answer.contacts.data).toHaveLength(5);
  });

  it('holds every call with its times, and none of another organization', async () => {
    const ours = await org.graphql.ok(LookAheadContactCallsDocument, { limit: 10, calls: 10 });
    expect(ours.contacts.data.map((contact) => contact.calls.meta.total).sort()).toEqual([0, 1, 2, 3, 4]);
    for (const call of ours.contacts.data.flatMap((contact) => contact.calls.data)) {
      expect(call.organizationId).toBe(org.organizationId);
      expect(new Date(call.queuedAt).toISOString()).toBe(call.queuedAt);
      if (call.status === 'completed') expect(call.reachedNodeIds).toEqual(['start', 'end']);
    }
    const theirs = await other.graphql.ok(LookAheadContactCallsDocument, { limit: 10, calls: 10 });
    expect(theirs.contacts.data.map((contact) => contact.calls.data.map((call) => call.errorText))).toEqual([['foreign']]);
  });

  it('costs the same statements for a page of 2 contacts and of 5', async () => {
    // The first contact by phone has no call, the second one (so each page has calls whose relations load in batches).
    const two = await measured(() => org.graphql.ok(LookAheadContactCallsDocument, { limit: 2, calls: 5 }));
    const five = await measured(() => org.graphql.ok(LookAheadContactCallsDocument, { limit: 5, calls: 5 }));
    expect(two.answer.contacts.data.map((contact) => contact.calls.data.length)).toEqual([0, 1]);
    expect(five.answer.contacts.data).toHaveLength(5);
    expect(five.statements.length).toBe(two.statements.length);
    // the page with each contact's calls, then the calls' contacts and recordings (their executions are none)
    expect(five.statements.filter((sql) => /row_number\(\)/.test(sql))).toEqual([]);
  });
});

describe("a read's statement is kept by its shape, and only the values change", () => {
  // src/db/read-model.ts keeps the statement the QueryBuilder built for a read's shape and fills in
  // each read's values. Two organizations asking the same shapes in turn, with other search words and
  // pages, must each get their own answer, as a fresh statement would give it.
  it('two organizations and two search words in turn each get their own rows, on both doors', async () => {
    const names = async (who: TestOrganization, query: string) =>
      ((await who.rest.get(`/api/contacts?${query}`)).body.data as { name: string | null }[]).map((contact) => contact.name);
    const ours = await createContact(org, { name: 'Kept Alpha Ours' });
    const theirs = await createContact(other, { name: 'Kept Alpha Theirs' });
    await createContact(other, { name: 'Kept Beta Theirs' });
    for (let round = 0; round < 2; round++) {
      expect(await names(org, 'search=Kept%20Alpha')).toEqual(['Kept Alpha Ours']);
      expect(await names(other, 'search=Kept%20Alpha')).toEqual(['Kept Alpha Theirs']);
      expect(await names(org, 'search=Kept%20Beta')).toEqual([]);
      expect(await names(other, 'search=Kept%20Beta')).toEqual(['Kept Beta Theirs']);
    }
    // Pages of one: each page holds the next row, and the total is the organization's own.
    const page = async (who: TestOrganization, n: number) => (await who.rest.get(`/api/contacts?search=Kept&limit=1&page=${n}`)).body;
    expect((await page(other, 1)).meta.total).toBe(2);
    expect((await page(org, 1)).meta.total).toBe(1);
    const seen = [(await page(other, 1)).data[0].id, (await page(other, 2)).data[0].id];
    expect(new Set(seen).size).toBe(2);
    expect((await page(org, 2)).data).toEqual([]);
    // GraphQL's page with a nested relation (its values are written into the statement by the QueryBuilder) alike.
    const ownAudience = await createAudience(org, [ours]);
    const theirAudience = await createAudience(other, [theirs]);
    for (let round = 0; round < 2; round++) {
      for (const [who, audience, member] of [
        [org, ownAudience, ours],
        [other, theirAudience, theirs],
      ] as const) {
        const { audiences } = await who.graphql.ok(LookAheadAudiencesDocument, { limit: 10, contacts: 5, search: 'Kept' });
        const found = audiences.data.find((each) => each.id === audience);
        expect(found?.contacts.data.map((contact) => contact.id)).toEqual([member]);
        const foreign = who === org ? theirAudience : ownAudience;
        expect(audiences.data.some((each) => each.id === foreign)).toBe(false);
      }
    }
  });
});
