import type { TestOrganization } from '../helpers/app.js';

let phone = 0;

export const fieldsOf = (errors: { field: string }[] | undefined) => [...new Set((errors ?? []).map((error) => error.field))].sort();

/** An active builtin/echo agent (a program is activated only with active agents); `draft: true` leaves it a draft. */
export async function createAgent(org: TestOrganization, options: { draft?: boolean; name?: string } = {}): Promise<string> {
  const res = await org.rest.post('/api/agents', { name: options.name ?? 'Caller', instructions: 'Be brief.', modelConfig: { model: 'builtin/echo' } });
  expect(res.status).toBe(201);
  if (!options.draft) expect((await org.rest.post(`/api/agents/${res.body.id}/activate`)).status).toBe(200);
  return res.body.id;
}

/** Contacts in a new audience; the ones listed in optedOut have opted out. */
export async function createAudience(org: TestOrganization, members: number, optedOut = 0): Promise<{ id: string; contactIds: string[] }> {
  const contacts = Array.from({ length: members }, (_, i) => ({
    name: `Person ${++phone}`,
    phone: `+1415${String(5000000 + phone).padStart(7, '0')}`,
    optedOut: i < optedOut,
  }));
  const contactIds: string[] = [];
  for (const contact of contacts) {
    const res = await org.rest.post('/api/contacts', contact);
    expect(res.status).toBe(201);
    contactIds.push(res.body.id);
  }
  const audience = await org.rest.post('/api/audience', { name: `Audience ${phone}` });
  expect(audience.status).toBe(201);
  if (contactIds.length > 0) {
    const added = await org.rest.post(`/api/audience/${audience.body.id}/members`, { contactIds });
    expect(added.status).toBe(200);
  }
  return { id: audience.body.id, contactIds };
}

export function flowInput(agentId?: string) {
  return {
    name: 'Reminder flow',
    nodes: [
      { id: 'start', type: 'start', ...(agentId ? { agentId } : {}) },
      { id: 'confirm', type: 'say', label: 'Please confirm the appointment' },
      { id: 'done', type: 'end' },
    ],
    edges: [
      { from: 'start', to: 'confirm' },
      { from: 'confirm', to: 'done', condition: 'answered' },
    ],
  };
}

export async function createFlow(org: TestOrganization, agentId?: string): Promise<string> {
  const res = await org.rest.post('/api/call-flows', flowInput(agentId));
  expect(res.status).toBe(201);
  return res.body.id;
}

/** An active campaign over a new audience, through a new flow. */
export async function activeCampaign(
  org: TestOrganization,
  members: number,
  optedOut = 0,
  extra: Record<string, unknown> = {},
): Promise<{ programId: string; audienceId: string; flowId: string; contactIds: string[] }> {
  const flowId = await createFlow(org);
  const audience = await createAudience(org, members, optedOut);
  const created = await org.rest.post('/api/programs', { name: 'Campaign', kind: 'campaign', flowId, audienceId: audience.id, ...extra });
  expect(created.status).toBe(201);
  const activated = await org.rest.post(`/api/programs/${created.body.id}/activate`);
  expect(activated.status).toBe(200);
  return { programId: created.body.id, audienceId: audience.id, flowId, contactIds: audience.contactIds };
}
