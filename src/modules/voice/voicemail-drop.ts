import type { EntityManager } from '@mikro-orm/postgresql';
import type { Logger } from 'pino';
import { at, query } from '../../db/sql.js';
import type { FlowEdge, FlowNode } from '../programs/call-flow.types.js';
import { VoicemailAction, type ProgramVoicemail } from '../programs/voicemail/program-voicemail.js';
import { callContext, readCallSource } from '../agents/templates/call-context-reader.js';
import { renderedLine } from '../agents/templates/call-context.js';
import type { AgentVariable } from '../agents/templates/agent-variable.types.js';
import type { CallTracker } from '../telephony/call-tracker.js';
import { CallStatus } from '../telephony/telephony.enums.js';
import { MACHINE_VERDICT_WINDOW_MS, isGreetingEnd, type MachineVerdict } from '../telephony/machine-verdict.js';
import { walkFrom } from './flow-walk.js';
import type { VoiceAction } from './voice-actions.js';

/** Where a call's new instructions go: the carrier's live-call update (Twilio: TwiML), or the simulator's record of what it heard. */
export interface VoicemailLine {
  update(actions: VoiceAction[]): Promise<void>;
}

/** What became of a verdict: nothing (`ignored`: ended, late, unknown, another call, a repeat), recorded, or acted on. */
export type VerdictResult = 'ignored' | 'human' | 'waiting' | 'left' | 'hung_up' | 'failed';

interface DropRow {
  id: string;
  organization_id: string;
  status: string;
  answered_at: Date | string | null;
  carrier_call_id: string | null;
  voicemail_left_at: Date | string | null;
  voice_state: { said?: string[] } | null;
  voicemail: ProgramVoicemail | null;
  nodes: FlowNode[] | null;
  edges: FlowEdge[] | null;
  agent_id: string | null;
  agent_name: string | null;
  variables: AgentVariable[] | string | null;
  voice_id: string | null;
}

/** The call, its program's voicemail setting, the flow it walks and the program's agent (for the voice and the variables' defaults). */
const DROP_SQL = `
  select c.id, c.organization_id, c.status, c.answered_at, c.carrier_call_id, c.voicemail_left_at, c.voice_state,
         p.voicemail, f.nodes, f.edges, a.id as agent_id, a.name as agent_name, a.variables,
         a.voice_config->>'voiceId' as voice_id
    from calls c
    left join executions e on e.id = c.execution_id and e.organization_id = c.organization_id
    left join programs p on p.id = coalesce(e.program_id, c.program_id) and p.organization_id = c.organization_id
    left join call_flows f on f.id = coalesce(e.flow_id, p.flow_id) and f.organization_id = c.organization_id
    left join agents a on a.id = coalesce(c.agent_id, p.agent_id) and a.organization_id = c.organization_id
   where c.id = ?`;

/**
 * Voicemail after the beep, for calls placed with asynchronous machine detection: the call is
 * spoken to from its answer, and the carrier's verdict arrives later (amd-webhooks.rest.ts, or the
 * simulator). A person (or no conclusion) changes nothing but who answered; a machine whose
 * greeting has only started is waited for; once its greeting ends (the beep), the agent is stopped
 * by replacing what the call does: the program's `voicemail` message (action leave) or its flow's
 * voicemail branch is spoken, then the call hangs up; action hang_up (or nothing to say) hangs up.
 * A message left makes the call's outcome `voicemail_left`. A verdict for a call not in progress,
 * for another carrier call, or later than MACHINE_VERDICT_WINDOW_MS after the answer is ignored.
 */
export class VoicemailDrop {
  constructor(
    private readonly em: EntityManager,
    private readonly tracker: CallTracker,
    private readonly logger: Logger,
    private readonly clock: () => Date = () => new Date(),
  ) {}

  async verdict(callId: string, verdict: MachineVerdict, line: VoicemailLine): Promise<VerdictResult> {
    const [row] = await query<DropRow>(this.em.fork(), DROP_SQL, [callId]);
    if (!row || row.status !== CallStatus.in_progress || row.voicemail_left_at) return 'ignored';
    if (row.carrier_call_id && verdict.carrierCallId && row.carrier_call_id !== verdict.carrierCallId) return 'ignored';
    const answeredMs = row.answered_at ? new Date(row.answered_at).getTime() : this.clock().getTime();
    const elapsed = Math.max(this.clock().getTime() - answeredMs, verdict.detectionMs ?? 0);
    if (elapsed > MACHINE_VERDICT_WINDOW_MS) {
      this.logger.info({ callId, verdict: verdict.kind, elapsedMs: elapsed }, 'a machine verdict came too late after the answer; ignored');
      return 'ignored';
    }
    if (verdict.kind === 'human' || verdict.kind === 'unknown') {
      await this.tracker.reached(callId, [], verdict.kind);
      return 'human';
    }
    if (verdict.kind === 'machine_start') return 'waiting';
    const { actions, reached, message } = await this.whatToLeave(row, isGreetingEnd(verdict.kind));
    await this.tracker.reached(callId, reached, 'machine');
    if (message !== null && !(await this.claim(row, message))) return 'ignored';
    try {
      await line.update(actions);
    } catch (error) {
      this.logger.warn({ callId, err: error }, 'the carrier did not take the voicemail message; the call goes on');
      if (message !== null) await query(this.em.fork(), 'update calls set voicemail_left_at = null where id = ?', [callId]);
      return 'failed';
    }
    return message === null ? 'hung_up' : 'left';
  }

  /** What the machine hears: the program's message, else its flow's voicemail branch (a fax, or hang_up: nothing), then a hang-up. */
  private async whatToLeave(row: DropRow, greetingEnded: boolean): Promise<{ actions: VoiceAction[]; reached: string[]; message: string | null }> {
    const hangUp: { actions: VoiceAction[]; reached: string[]; message: string | null } = { actions: [{ kind: 'hangup' }], reached: [], message: null };
    if (!greetingEnded) return hangUp;
    const setting = row.voicemail;
    if (setting) {
      if (setting.action === VoicemailAction.hang_up || !setting.message) return hangUp;
      const message = await this.render(row, setting.message);
      if (!message) return hangUp;
      return { actions: [{ kind: 'say', text: message, voice: row.voice_id }, { kind: 'hangup' }], reached: [], message };
    }
    if (!row.nodes) return hangUp;
    const start = row.nodes.find((node) => node.type === 'start') ?? row.nodes[0];
    const context = { nodes: row.nodes, edges: row.edges ?? [], voiceOf: () => row.voice_id, isSts: () => false, machine: true };
    const walk = walkFrom(context, start?.id ?? null, { outcome: 'voicemail' });
    // A message is left when the machine's branch reaches a voicemail node with words; it hears what the
    // branch says before any question (a machine is never asked), then the hang-up. Without one: a hang-up.
    const leaves = walk.reached.some((id) => row.nodes!.some((node) => node.id === id && node.type === 'voicemail' && node.label?.trim()));
    if (!leaves) return { ...hangUp, reached: walk.reached };
    const firstAsk = walk.actions.findIndex((action) => action.kind !== 'say');
    const said = walk.actions.slice(0, firstAsk === -1 ? walk.actions.length : firstAsk).filter((action) => action.kind === 'say');
    const message = said.map((action) => (action.kind === 'say' ? action.text : '')).join(' ') || null;
    return { actions: [...said, { kind: 'hangup' }], reached: walk.reached, message };
  }

  /** The message for this call, rendered like the agent's first message (the contact, the program, variables with the agent's defaults). */
  private async render(row: DropRow, template: string): Promise<string | null> {
    const source = await readCallSource(this.em.fork(), row.organization_id, row.id);
    if (!source) return null;
    const variables = typeof row.variables === 'string' ? (JSON.parse(row.variables) as AgentVariable[]) : (row.variables ?? []);
    const templates = { id: row.agent_id ?? '', name: row.agent_name ?? '', instructions: '', policy: null, firstMessage: template, variables };
    return renderedLine(template, callContext(source, templates, null, this.clock())).slice(0, 2000) || null;
  }

  /** Marks the message left (once: a repeated verdict finds it marked), and keeps it for the call's transcript. */
  private async claim(row: DropRow, message: string): Promise<boolean> {
    const said = JSON.stringify([message]);
    const claimed = await query<{ id: string }>(
      this.em.fork(),
      `update calls set voicemail_left_at = ?::timestamptz,
              voice_state = case when voice_state is null then null
                                 else jsonb_set(voice_state, '{said}', coalesce(voice_state->'said', '[]'::jsonb) || ?::jsonb) end,
              updated_at = ?::timestamptz
        where id = ? and status = 'in_progress' and voicemail_left_at is null returning id`,
      [at(this.clock()), said, at(this.clock()), row.id],
    );
    return claimed.length > 0;
  }
}
