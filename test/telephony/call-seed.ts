import { randomUUID } from 'node:crypto';
import type { TestApp, TestOrganization } from '../helpers/app.js';
import { activeCampaign, createAgent } from '../programs/fixtures.js';

export interface SeededCall {
  id?: string;
  organizationId: string;
  executionId?: string | null;
  programId?: string | null;
  contactId?: string | null;
  agentId?: string | null;
  executionContactId?: string | null;
  claimToken?: string | null;
  direction?: 'outbound' | 'inbound';
  from?: string | null;
  to?: string;
  status?: string;
  outcome?: string | null;
  attempt?: number;
  carrier?: 'simulator' | 'twilio';
  carrierCallId?: string | null;
  queuedAt: Date;
  answeredAt?: Date | null;
  endedAt?: Date | null;
  durationSeconds?: number | null;
  reachedNodeIds?: string[];
  errorText?: string | null;
  creditsCharged?: number;
}

/** Writes a calls row as the runner would (its writer is another part of the work): created_at is queued_at. */
export async function insertCall(app: TestApp, call: SeededCall): Promise<string> {
  const id = call.id ?? randomUUID();
  await app.sql(
    `insert into calls (id, created_at, updated_at, organization_id, execution_id, program_id, contact_id, agent_id, execution_contact_id,
       claim_token, direction, from_number, to_number, status, outcome, attempt, carrier, carrier_connection_id, carrier_call_id,
       queued_at, answered_at, ended_at, duration_seconds, reached_node_ids, error_text, credits_charged)
     values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, null, ?, ?, ?, ?, ?, ?::jsonb, ?, ?)`,
    [
      id,
      call.queuedAt,
      call.endedAt ?? call.queuedAt,
      call.organizationId,
      call.executionId ?? null,
      call.programId ?? null,
      call.contactId ?? null,
      call.agentId ?? null,
      call.executionContactId ?? null,
      call.claimToken ?? null,
      call.direction ?? 'outbound',
      call.from === undefined ? '+14155550000' : call.from,
      call.to ?? '+14155550199',
      call.status ?? 'queued',
      call.outcome ?? null,
      call.attempt ?? 1,
      call.carrier ?? 'simulator',
      call.carrierCallId ?? null,
      call.queuedAt,
      call.answeredAt ?? null,
      call.endedAt ?? null,
      call.durationSeconds ?? null,
      JSON.stringify(call.reachedNodeIds ?? []),
      call.errorText ?? null,
      call.creditsCharged ?? 0,
    ],
  );
  return id;
}

export interface Campaign {
  agentId: string;
  programId: string;
  executionId: string;
  contactIds: string[];
  /** execution_contacts ids by contact id. */
  queueRows: Map<string, string>;
}

/** Contacts, an audience, an agent, a flow, an active program and a (scheduled) execution, all through the REST door. */
export async function campaignWithExecution(app: TestApp, org: TestOrganization, contacts: number): Promise<Campaign> {
  const agentId = await createAgent(org);
  const { programId, contactIds } = await activeCampaign(org, contacts);
  const created = await org.rest.post(`/api/programs/${programId}/executions`);
  expect(created.status).toBe(201);
  const rows = await app.sql<{ id: string; contact_id: string }>('select id, contact_id from execution_contacts where execution_id = ?', [created.body.id]);
  return { agentId, programId, executionId: created.body.id, contactIds, queueRows: new Map(rows.map((row) => [row.contact_id, row.id])) };
}
