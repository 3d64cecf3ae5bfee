import type { EntityManager } from '@mikro-orm/postgresql';
import { contextFor, renderedPrompt, type CallContext } from '../templates/call-context.js';
import type { Logger } from 'pino';
import { AppError } from '../../../common/errors.js';
import { EventWriter } from '../../events/event-writer.js';
import type { GenerateObjectRequest, GenerateObjectResult } from '../../models/model.types.js';
import { ModelOutputError } from '../../models/model.types.js';
import { at, query } from '../../../db/sql.js';
import { Call } from '../../telephony/call.entity.js';
import { callJson } from '../../telephony/call.types.js';
import { Agent } from '../agent.entity.js';
import type { ChatMessage } from '../agent.ports.js';
import { redactPolicy, userLines } from '../prompt.js';
import { analysisPrompt, answerSchema, answerValidator, checkStructuredData, plansSomething } from './analysis-plan.js';
import { AnalysisStatus, type StoredAnalysis } from './analysis.types.js';

/** What the worker needs of the models module: ModelService satisfies it. */
export interface AnalysisModelPort {
  generateObject(request: GenerateObjectRequest): Promise<GenerateObjectResult>;
}

export interface AnalysisWorkerOptions {
  em: EntityManager;
  model: AnalysisModelPort;
  logger?: Logger;
  /** How often a started worker looks for analyses left due (after a restart, or a claim whose worker died). */
  intervalMs?: number;
  /** How long a claim holds a conversation; past it another worker may take it again. Two model calls fit well within. */
  leaseMs?: number;
  /** Analyses run at once by this worker. */
  concurrency?: number;
}

interface Claimed {
  id: string;
  organization_id: string;
  agent_id: string;
  call_id: string | null;
  analysis_due_at: Date | string;
  /** The claims of this conversation since its analysis was last recorded, this one included. */
  analysis_attempts: number;
}

/**
 * How many claims of a conversation may end without a result (the process died, or the analysis
 * threw) before the next claim records it as failed instead of running it again: a plan that takes
 * the process down cannot crash-loop it after a restart.
 */
export const MAX_ANALYSIS_ATTEMPTS = 3;

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * The policy redaction of what an analysis answers: the summary, and every string (key or value) in
 * data. The one call of redactPolicy here, so a change of how redaction marks text is made once. What
 * the caller said is theirs (prompt.ts, saysPolicy): a summary quoting it is not judged.
 */
function redacted<T>(value: T, policy: string | null, callerSaid: readonly string[]): T {
  if (typeof value === 'string') return redactPolicy(value, policy, callerSaid) as T;
  if (Array.isArray(value)) return value.map((inner: unknown) => redacted(inner, policy, callerSaid)) as T;
  if (isObject(value))
    return Object.fromEntries(Object.entries(value).map(([key, inner]) => [redacted(key, policy, callerSaid), redacted(inner, policy, callerSaid)])) as T;
  return value;
}

/** The analysis a conversation and its call show from the moment it ends until the model has answered. */
export const PENDING_ANALYSIS: StoredAnalysis = { status: AnalysisStatus.pending, summary: null, data: null, error: null, model: null, analyzedAt: null };

/**
 * Fills the analysis plans of ended calls. Ending a call's conversation only marks it due
 * (`analysis_due_at`, in the statement that ends it), so the call's end and the campaign never wait
 * on a model; the closing code then nudges this worker, which claims due conversations with
 * `FOR UPDATE SKIP LOCKED` and a lease, asks the agent's model, and writes the result on the
 * conversation and its call with a `call.analyzed` event in one transaction. A restart loses
 * nothing: what was due, or claimed by a worker that died, is due again and a started worker's tick
 * picks it up. An answer outside the schema is asked for once more, then recorded as the error.
 * Each claim counts: a conversation claimed before and left unrecorded runs alone (one claim, not a
 * batch beside other tenants' calls), and past MAX_ANALYSIS_ATTEMPTS it is recorded as failed.
 */
export class AnalysisWorker {
  private readonly intervalMs: number;
  private readonly leaseMs: number;
  private readonly concurrency: number;
  private timer: NodeJS.Timeout | null = null;
  private draining: Promise<void> | null = null;
  private again = false;
  private closed = false;

  constructor(private readonly options: AnalysisWorkerOptions) {
    this.intervalMs = options.intervalMs ?? 10_000;
    this.leaseMs = options.leaseMs ?? 5 * 60_000;
    this.concurrency = options.concurrency ?? 4;
  }

  /** Looks for due analyses now, in the background; nudges while a pass runs make it look once more. */
  nudge(): void {
    if (this.closed) return;
    if (this.draining) {
      this.again = true;
      return;
    }
    this.draining = this.drain()
      .catch((error: unknown) => this.options.logger?.error({ err: error }, 'call analysis pass failed'))
      .finally(() => {
        this.draining = null;
        if (this.again && !this.closed) {
          this.again = false;
          this.nudge();
        }
      });
  }

  /** Ticks every intervalMs, so what was left due (a restart, a dead worker's claim) is picked up. */
  start(): void {
    if (this.timer || this.closed) return;
    this.nudge();
    this.timer = setInterval(() => this.nudge(), this.intervalMs);
    this.timer.unref();
  }

  /** Resolves once no pass runs and none is asked for again (a nudge during a pass runs one more). */
  async idle(): Promise<void> {
    while (this.draining) await this.draining;
  }

  /** No new pass; waits for the one in flight (its model calls are bounded by the model timeout). */
  async stop(): Promise<void> {
    this.closed = true;
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.idle();
  }

  /**
   * Claims and analyses due conversations until none is due: one claimed before and left unrecorded
   * alone (it may be what took a process down), then new ones `concurrency` at a time.
   */
  async drain(): Promise<void> {
    for (;;) {
      if (this.closed) return;
      let claimed = await this.claim(new Date(), true);
      if (claimed.length === 0) claimed = await this.claim(new Date(), false);
      if (claimed.length === 0) return;
      await Promise.all(claimed.map((row) => this.analyze(row)));
    }
  }

  private claim(now: Date, claimedBefore: boolean): Promise<Claimed[]> {
    return query<Claimed>(
      this.options.em.fork(),
      `update conversations set analysis_due_at = ?::timestamptz, analysis_attempts = analysis_attempts + 1
        where id in (select id from conversations where analysis_due_at <= clock_timestamp() and ${claimedBefore ? 'analysis_attempts > 0' : 'analysis_attempts = 0'}
                     order by analysis_due_at limit ? for update skip locked)
        returning id, organization_id, agent_id, call_id, analysis_due_at, analysis_attempts`,
      // Due by the database's clock (an end stamped by now() is due at once); the lease in whole
      // milliseconds, so the Date read back names this claim exactly when the result is recorded.
      [at(new Date(now.getTime() + this.leaseMs)), claimedBefore ? 1 : this.concurrency],
    );
  }

  private async analyze(row: Claimed): Promise<void> {
    try {
      if (row.analysis_attempts > MAX_ANALYSIS_ATTEMPTS) {
        const tries = MAX_ANALYSIS_ATTEMPTS;
        this.options.logger?.warn(
          { conversationId: row.id, organizationId: row.organization_id, attempts: tries },
          'call analysis failed: claimed too often without a result',
        );
        await this.record(row, this.failed(null, `The analysis was started ${tries} times without finishing; it is not tried again`));
        return;
      }
      await this.record(row, await this.fill(row));
    } catch (error) {
      // The claim's lease runs out and the conversation is due again.
      this.options.logger?.error({ err: error, conversationId: row.id }, 'call analysis not recorded; it is tried again when its claim runs out');
    }
  }

  private failed(model: string | null, error: string): StoredAnalysis {
    return { ...PENDING_ANALYSIS, status: AnalysisStatus.failed, error, model, analyzedAt: new Date().toISOString() };
  }

  /** The analysis of one conversation: completed, or failed with the reason. */
  private async fill(row: Claimed): Promise<StoredAnalysis> {
    const em = this.options.em.fork();
    const agent = await em.findOne(Agent, { id: row.agent_id, organization: row.organization_id });
    const plan = agent?.analysisPlan;
    const model = agent?.modelConfig.model ?? null;
    const failed = (error: string) => this.failed(model, error);
    if (!agent || !plansSomething(plan)) return failed('The agent no longer has an analysis plan');
    // A plan stored before a bound existed is checked as a new one would be, and not run when refused.
    if (plan.structuredData) {
      try {
        await checkStructuredData(plan.structuredData);
      } catch (error) {
        if (!(error instanceof AppError)) throw error;
        return failed(`The analysis plan is no longer accepted: ${error.errors?.[0]?.message ?? error.message}`);
      }
    }
    const messages = await query<ChatMessage>(em, 'select role, content from messages where conversation_id = ? order by sequence', [row.id]);
    const [kept] = await query<{ context: CallContext | string | null }>(em, 'select context from conversations where id = ?', [row.id]);
    const context = typeof kept?.context === 'string' ? (JSON.parse(kept.context) as CallContext) : (kept?.context ?? null);
    const guardPolicy = renderedPrompt(agent, contextFor(agent, context)).guardPolicy;
    if (messages.length === 0) return failed('Nothing was said on the call');
    const validate = await answerValidator(plan);
    const request: GenerateObjectRequest = {
      model: agent.modelConfig.model,
      ...analysisPrompt(plan, messages),
      schema: answerSchema(plan),
      transcript: messages,
      settings: agent.modelConfig.modelSettings ?? null,
      providerOptions: agent.modelConfig.providerOptions ?? null,
    };
    let reason = '';
    // An answer outside the schema is asked for once more; a provider that fails is not (it would fail alike).
    for (let attempt = 1; attempt <= 2; attempt++) {
      try {
        const checked = validate((await this.options.model.generateObject(request)).object);
        if (checked.ok) {
          const { summary, data } = redacted(checked.value, guardPolicy, userLines(messages));
          return { status: AnalysisStatus.completed, summary, data, error: null, model, analyzedAt: new Date().toISOString() };
        }
        reason = checked.reason;
      } catch (error) {
        if (error instanceof ModelOutputError) reason = error.message;
        else if (error instanceof AppError) return failed(error.message);
        else throw error;
      }
    }
    return failed(`The model answered outside the schema twice: ${reason}`);
  }

  /** The result on the conversation and its call, and call.analyzed, in one transaction; only while this claim holds it. */
  private async record(row: Claimed, analysis: StoredAnalysis): Promise<void> {
    const json = JSON.stringify(analysis);
    await this.options.em.fork().transactional(async (tx) => {
      const held = await query(
        tx,
        `update conversations set analysis = ?::jsonb, analysis_due_at = null, analysis_attempts = 0, updated_at = now()
          where id = ? and analysis_due_at = ?::timestamptz returning id`,
        [json, row.id, at(new Date(row.analysis_due_at))],
      );
      if (held.length === 0 || !row.call_id) return;
      await query(tx, 'update calls set analysis = ?::jsonb, updated_at = now() where id = ? and organization_id = ?', [
        json,
        row.call_id,
        row.organization_id,
      ]);
      const call = await tx.findOne(Call, { id: row.call_id, organization: row.organization_id }, { refresh: true });
      if (call) await EventWriter.write(tx, { organizationId: row.organization_id, type: 'call.analyzed', payload: callJson(call) });
    });
  }
}
