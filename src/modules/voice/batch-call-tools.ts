import type { Logger } from 'pino';
import type { Agent } from '../agents/agent.entity.js';
import type { ModelTool } from '../models/model.types.js';
import { carrierModuleOf, type CarrierModules } from '../telephony/carriers/index.js';
import { callTools } from './realtime/call-tools.js';
import { SEND_DIGITS_TOOL, sendDigitsEffect } from './keypad/send-digits-tool.js';
import { TRANSFER_CALL_TOOL } from './transfer/transfer-tool.js';
import type { TransferOutcome, TransferPort } from './transfer/call-transfers.js';
import type { VoiceAction } from './voice-actions.js';

/** What one batch turn's tools asked of the call, once the model answered. */
export interface BatchTurnEffect {
  /** Keys to press after the reply is heard (every send_digits of the turn, in order). */
  digits: string | null;
  /** The transfer the carrier is to be given in this turn's answer (the line and the dial, or the hold and the room). */
  transfer: { name: string; briefing: string | null; actions: VoiceAction[] } | null;
}

/** One turn's tools, and what they asked once the model is done. */
export interface BatchTurnTools {
  tools: (agent: Agent) => ModelTool[];
  effect(): BatchTurnEffect;
}

export interface BatchCallToolsOptions {
  carriers: CarrierModules;
  transfers: Pick<TransferPort, 'transfer'>;
  logger: Logger;
}

/** The call tools a batch call's model is offered: the same definitions as the media-streamed calls' (call-tools.ts). */
const BATCH_TOOLS = new Set([SEND_DIGITS_TOOL, TRANSFER_CALL_TOOL]);

/**
 * A batch call's tools (`<Gather>` → the agent's text model → `<Say>`): transfer_call (when the agent
 * has destinations) and send_digits, as the other pipelines offer them. Nothing is done to the live
 * call while the model writes: a transfer is claimed (CallTransfers, `respond`: do-not-call, once
 * only, `call.transferred`) and its line and `<Dial>` (or hold and conference) go out in the turn's
 * answer; keys are `<Play digits>` after the reply, where the carrier's call control plays them.
 */
export class BatchCallTools {
  constructor(private readonly options: BatchCallToolsOptions) {}

  /** The tools for one caller turn of `call`, at its carrier (`kind`, the calls row's `carrier`). */
  forTurn(call: { id: string; organizationId: string }, kind: string): BatchTurnTools {
    let digits = '';
    let transfer: BatchTurnEffect['transfer'] = null;
    const carrier = carrierModuleOf(this.options.carriers, kind);
    const pressKeys = async (args: Record<string, unknown>): Promise<Record<string, unknown>> => {
      if (!carrier?.callControl.playsDigits) return { sent: false, error: `pressing keys is not available on this carrier (${kind}). Nothing was pressed.` };
      if (transfer) return { sent: false, error: 'the call is being transferred. Nothing was pressed.' };
      const effect = sendDigitsEffect(args);
      if (!effect.digits) return effect.output;
      digits += effect.digits;
      return { sent: true, digits: effect.digits, when: 'after what you say now has been heard' };
    };
    const transferCall = async (agent: Agent, args: Record<string, unknown>): Promise<Record<string, unknown>> => {
      const outcome: TransferOutcome = await this.options.transfers.transfer(call, agent, args, null, { respond: true }).catch((error: unknown) => {
        this.options.logger.warn({ callId: call.id, err: error instanceof Error ? error.message : String(error) }, 'a transfer failed');
        return { output: { transferred: false, error: 'the transfer could not be made; the call goes on with you' }, transferred: null };
      });
      if (outcome.transferred && outcome.actions)
        transfer = { name: outcome.transferred.name, briefing: outcome.transferred.briefing, actions: outcome.actions };
      return outcome.output;
    };
    return {
      tools: (agent) =>
        callTools(agent)
          .filter((tool) => BATCH_TOOLS.has(tool.name))
          .map((tool) => ({
            ...tool,
            execute: (args: Record<string, unknown>) => (tool.name === TRANSFER_CALL_TOOL ? transferCall(agent, args) : pressKeys(args)),
          })),
      effect: () => ({ digits: digits || null, transfer }),
    };
  }
}
