import pino from 'pino';
import type { Agent } from '../../agents/agent.entity.js';
import { ConversationStatus } from '../../agents/agent.enums.js';
import type { MediaLink } from '../../telephony/carriers/media-link.js';
import { CallBridge, type BridgeDeps } from './bridge.js';
import { HeldSpeech, type PreparedSpeech } from './speech-preparation.js';
import type { SpeechProvider, SpeechSession } from './speech-provider.js';

/**
 * The ordering a loaded database allows: an adopted (prepared) session talks at once, while the
 * call's conversation is still being opened; the provider may drop in that window, or the caller hang up.
 */
describe('CallBridge, a prepared session lost while its conversation is being opened', () => {
  function harness() {
    let opened!: (id: string) => void;
    const closes: { id: string; status: ConversationStatus }[] = [];
    const failures: string[] = [];
    const deps = {
      conversations: {
        open: () => new Promise<string>((resolve) => (opened = resolve)),
        close: (id: string, status: ConversationStatus) => {
          closes.push({ id, status });
          return Promise.resolve();
        },
        add: () => Promise.resolve(),
      },
      tracker: {
        failLive: (callId: string, reason: string) => {
          failures.push(`${callId}: ${reason}`);
          return Promise.resolve();
        },
      },
      logger: pino({ level: 'silent' }),
      preparedSpeech: () => Promise.resolve(prepared),
    } as unknown as BridgeDeps;
    let lost!: (reason: string) => void;
    const session: SpeechSession = {
      appendCallerAudio: () => {},
      cancelReply: () => {},
      truncate: () => {},
      answerTool: () => {},
      sayFirst: () => {},
      callerKeys: () => {},
      replyAfterTools: () => {},
      updateInstructions: () => {},
      onLost: (listener) => (lost = listener),
      close: () => {},
    };
    const agent = { id: 'agent-1', voiceConfig: { pipelineMode: 'sts', stsProvider: 'openai' } } as unknown as Agent;
    const prepared = {
      kind: 'sts',
      agent,
      context: null,
      answeredAt: null,
      prompt: { guardPolicy: null },
      memory: [],
      speech: { reportsEndOfSpeech: true, modelLabel: () => 'gpt-realtime' } as unknown as SpeechProvider,
      session,
      held: new HeldSpeech(),
      tools: [],
      binding: {},
      opening: null,
    } as unknown as PreparedSpeech;
    const link: MediaLink = { audio: () => {}, clear: () => {}, mark: () => {}, close: () => {}, open: true };
    const bridge = new CallBridge(deps, link, { id: 'call-1', organizationId: 'org-1', agentId: 'agent-1', contactId: null, to: '+15550100' });
    return { bridge, closes, failures, open: (id: string) => opened(id), lose: (reason: string) => lost(reason) };
  }

  it('closes the conversation failed when the provider drops before it is opened', async () => {
    const { bridge, closes, failures, open, lose } = harness();
    const started = bridge.start(() => {});
    await new Promise((resolve) => setImmediate(resolve));
    lose('realtime provider closed the session (code 1006)');
    open('conversation-1');
    await started;
    await bridge.settled();
    expect(closes).toEqual([{ id: 'conversation-1', status: ConversationStatus.failed }]);
    expect(failures).toEqual(['call-1: realtime provider closed the session (code 1006)']);
  });

  it('closes it ended when the caller hangs up before it is opened', async () => {
    const { bridge, closes, failures, open } = harness();
    const started = bridge.start(() => {});
    await new Promise((resolve) => setImmediate(resolve));
    bridge.carrierClosed();
    open('conversation-1');
    await started;
    await bridge.settled();
    expect(closes).toEqual([{ id: 'conversation-1', status: ConversationStatus.ended }]);
    expect(failures).toEqual([]);
  });
});
