import { RequestContext } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from 'pino';
import type { ConversationService } from '../agents/conversation.service.js';
import { DoNotCallService } from '../contacts/do-not-call.service.js';
import { AgentStatus, PipelineMode, StsProvider } from '../agents/agent.enums.js';
import type { FlowEdge, FlowNode } from '../programs/call-flow.types.js';
import type { NodeEvent } from '../programs/edge-condition.js';
import { at, query } from '../../db/sql.js';
import type { AnsweredBy } from '../telephony/carrier.js';
import type { CallTracker } from '../telephony/call-tracker.js';
import { needsResolution, nextNode, walkFrom, type WalkContext } from './flow-walk.js';
import { newStreamNonce } from '../telephony/carriers/stream-url.js';
import { WORDS, type VoiceAction } from './voice-actions.js';
import { RecordingLedger } from '../recordings/recording-ledger.js';
import { refusesConsent, type ProgramRecording } from '../recordings/recording-settings.js';
import { FirstMessageMode } from '../agents/agent.enums.js';
import type { AgentVariable } from '../agents/templates/agent-variable.types.js';
import { callContext, readCallSource } from '../agents/templates/call-context-reader.js';
import { firstMessageFor } from '../agents/templates/first-message.js';
import { keypadLine } from './keypad/keypad-presses.js';
import { agentPressedLine } from './keypad/dtmf-tones.js';
import type { BatchCallTools } from './batch-call-tools.js';
import { returnedLine, returnedNote, transferredLine } from './transfer/transfer-tool.js';
import type { StoredTransfer } from '../telephony/call-transfer.types.js';

/** Where a call's voice session is, kept in calls.voice_state. */
export interface VoiceState {
  flowId?: string | null;
  agentId?: string | null;
  /** The ask node the call listens at (null: an agent without a flow, or nothing to listen for). */
  nodeId: string | null;
  machine: boolean;
  reprompts: number;
  turns: number;
  /** The caller's last turn, waiting for the agent. */
  pending: { speech: string | null; digits: string | null } | null;
  /** What the agent's answer to it says, waiting for the reply route. */
  reply?: VoiceAction[] | null;
  /** What the flow said (say lines, ask prompts) not yet in the call's conversation: stored before the next turn, or when the call ends. */
  said?: string[];
  /** The recording's consent sentence: asked, then given or refused (absent: the program asks none). */
  consent?: 'asking' | 'given' | 'refused';
  /** Who answered, kept while the consent is asked, for the flow that starts after it. */
  answeredBy?: AnsweredBy | null;
}

/** The lines of a walk the caller hears from the flow: its `say` lines and `ask` prompts. */
function flowLines(actions: VoiceAction[]): string[] {
  return actions.flatMap((action) => (action.kind === 'say' ? [action.text] : action.kind === 'gather' && action.prompt ? [action.prompt] : []));
}

interface CallRow {
  id: string;
  organization_id: string;
  execution_id: string | null;
  agent_id: string | null;
  conversation_id: string | null;
  status: string;
  carrier: string;
  voice_state: VoiceState | null;
}

interface AgentRow {
  id: string;
  name: string;
  status: string;
  voice_config: { pipelineMode?: string; voiceId?: string | null; stsProvider?: string | null } | null;
  instructions: string;
  policy: string | null;
  first_message: string | null;
  first_message_mode: FirstMessageMode;
  variables: AgentVariable[];
}

/** What a call speaks from: its flow (the execution's snapshot, or an inbound number's), or a single agent. */
interface Script {
  flow: { nodes: FlowNode[]; edges: FlowEdge[] } | null;
  agentId: string | null;
  agents: Map<string, AgentRow>;
  /** The program's recording setting (null: not recorded, or not a program's call). */
  recording: ProgramRecording | null;
}

const MAX_TURNS = 20;
/** How long the reply route waits for a turn started at another replica. */
const REPLY_WAIT_MS = 20_000;
const FINAL = new Set(['completed', 'busy', 'no_answer', 'failed', 'canceled']);

/**
 * The batch voice pipeline: a call's flow walked node by node as the carrier asks, the caller's
 * turns answered by the node's agent through the conversation service (the prompt path of typed
 * messages), the session kept in calls.voice_state so any replica can take the next request.
 * Twilio's webhooks and the simulated caller both drive it.
 */
export class VoiceEngine {
  /** Turns started by the gather route, awaited by the reply route of this process. */
  private readonly turns = new Map<string, Promise<void>>();
  /** Where an opt_out node puts the caller's number (it works in the engine's request context). */
  private readonly doNotCall: DoNotCallService;
  /** Where a refused consent is kept. */
  private readonly recordings: RecordingLedger;
  /** Told each call whose answer was just given a media stream's URL (the app prepares a streaming call's first words there). */
  streamArmed?: (callId: string) => void;
  /** A batch call's tools (transfer_call, send_digits), set where calls reach a carrier (app.ts); none: the model is offered none (the simulator). */
  callTools?: BatchCallTools;

  constructor(
    private readonly em: EntityManager,
    private readonly tracker: CallTracker,
    private readonly conversations: ConversationService,
    private readonly logger: Logger,
  ) {
    this.doNotCall = new DoNotCallService(em);
    this.recordings = new RecordingLedger(em);
  }

  private scoped<T>(work: () => Promise<T>): Promise<T> {
    return RequestContext.create(this.em, work);
  }

  private async load(callId: string): Promise<CallRow | null> {
    const [row] = await query<CallRow>(
      this.em.fork(),
      'select id, organization_id, execution_id, agent_id, conversation_id, status, carrier, voice_state from calls where id = ?',
      [callId],
    );
    return row ?? null;
  }

  private async save(callId: string, state: VoiceState): Promise<void> {
    await query(this.em.fork(), 'update calls set voice_state = ?::jsonb, updated_at = ?::timestamptz where id = ?', [
      JSON.stringify(state),
      at(new Date()),
      callId,
    ]);
  }

  private async script(call: CallRow): Promise<Script> {
    const em = this.em.fork();
    let flow: Script['flow'] = null;
    let agentId = call.voice_state?.agentId ?? call.agent_id;
    let recording: ProgramRecording | null = null;
    if (call.voice_state?.flowId) {
      const [row] = await query<{ nodes: FlowNode[]; edges: FlowEdge[] }>(em, 'select nodes, edges from call_flows where id = ? and organization_id = ?', [
        call.voice_state.flowId,
        call.organization_id,
      ]);
      flow = row ?? null;
    } else if (call.execution_id) {
      const [row] = await query<{ nodes: FlowNode[] | null; edges: FlowEdge[] | null; agent_id: string | null; recording: ProgramRecording | null }>(
        em,
        `select f.nodes, f.edges, p.agent_id, p.recording from executions e join programs p on p.id = e.program_id
           left join call_flows f on f.id = coalesce(e.flow_id, p.flow_id) where e.id = ?`,
        [call.execution_id],
      );
      flow = row?.nodes ? { nodes: row.nodes, edges: row.edges ?? [] } : null;
      agentId ??= row?.agent_id ?? null;
      recording = row?.recording?.enabled ? row.recording : null;
    }
    const ids = [...new Set([agentId, ...(flow?.nodes ?? []).map((node) => node.agentId)].filter((id): id is string => Boolean(id)))];
    const agents = ids.length
      ? await query<AgentRow>(
          em,
          `select id, name, status, voice_config, instructions, policy, first_message, first_message_mode, variables from agents where organization_id = ? and id in (${ids.map(() => '?').join(', ')})`,
          [call.organization_id, ...ids],
        )
      : [];
    return { flow, agentId, agents: new Map(agents.map((agent) => [agent.id, agent])), recording };
  }

  private context(script: Script, machine: boolean): WalkContext {
    const agent = (id: string | null | undefined) => script.agents.get(id ?? '') ?? script.agents.get(script.agentId ?? '');
    return {
      nodes: script.flow?.nodes ?? [],
      edges: script.flow?.edges ?? [],
      voiceOf: (id) => agent(id)?.voice_config?.voiceId ?? null,
      isSts: (id) => isStreamed(agent(id)),
      machine,
    };
  }

  /**
   * The call was answered: what it hears first, with the nodes reached recorded on the call. A
   * program that records after consent asks its sentence first (not of a machine); the flow starts
   * with the answer (gather). A call whose consent was already given or refused is not asked again
   * and starts no recording (the HTTP door answers a repeated /answer from webhook_replies anyway).
   */
  answer(callId: string, answeredBy: AnsweredBy | null): Promise<VoiceAction[]> {
    return this.scoped(async () => {
      const call = await this.load(callId);
      if (!call || FINAL.has(call.status)) return [{ kind: 'hangup' }];
      const script = await this.script(call);
      // An agent deleted since the call was placed: the call fails before a word is said, and costs nothing.
      const archived = [...script.agents.values()].find((agent) => agent.status === AgentStatus.archived);
      if (archived) {
        await this.tracker.failLive(callId, `The call’s agent "${archived.name}" (${archived.id}) is archived`, { spoken: false });
        return [{ kind: 'hangup' }];
      }
      const consent = script.recording?.consent;
      // Once the callee has answered the consent sentence, it is never asked again, nor recording started again.
      const decided = call.voice_state?.consent === 'given' || call.voice_state?.consent === 'refused';
      if (decided) return this.begin(call, script, call.voice_state?.answeredBy ?? answeredBy);
      if (consent && answeredBy !== 'machine') {
        await this.tracker.reached(callId, [], answeredBy);
        await this.save(callId, {
          ...call.voice_state,
          nodeId: null,
          machine: false,
          reprompts: 0,
          turns: 0,
          pending: null,
          consent: 'asking',
          answeredBy,
          said: [...(call.voice_state?.said ?? []), consent.sentence],
        });
        return [{ kind: 'gather', prompt: consent.sentence, voice: this.context(script, false).voiceOf(null) }];
      }
      return this.begin(call, script, answeredBy);
    });
  }

  /**
   * The callee answered the consent sentence (or said nothing, which consents): a refusal is kept as
   * the call's recording (status refused) and nothing is recorded; otherwise recording starts, and
   * the flow or agent begins as it would have on the answer.
   */
  private async consented(call: CallRow, state: VoiceState, answer: { speech: string | null; digits: string | null }): Promise<VoiceAction[]> {
    const script = await this.script(call);
    const recording = script.recording;
    const refused = recording?.consent ? refusesConsent(recording.consent.refuseOn, answer) : false;
    if (refused && recording) await this.recordings.refused(call.id, recording.channels);
    const decided: VoiceState = { ...state, consent: refused ? 'refused' : 'given' };
    // Kept before the flow starts, so whatever comes next (a stream, a hang-up) never asks again.
    await this.save(call.id, decided);
    const actions = await this.begin({ ...call, voice_state: decided }, script, state.answeredBy ?? null);
    return recording && !refused ? [{ kind: 'record', channels: recording.channels }, ...actions] : actions;
  }

  /** The flow (or the agent) starts: what the answered call hears first. */
  private async begin(call: CallRow, script: Script, answeredBy: AnsweredBy | null): Promise<VoiceAction[]> {
    const callId = call.id;
    const machine = answeredBy === 'machine';
    const state: VoiceState = { ...call.voice_state, nodeId: null, machine, reprompts: 0, turns: 0, pending: null };
    // After a consent sentence, it stays in what the flow said (for the transcript); a first answer starts afresh.
    const before = call.voice_state?.consent ? (call.voice_state.said ?? []) : [];
    if (!script.flow) {
      const agent = script.agents.get(script.agentId ?? '');
      await this.tracker.reached(callId, [], answeredBy);
      if (!agent || machine) return [{ kind: 'hangup' }];
      if (isStreamed(agent)) return [{ kind: 'stream' }];
      // The agent's first message, rendered for this call (none: it waits for the caller, and the gather listens at once).
      const first = await this.firstMessage(call, agent);
      await this.save(callId, { ...state, said: first ? [...before, first] : before });
      return [{ kind: 'gather', prompt: first, voice: agent.voice_config?.voiceId ?? null }];
    }
    const start = script.flow.nodes.find((node) => node.type === 'start') ?? script.flow.nodes[0];
    const walk = walkFrom(this.context(script, machine), start?.id ?? null, { outcome: machine ? 'voicemail' : 'answered' });
    await this.tracker.reached(callId, walk.reached, answeredBy);
    await this.save(callId, { ...state, nodeId: walk.waitingAt, said: [...before, ...flowLines(walk.actions)] });
    if (walk.optOut && !machine) await this.optOut(call);
    return walk.actions;
  }

  /** What the agent says first on this call: its firstMessage (or the default for the call's direction) rendered from the call's context; null when it waits. */
  private async firstMessage(call: CallRow, agent: AgentRow): Promise<string | null> {
    if (agent.first_message_mode === FirstMessageMode.wait_for_caller) return null;
    const source = await readCallSource(this.em.fork(), call.organization_id, call.id);
    const templates = {
      id: agent.id,
      name: agent.name,
      instructions: agent.instructions,
      policy: agent.policy,
      firstMessage: agent.first_message,
      variables: (typeof agent.variables === 'string' ? JSON.parse(agent.variables) : agent.variables) ?? [],
    };
    return source
      ? firstMessageFor({ firstMessage: agent.first_message, firstMessageMode: agent.first_message_mode }, callContext(source, templates, null))
      : WORDS.greeting(agent.name);
  }

  /**
   * The caller spoke or pressed keys (or said nothing: `silence`). Words are kept for the reply
   * route and the agent starts on them at once, while the caller hears a short filler; silence is
   * reprompted once, then the call ends (or follows a no_input edge).
   */
  gather(callId: string, input: { speech: string | null; digits: string | null; silence: boolean }): Promise<VoiceAction[]> {
    return this.scoped(async () => {
      const call = await this.load(callId);
      const state = call?.voice_state;
      if (!call || !state || FINAL.has(call.status)) return [{ kind: 'hangup' }];
      const speech = input.speech?.trim() || null;
      const digits = input.digits?.trim() || null;
      if (state.consent === 'asking') return this.consented(call, state, { speech, digits });
      if (!speech && !digits) return this.silence(call, state);
      await this.save(callId, { ...state, reprompts: 0, pending: { speech, digits } });
      const turn = this.keepTurn(callId).finally(() => this.turns.delete(callId));
      turn.catch((error: unknown) => this.logger.error({ callId, err: error }, 'a caller turn failed'));
      this.turns.set(callId, turn);
      return [
        { kind: 'say', text: WORDS.filler, voice: await this.voiceAt(call, state) },
        { kind: 'redirect', route: 'reply' },
      ];
    });
  }

  /** Runs the pending turn, if nobody took it yet, and keeps what it says for the reply route (whichever replica it reaches). */
  private async keepTurn(callId: string): Promise<void> {
    const actions = await this.runTurn(callId);
    if (!actions) return;
    await query(this.em.fork(), `update calls set voice_state = jsonb_set(voice_state, '{reply}', ?::jsonb) where id = ?`, [JSON.stringify(actions), callId]);
  }

  /**
   * What the agent answered the caller's last turn: the turn the gather route started (here or at
   * another replica) is waited for, up to `REPLY_WAIT_MS`; a turn nobody started is run now.
   */
  reply(callId: string): Promise<VoiceAction[]> {
    return this.scoped(async () => {
      const until = Date.now() + REPLY_WAIT_MS;
      for (;;) {
        await this.turns.get(callId);
        const [row] = await query<{ reply: VoiceAction[] | null; pending: unknown }>(
          this.em.fork(),
          `with old as (select id, voice_state from calls where id = ? for update)
           update calls set voice_state = jsonb_set(calls.voice_state, '{reply}', 'null'::jsonb) from old where calls.id = old.id
           returning old.voice_state->'reply' as reply, old.voice_state->'pending' as pending`,
          [callId],
        );
        if (!row) return [{ kind: 'hangup' }];
        if (Array.isArray(row.reply)) return row.reply;
        if (row.pending) await this.keepTurn(callId);
        else if (Date.now() > until) return [{ kind: 'say', text: WORDS.apology, voice: null }, { kind: 'hangup' }];
        else await sleep(100);
      }
    });
  }

  private async voiceAt(call: CallRow, state: VoiceState): Promise<string | null> {
    const script = await this.script(call);
    const node = script.flow?.nodes.find((item) => item.id === state.nodeId);
    return this.context(script, state.machine).voiceOf(node?.agentId);
  }

  private async silence(call: CallRow, state: VoiceState): Promise<VoiceAction[]> {
    const script = await this.script(call);
    const context = this.context(script, state.machine);
    const node = script.flow?.nodes.find((item) => item.id === state.nodeId);
    const voice = context.voiceOf(node?.agentId);
    if (state.reprompts < 1) {
      await this.save(call.id, { ...state, reprompts: state.reprompts + 1 });
      const prompt = node?.label ? `${WORDS.reprompt} ${node.label}` : WORDS.reprompt;
      return [{ kind: 'gather', prompt, voice }];
    }
    const next = state.nodeId ? nextNode(context, state.nodeId, { noInput: true }) : null;
    const edge = next && script.flow?.edges.some((item) => item.from === state.nodeId && item.to === next && item.condition === 'no_input');
    if (edge) return this.walkOn(call, state, script, next);
    await this.save(call.id, { ...state, nodeId: null });
    return [{ kind: 'say', text: WORDS.noInputGoodbye, voice }, { kind: 'hangup' }];
  }

  private async walkOn(call: CallRow, state: VoiceState, script: Script, from: string | null): Promise<VoiceAction[]> {
    const walk = walkFrom(this.context(script, state.machine), from, { outcome: 'answered' });
    await this.tracker.reached(call.id, walk.reached);
    await this.save(call.id, { ...state, nodeId: walk.waitingAt, reprompts: 0, said: [...(state.said ?? []), ...flowLines(walk.actions)] });
    if (walk.optOut && !state.machine) await this.optOut(call);
    return walk.actions;
  }

  /**
   * The flow reached an opt_out node: the number goes on the do-not-call list before the caller
   * hears the confirmation. A machine never opts anyone out. A failure is logged and the call still
   * ends as the flow says (the confirmation is not taken back), so an operator can add the number.
   */
  private async optOut(call: CallRow): Promise<void> {
    try {
      await this.doNotCall.optOut(call.organization_id, { callId: call.id });
    } catch (error) {
      this.logger.error(
        { callId: call.id, err: error instanceof Error ? error.message : String(error) },
        'the caller opted out but the number could not be put on the do-not-call list',
      );
    }
  }

  /** Takes the pending turn (once, whichever request gets it), asks the agent, speaks the reply and moves on. */
  private async runTurn(callId: string): Promise<VoiceAction[] | null> {
    const taken = await query<{ voice_state: VoiceState }>(
      this.em.fork(),
      `with old as (select id, voice_state from calls where id = ? for update)
       update calls set voice_state = jsonb_set(calls.voice_state, '{pending}', 'null'::jsonb) from old
        where calls.id = old.id and old.voice_state->'pending' <> 'null'::jsonb returning old.voice_state`,
      [callId],
    );
    const call = await this.load(callId);
    const before = taken[0]?.voice_state;
    if (!before?.pending) return null;
    if (!call || FINAL.has(call.status)) return [{ kind: 'hangup' }];
    // What the flow said before this turn goes into the conversation first, then the turn.
    const state: VoiceState = { ...before, pending: null, turns: before.turns + 1, said: [] };
    const { speech, digits } = before.pending;
    const script = await this.script(call);
    const context = this.context(script, state.machine);
    const node = script.flow?.nodes.find((item) => item.id === state.nodeId);
    const agentId = node?.agentId ?? script.agentId;
    const voice = context.voiceOf(agentId);
    if (!agentId) return [{ kind: 'hangup' }];
    let conversationId = call.conversation_id;
    let replyText: string;
    const tools = this.callTools?.forTurn({ id: callId, organizationId: call.organization_id }, call.carrier);
    try {
      if (!conversationId) {
        conversationId = (await this.conversations.openForCall(call.organization_id, agentId, callId)).id;
        await query(this.em.fork(), 'update calls set conversation_id = ? where id = ?', [conversationId, callId]);
      }
      await this.conversations.addSpokenOnCall(call.organization_id, conversationId, before.said ?? []);
      // Keys alone are the model's line as on a live call ("[the caller pressed 1]", keypad-presses.ts).
      replyText = (await this.conversations.replyOnCall(call.organization_id, conversationId, agentId, speech ?? keypadLine(digits!), tools?.tools)).response;
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      // The transfer was claimed before the model failed: the caller still goes to the person.
      const claimed = tools?.effect().transfer;
      if (claimed) {
        this.logger.warn({ callId, err: reason }, 'the agent failed after transferring the call; the transfer goes on');
        await this.save(callId, state);
        return claimed.actions;
      }
      this.logger.warn({ callId, err: reason }, 'the agent could not answer on the call; the call fails');
      await this.tracker.failLive(callId, `The agent could not answer: ${reason}`);
      if (conversationId) await this.conversations.closeForCall(call.organization_id, conversationId, true);
      await this.save(callId, { ...state, nodeId: null });
      return [{ kind: 'say', text: WORDS.apology, voice }, { kind: 'hangup' }];
    }
    const actions: VoiceAction[] = [{ kind: 'say', text: replyText, voice }];
    const effect = tools?.effect();
    if (effect?.transfer) {
      // The carrier takes the call with this answer: the reply, then the line and the dial (or the hold). The node is kept, for a caller given back.
      await this.conversations.addSpokenOnCall(call.organization_id, conversationId, [transferredLine(effect.transfer.name, effect.transfer.briefing)]);
      await this.save(callId, state);
      return [...actions, ...effect.transfer.actions];
    }
    if (effect?.digits) {
      await this.conversations.addSpokenOnCall(call.organization_id, conversationId, [agentPressedLine(effect.digits)]);
      actions.push({ kind: 'digits', digits: effect.digits });
    }
    if (state.turns >= MAX_TURNS) {
      await this.save(callId, { ...state, nodeId: null });
      return [...actions, { kind: 'say', text: WORDS.turnsGoodbye, voice }, { kind: 'hangup' }];
    }
    if (!state.nodeId) {
      await this.save(callId, state);
      return [...actions, { kind: 'gather', prompt: null, voice }];
    }
    const event: NodeEvent = { speech, digits };
    if (needsResolution(context, state.nodeId)) event.resolved = await this.conversations.resolvedOnCall(call.organization_id, conversationId);
    const next = nextNode(context, state.nodeId, event);
    if (!next) {
      await this.save(callId, state);
      return [...actions, { kind: 'gather', prompt: null, voice }];
    }
    return [...actions, ...(await this.walkOn(call, state, script, next))];
  }

  /**
   * Actions about to be sent to the carrier: a stream among them gets a fresh single-use nonce for
   * its URL, whose SHA-256 is kept on the call (the nonce itself is kept nowhere). The media route
   * consumes it once (media-route.ts). A call is issued one nonce: a second answer (a retry or a
   * replay of a request already answered) gets a URL without one, which opens nothing, so the first
   * URL Twilio was given keeps the call.
   */
  async armStreams(callId: string, actions: VoiceAction[]): Promise<VoiceAction[]> {
    if (!actions.some((action) => action.kind === 'stream')) return actions;
    const { nonce, hash } = newStreamNonce();
    const issued = await query<{ id: string }>(
      this.em.fork(),
      'update calls set stream_nonce_hash = ?, updated_at = ?::timestamptz where id = ? and stream_nonce_hash is null and stream_opened_at is null returning id',
      [hash, at(new Date()), callId],
    );
    if (issued.length === 0) this.logger.warn({ callId }, 'the call was already given its media stream URL; this answer carries none that opens');
    // While the carrier fetches these instructions and opens the stream, its first words are prepared (stream-preparations.ts).
    else this.streamArmed?.(callId);
    return actions.map((action) => (action.kind === 'stream' ? (issued.length > 0 ? { kind: 'stream', nonce } : { kind: 'stream' }) : action));
  }

  /**
   * A transfer's dial reached no one and the caller is back (transfer-webhooks.rest.ts): a call whose
   * agent speaks over the media stream gets its stream again (a new single-use nonce); a batch call
   * hears why and is listened to again, with the failed transfer in its transcript for the model.
   */
  backFromTransfer(callId: string): Promise<VoiceAction[]> {
    return this.scoped(async () => {
      const call = await this.load(callId);
      const state = call?.voice_state;
      if (!call || FINAL.has(call.status)) return [{ kind: 'hangup' }];
      const script = state ? await this.script(call) : null;
      const node = script?.flow?.nodes.find((item) => item.id === state?.nodeId);
      const agent = script?.agents.get(node?.agentId ?? script.agentId ?? '');
      if (!state || !script || isStreamed(agent)) return this.armStreams(callId, [{ kind: 'stream' }]);
      const [row] = await query<{ transfer: StoredTransfer | string | null }>(this.em.fork(), 'select transfer from calls where id = ?', [callId]);
      const stored = typeof row?.transfer === 'string' ? (JSON.parse(row.transfer) as StoredTransfer) : (row?.transfer ?? null);
      const name = stored?.destinationName ?? 'the person';
      const status = stored?.dialStatus ?? 'failed';
      const line = returnedLine(name, status);
      if (call.conversation_id) await this.conversations.addSpokenOnCall(call.organization_id, call.conversation_id, [returnedNote(name, status), line]);
      await this.save(callId, { ...state, reprompts: 0, reply: null });
      return [{ kind: 'gather', prompt: line, voice: this.context(script, state.machine).voiceOf(node?.agentId) }];
    });
  }

  /** Whether the call ended `failed` by our side (failLive: its model or realtime provider failed) rather than by the carrier. */
  async failedOnOurSide(callId: string): Promise<boolean> {
    const call = await this.tracker.get(callId);
    return call?.status === 'failed';
  }

  /** The call ended: its conversation ends too, its resolution criteria judged (or failed with the call). */
  ended(callId: string): Promise<void> {
    return this.scoped(async () => {
      const call = await this.load(callId);
      if (!call?.conversation_id) return;
      // The flow's last lines (the goodbye after the agent's last reply) complete the transcript.
      await this.conversations.addSpokenOnCall(call.organization_id, call.conversation_id, call.voice_state?.said ?? []);
      await this.conversations.closeForCall(call.organization_id, call.conversation_id, call.status === 'failed');
    }).catch((error: unknown) =>
      this.logger.warn({ callId, err: error instanceof Error ? error.message : String(error) }, 'the conversation of an ended call could not be closed'),
    );
  }
}

/**
 * An agent whose voice runs over the call's media stream: speech-to-speech through a provider the
 * bridge speaks (OpenAI Realtime, Gemini Live), or the streaming pipeline.
 */
function isStreamed(agent: AgentRow | undefined): boolean {
  const provider = agent?.voice_config?.stsProvider;
  if (agent?.voice_config?.pipelineMode === PipelineMode.streaming) return true;
  return agent?.voice_config?.pipelineMode === PipelineMode.sts && (provider === StsProvider.openai || provider === StsProvider.google);
}
