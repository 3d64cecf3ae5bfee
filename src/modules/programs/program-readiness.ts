import { LockMode } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Actor } from '../../common/actor.js';
import { AppError, type FieldError } from '../../common/errors.js';
import { Agent } from '../agents/agent.entity.js';
import { AgentStatus, PipelineMode, StsProvider } from '../agents/agent.enums.js';
import type { VoiceConfig } from '../agents/agent.types.js';
import { CarrierConnection } from '../telephony/carrier-connection.entity.js';
import { PhoneNumber } from '../telephony/phone-number.entity.js';
import { ProgramCarrier, programCarrierValues, type CarrierKind } from '../telephony/telephony.enums.js';
import { CallFlow } from './call-flow.entity.js';
import { SPEECH_TO_SPEECH } from '../voice/speech-providers.js';

/** What the checks read of a program, or of a single call (POST /api/calls) placed as one would be. */
export interface ReadinessSubject {
  carrier: ProgramCarrier;
  fromNumber?: { id: string } | null;
  agent?: { id: string } | null;
  flow?: { id: string } | null;
  /** The program's recording setting (a single call records nothing). */
  recording?: { enabled: boolean } | null;
}

/** What the gateway is configured with, as the checks of a program that is to run read it. */
export interface ReadinessSettings {
  /** The kinds of the gateway's carrier modules: what a program's or a call's `carrier` may name besides the simulator. */
  carrierKinds?: readonly CarrierKind[];
  /** PUBLIC_URL: a real carrier's webhooks need it. */
  publicUrl: () => string | undefined;
  /** The variable a model (`<provider>/<model_name>`) or a speech-to-speech provider needs that is not set (e.g. `OPENAI_API_KEY`); null: it can be called. */
  missingFor?: (model: string) => string | null;
  /** What a streaming agent's recognizer and synthesizer lack to run on a real carrier (e.g. `DEEPGRAM_API_KEY is not set`); none: they can. */
  streamingMissing?: (voice: VoiceConfig) => string[];
}

/** The model whose provider an sts agent's speech goes through (its key is that provider's). */
const STS_MODEL = Object.fromEntries(
  SPEECH_TO_SPEECH.map((descriptor) => [descriptor.name, `${descriptor.modelProvider}/${descriptor.models.default}`]),
) as Record<StsProvider, string>;

/**
 * The checks a program passes before it runs: at activation, and on every change of an active
 * program (PUT /api/programs/{id}, GraphQL updateProgram), so that a running execution is never left
 * with a program that cannot place a call. Each fails with one 409 naming everything missing.
 */
export class ProgramReadiness {
  constructor(private readonly settings: ReadinessSettings) {}

  /**
   * Why the carrier a program or a call names is refused (null: it is the simulator or a registered
   * carrier's kind; a call may also say `web`), in the words the GraphQL enum's refusal has.
   */
  carrierError(carrier: string | undefined, options: { web: boolean }): FieldError | null {
    if (carrier === undefined) return null;
    const kinds = this.settings.carrierKinds ?? [];
    const allowed = options.web ? programCarrierValues(kinds) : [ProgramCarrier.simulator, ...kinds];
    return allowed.includes(carrier) ? null : { field: 'carrier', message: `carrier must be one of the following values: ${allowed.join(', ')}` };
  }

  /** `what`: how the message starts ("The program cannot be activated", …). */
  async assert(em: EntityManager, actor: Actor, program: ReadinessSubject, what: string): Promise<void> {
    if (program.carrier !== ProgramCarrier.simulator) {
      const missing = await this.carrierMissing(em, actor, program);
      if (missing.length > 0) throw new AppError('CONFLICT', `${what} on ${program.carrier}: ${missing.join('; ')}`);
    }
    const refused = await this.agentProblems(em, actor, program);
    if (refused.length > 0) throw new AppError('CONFLICT', `${what}: ${refused.join('; ')}`);
  }

  /** A program on a real carrier needs a connection, a caller ID on that carrier and PUBLIC_URL. */
  private async carrierMissing(em: EntityManager, actor: Actor, program: ReadinessSubject): Promise<string[]> {
    const missing: string[] = [];
    const connections = await em.count(CarrierConnection, { organization: actor.organizationId, carrier: program.carrier });
    if (connections === 0) missing.push(`the organization has no ${program.carrier} carrier connection (POST /api/carrier-connections)`);
    const number = program.fromNumber ? await em.findOne(PhoneNumber, { id: program.fromNumber.id, organization: actor.organizationId }) : null;
    if (!number) missing.push('the program has no fromNumberId (a phone number of the organization, its caller ID)');
    else if (!number.carrierConnection) missing.push(`the number ${number.number} has no carrier connection (set its carrierConnectionId)`);
    if (!this.settings.publicUrl()) missing.push('PUBLIC_URL is not set (the carrier’s webhooks need the gateway’s public address; the operator sets it)');
    return missing;
  }

  /**
   * Every agent that would speak (the program's, or its flow's nodes') is active, its model's provider
   * is configured, and it uses a voice pipeline the gateway runs: batch, streaming (through the
   * builtin pair on the simulator, else with its providers' keys), or sts through OpenAI Realtime
   * or Gemini Live with that provider's key. Otherwise one line per agent and what it lacks.
   */
  private async agentProblems(em: EntityManager, actor: Actor, program: ReadinessSubject): Promise<string[]> {
    const flow = program.flow ? await em.findOne(CallFlow, { id: program.flow.id, organization: actor.organizationId }) : null;
    const ids = [...new Set([program.agent?.id, ...(flow?.nodes ?? []).map((node) => node.agentId)].filter((id): id is string => Boolean(id)))];
    if (ids.length === 0) return [];
    // Under a share lock (the caller's transaction): an agent being deleted meanwhile is seen archived, or sees this program active.
    const agents = await em.find(
      Agent,
      { id: { $in: ids }, organization: actor.organizationId },
      { orderBy: { name: 'asc' }, lockMode: LockMode.PESSIMISTIC_READ },
    );
    return agents.flatMap((agent) => {
      const name = `agent "${agent.name}" (${agent.id})`;
      if (agent.status === AgentStatus.draft) return [`${name} is a draft: activate it first (POST /api/agents/${agent.id}/activate, GraphQL activateAgent)`];
      if (agent.status === AgentStatus.archived) return [`${name} is archived: choose another agent`];
      const lacks = [...this.voiceMissing(program, agent.voiceConfig)];
      const model = this.settings.missingFor?.(agent.modelConfig.model);
      if (model && !lacks.some((line) => line.includes(model))) lacks.push(`uses model ${agent.modelConfig.model} (${model} is not set)`);
      return lacks.map((line) => `${name} ${line}`);
    });
  }

  private voiceMissing(program: ReadinessSubject, voice: VoiceConfig | null): string[] {
    if (voice?.pipelineMode === PipelineMode.streaming) {
      // The simulator hears and speaks through the builtin pair: nothing to configure.
      if (program.carrier === ProgramCarrier.simulator) return [];
      const missing = this.settings.streamingMissing?.(voice) ?? ['the streaming pipeline is not configured'];
      return missing.length === 0 ? [] : [`uses pipelineMode streaming, but ${missing.join(' and ')}`];
    }
    if (voice?.pipelineMode !== PipelineMode.sts) return [];
    if (!voice.stsProvider) return ['uses pipelineMode sts with stsProvider (none), which is not available (set stsProvider openai or google)'];
    const key = this.settings.missingFor?.(STS_MODEL[voice.stsProvider]);
    return key ? [`uses pipelineMode sts with stsProvider ${voice.stsProvider} (${key} is not set)`] : [];
  }
}
