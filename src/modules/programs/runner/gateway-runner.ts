import type { ConversationService } from '../../agents/conversation.service.js';
import type { DoNotCallService } from '../../contacts/do-not-call.service.js';
import type { KnowledgeService } from '../../knowledge/knowledge.service.js';
import type { ModelService } from '../../models/model.service.js';
import type { CarrierConnectionService } from '../../telephony/carrier-connection.service.js';
import type { ExecutionEvents } from '../execution-events.js';
import type { CampaignRunnerOptions, RunnerCarriers } from './campaign-runner.js';

/** The parts of the service layer a runner works with (the composition root's `Services` has them all). */
export interface RunnerServices {
  executionEvents: ExecutionEvents;
  /** Copies preparing executions' audiences into their work queues, a few chunks a tick. */
  executionSnapshots: NonNullable<CampaignRunnerOptions['snapshots']>;
  carriers: RunnerCarriers['adapters'];
  carrierConnections: Pick<CarrierConnectionService, 'accountById'>;
  conversations: ConversationService;
  models: ModelService;
  knowledge: KnowledgeService;
  doNotCall: DoNotCallService;
  /** The organization's tools the agents call (services.toolPort). */
  toolPort: NonNullable<NonNullable<CampaignRunnerOptions['streaming']>['tools']>;
}

/**
 * What a campaign runner takes from the gateway it runs beside: the one ExecutionEvents every state
 * change goes through, the real carriers and their accounts, and — when simulated calls are talked —
 * the voice engine's conversations and the streaming pipeline's model and knowledge. main.ts and the
 * tests build their runners from this, so a test's runner is wired as the served one.
 */
export function gatewayRunnerOptions(
  services: RunnerServices,
  settings: { publicUrl?: string; talkSimulatedCalls?: boolean },
): Pick<CampaignRunnerOptions, 'events' | 'snapshots' | 'carriers' | 'conversations' | 'streaming'> {
  return {
    events: services.executionEvents,
    snapshots: services.executionSnapshots,
    carriers: {
      adapters: services.carriers,
      account: async (connectionId) => {
        const account = await services.carrierConnections.accountById(connectionId);
        if (!account) throw new Error(`Carrier connection ${connectionId} is gone`);
        return account;
      },
      publicUrl: settings.publicUrl,
    },
    conversations: settings.talkSimulatedCalls ? services.conversations : undefined,
    streaming: { model: services.models, knowledge: services.knowledge, doNotCall: services.doNotCall, tools: services.toolPort },
  };
}
