import type { EntityManager } from '@mikro-orm/postgresql';
import { sortedPage } from '../../db/keyset.js';
import type { Actor } from '../../common/actor.js';
import { AppError, type FieldError } from '../../common/errors.js';
import { nameOrDescriptionMatch, sortField, type Page, type PageArgs } from '../../common/pagination.js';
import { isUuid } from '../../db/base.entity.js';
import { readPageWith, WHOLE_ROWS, type PageSelection } from '../../db/nested-relation.js';
import { Agent } from '../agents/agent.entity.js';
import { Audience } from '../contacts/audience.entity.js';
import { Organization } from '../organizations/organization.entity.js';
import { CallFlow } from './call-flow.entity.js';
import { FINAL_STATES } from './execution-state.js';
import { Execution } from './execution.entity.js';
import { Program } from './program.entity.js';
import { ProgramKind, ProgramStatus } from './program.enums.js';
import type { CreateProgramInput, UpdateProgramInput } from './program.inputs.js';
import { authorize } from '../organizations/roles.js';
import { PhoneNumber } from '../telephony/phone-number.entity.js';
import { ProgramCarrier } from '../telephony/telephony.enums.js';
import { programRecordingOf } from '../recordings/recording-settings.js';
import { programVoicemailOf, voicemailErrors } from './voicemail/program-voicemail.js';
import { screeningResponseErrors } from '../agents/templates/screening.js';
import { ProgramReadiness, type ReadinessSettings } from './program-readiness.js';
import { agentUsers } from '../agents/agent-usage.js';

export const PROGRAM_SORT_FIELDS = ['createdAt', 'updatedAt', 'name', 'status', 'kind'] as const;

/** A program's settings after an update is applied, before they are checked and written. */
type Settings = Omit<CreateProgramInput, 'flowId' | 'agentId' | 'audienceId' | 'fromNumberId'> & {
  fromNumberId: string | null;
  flowId: string | null;
  agentId: string | null;
  audienceId: string | null;
};

const minutes = (time: string) => Number(time.slice(0, 2)) * 60 + Number(time.slice(3, 5));

/** The rules across fields; each error names the field a user would fix. */
/** `flowNodeIds` is null for a program without a flow, undefined when the flow is not known (a 404 follows). */
export function programRuleErrors(settings: Settings, flowNodeIds: string[] | null | undefined): FieldError[] {
  const errors: FieldError[] = [];
  if (!settings.flowId === !settings.agentId) {
    errors.push({ field: 'flowId', message: 'a program needs exactly one of flowId and agentId' });
  }
  if (settings.scheduledStartAt && settings.scheduledStopAt && settings.scheduledStopAt <= settings.scheduledStartAt) {
    errors.push({ field: 'scheduledStopAt', message: 'scheduledStopAt must be after scheduledStartAt' });
  }
  const window = settings.callingWindow;
  if (window && minutes(window.endTime) <= minutes(window.startTime)) {
    errors.push({ field: 'callingWindow.endTime', message: 'callingWindow.endTime must be after callingWindow.startTime' });
  }
  (settings.autoPauseRules ?? []).forEach((rule, index) => {
    if (flowNodeIds === undefined) return;
    if (flowNodeIds === null) errors.push({ field: `autoPauseRules.${index}.nodeId`, message: 'auto-pause rules need a program with a flow' });
    else if (!flowNodeIds.includes(rule.nodeId)) {
      errors.push({ field: `autoPauseRules.${index}.nodeId`, message: `the flow has no node ${rule.nodeId}` });
    }
  });
  const live = settings.kind === ProgramKind.live;
  if (live && !settings.liveTrigger) errors.push({ field: 'liveTrigger', message: 'a live program needs liveTrigger' });
  if (!live && settings.liveTrigger) errors.push({ field: 'liveTrigger', message: 'only a live program takes liveTrigger' });
  if (settings.liveTrigger?.source === 'entity' && !settings.liveTrigger.entityType) {
    errors.push({ field: 'liveTrigger.entityType', message: 'liveTrigger.entityType is required for source entity' });
  }
  errors.push(...voicemailErrors(settings.voicemail));
  errors.push(...screeningResponseErrors(settings.screeningResponse));
  return errors;
}

/** Programs of the caller's organization. */
export class ProgramService {
  private readonly readiness: ProgramReadiness;

  constructor(
    private readonly em: EntityManager,
    /** Called in the transaction that activates or changes a program, so a live program's triggers follow it (or neither happens). */
    private readonly onProgramChanged?: (em: EntityManager, programId: string) => Promise<unknown>,
    /** What activation and a change of an active program check the gateway's configuration against (PUBLIC_URL, the providers' keys). */
    settings: ReadinessSettings = { publicUrl: () => undefined },
  ) {
    this.readiness = new ProgramReadiness(settings);
  }

  /**
   * A page of programs; `search` matches name or description. `include`: relations of each program
   * (Program.executions, Program.triggers) read in the same statement and kept with it (see nestedRelation).
   */
  async list(actor: Actor, args: PageArgs, include: PageSelection = WHOLE_ROWS): Promise<Page<Program>> {
    const field = sortField(args.sortBy, PROGRAM_SORT_FIELDS);
    const where = {
      organization: actor.organizationId,
      ...nameOrDescriptionMatch(args.search),
    };
    const { rows: data, meta } = await readPageWith(this.em, Program, where, sortedPage(args, field), { organizationId: actor.organizationId, ...include });
    return { data, meta };
  }

  async get(actor: Actor, id: string, em: EntityManager = this.em): Promise<Program> {
    const program = isUuid(id) ? await em.findOne(Program, { id, organization: actor.organizationId }) : null;
    if (!program) throw AppError.notFound('Program');
    return program;
  }

  async create(actor: Actor, input: CreateProgramInput): Promise<Program> {
    authorize(actor, 'programs.manage');
    const settings: Settings = {
      ...input,
      flowId: input.flowId ?? null,
      agentId: input.agentId ?? null,
      audienceId: input.audienceId,
      fromNumberId: input.fromNumberId ?? null,
    };
    const program = this.em.create(Program, {
      organization: this.em.getReference(Organization, actor.organizationId),
      name: input.name,
      kind: input.kind,
    });
    await this.apply(this.em, actor, program, settings);
    await this.em.flush();
    return program;
  }

  /** Changes the fields that are sent; the merged program is checked by the same rules as a new one. */
  async update(actor: Actor, id: string, input: UpdateProgramInput): Promise<Program> {
    authorize(actor, 'programs.manage');
    return this.em.transactional((tx) => this.updateIn(tx, actor, id, input));
  }

  private async updateIn(em: EntityManager, actor: Actor, id: string, input: UpdateProgramInput): Promise<Program> {
    const program = await this.get(actor, id, em);
    // A live program's open execution is found by program: a kind changed after activation would mix a campaign's queue with triggers.
    if (input.kind !== undefined && input.kind !== program.kind && program.status !== ProgramStatus.draft) {
      throw new AppError('CONFLICT', `Only a draft program can change its kind; this one is ${program.status}`);
    }
    const pick = <T>(sent: T | undefined, current: T): T => (sent === undefined ? current : sent);
    const settings: Settings = {
      name: pick(input.name, program.name),
      kind: pick(input.kind, program.kind),
      description: pick(input.description, program.description),
      flowId: pick(input.flowId, program.flow?.id ?? null),
      agentId: pick(input.agentId, program.agent?.id ?? null),
      audienceId: pick(input.audienceId, program.audience?.id ?? null),
      scheduledStartAt: pick(input.scheduledStartAt, program.scheduledStartAt),
      scheduledStopAt: pick(input.scheduledStopAt, program.scheduledStopAt),
      callingWindow: pick(input.callingWindow, program.callingWindow),
      maxConcurrentCalls: pick(input.maxConcurrentCalls, program.maxConcurrentCalls),
      retryPolicy: pick(input.retryPolicy, program.retryPolicy),
      simulatedCaller: pick(input.simulatedCaller, program.simulatedCaller),
      recording: pick(input.recording, program.recording),
      voicemail: pick(input.voicemail, program.voicemail),
      screeningResponse: pick(input.screeningResponse, program.screeningResponse),
      autoPauseRules: pick(input.autoPauseRules, program.autoPauseRules),
      liveTrigger: pick(input.liveTrigger, program.liveTrigger),
      carrier: pick(input.carrier, program.carrier),
      fromNumberId: pick(input.fromNumberId, program.fromNumber?.id ?? null),
    };
    program.name = settings.name;
    program.kind = settings.kind;
    await this.apply(em, actor, program, settings);
    // An active program runs (or can start) executions: it changes only into one that can place its calls, as activation checks.
    if (program.status === ProgramStatus.active)
      await this.readiness.assert(em, actor, program, 'The program is active, and this change would leave it unable to run');
    program.updatedAt = new Date();
    await em.flush();
    if (program.status === ProgramStatus.active) await this.onProgramChanged?.(em, program.id);
    return program;
  }

  /** draft → active; any other state is a CONFLICT. */
  async activate(actor: Actor, id: string): Promise<Program> {
    authorize(actor, 'programs.manage');
    return this.em.transactional(async (tx) => {
      const program = await this.get(actor, id, tx);
      if (program.status !== ProgramStatus.draft) throw new AppError('CONFLICT', `Only a draft program can be activated; this one is ${program.status}`);
      await this.readiness.assert(tx, actor, program, 'The program cannot be activated');
      program.status = ProgramStatus.active;
      program.updatedAt = new Date();
      await tx.flush();
      await this.onProgramChanged?.(tx, program.id);
      return program;
    });
  }

  /** A change of a flow's graph, in its transaction: each active program that calls through the flow must still be able to run (409 naming the first that cannot). */
  async assertFlowChange(em: EntityManager, actor: Actor, flowId: string): Promise<void> {
    const programs = await em.find(
      Program,
      { organization: actor.organizationId, flow: flowId, status: ProgramStatus.active },
      { orderBy: { name: 'asc', id: 'asc' } },
    );
    for (const program of programs) {
      await this.readiness.assert(
        em,
        actor,
        program,
        `The flow is used by the active program "${program.name}" (${program.id}), and this change would leave it unable to run`,
      );
    }
  }

  /** A change of an agent's model or voice, in its transaction: each active program that calls through it (directly or by its flow) must still be able to run. */
  async assertAgentChange(em: EntityManager, actor: Actor, agentId: string): Promise<void> {
    const { programs: using } = await agentUsers(em, actor.organizationId, agentId);
    if (using.length === 0) return;
    const programs = await em.find(
      Program,
      { id: { $in: using.map((program) => program.id) }, organization: actor.organizationId },
      { orderBy: { name: 'asc', id: 'asc' } },
    );
    for (const program of programs) {
      await this.readiness.assert(
        em,
        actor,
        program,
        `The agent is used by the active program "${program.name}" (${program.id}), and this change would leave it unable to run`,
      );
    }
  }

  /** Deletes the program with its executions; refused (409) while one of them is not finished. */
  async delete(actor: Actor, id: string): Promise<void> {
    authorize(actor, 'programs.manage');
    const program = await this.get(actor, id);
    const unfinished = await this.em.count(Execution, { program: program.id, status: { $nin: [...FINAL_STATES] } });
    if (unfinished > 0) throw new AppError('CONFLICT', 'The program has an execution that is not finished; stop or cancel it first');
    await this.em.remove(program).flush();
  }

  /** Checks the settings (400 first, then 404 for records not of the organization) and writes them on the program. */
  private async apply(em: EntityManager, actor: Actor, program: Program, settings: Settings): Promise<void> {
    const organization = actor.organizationId;
    const flow = settings.flowId && isUuid(settings.flowId) ? await em.findOne(CallFlow, { id: settings.flowId, organization }) : null;
    const errors = programRuleErrors(settings, settings.flowId ? flow?.nodes.map((node) => node.id) : null);
    if (!settings.audienceId) errors.push({ field: 'audienceId', message: 'audienceId is required' });
    const carrier = this.readiness.carrierError(settings.carrier, { web: false });
    if (carrier) errors.push(carrier);
    if (errors.length > 0) throw AppError.badInput(errors);
    if (settings.flowId && !flow) throw AppError.notFound('Call flow');
    const agent = settings.agentId ? await em.findOne(Agent, { id: settings.agentId, organization }) : null;
    if (settings.agentId && !agent) throw AppError.notFound('Agent');
    const audience = await em.findOne(Audience, { id: settings.audienceId!, organization });
    if (!audience) throw AppError.notFound('Audience');
    const fromNumber = settings.fromNumberId ? await em.findOne(PhoneNumber, { id: settings.fromNumberId, organization }) : null;
    if (settings.fromNumberId && !fromNumber) throw AppError.notFound('Phone number');
    program.carrier = settings.carrier ?? ProgramCarrier.simulator;
    program.fromNumber = fromNumber;
    program.description = settings.description ?? null;
    program.flow = flow;
    program.agent = agent;
    program.audience = audience;
    program.scheduledStartAt = settings.scheduledStartAt ?? null;
    program.scheduledStopAt = settings.scheduledStopAt ?? null;
    program.callingWindow = settings.callingWindow ? { ...settings.callingWindow } : null;
    program.maxConcurrentCalls = settings.maxConcurrentCalls ?? 1;
    program.retryPolicy = settings.retryPolicy ? { ...settings.retryPolicy } : { maxAttempts: 1, retryDelayMinutes: 0 };
    program.simulatedCaller = settings.simulatedCaller ? { utterances: [...settings.simulatedCaller.utterances] } : null;
    program.recording = programRecordingOf(settings.recording);
    program.voicemail = programVoicemailOf(settings.voicemail);
    program.screeningResponse = settings.screeningResponse ?? null;
    program.autoPauseRules = (settings.autoPauseRules ?? []).map((rule) => ({ ...rule }));
    program.liveTrigger = settings.liveTrigger ? { ...settings.liveTrigger, entityType: settings.liveTrigger.entityType ?? null } : null;
  }
}
