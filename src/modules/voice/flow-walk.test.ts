import { FlowNodeType } from '../programs/program.enums.js';
import { nextNode, walkFrom, type WalkContext } from './flow-walk.js';
import { twilioVoice } from '../telephony/carriers/twilio/twiml.js';

const context = (overrides: Partial<WalkContext> = {}): WalkContext => ({
  nodes: [
    { id: 'start', type: FlowNodeType.start },
    { id: 'vm', type: FlowNodeType.voicemail, label: 'Call us back.' },
    { id: 'hi', type: FlowNodeType.say, label: 'Hi.', agentId: 'a1' },
    { id: 'q', type: FlowNodeType.ask, label: 'Why?', agentId: 'a1' },
    { id: 'desk', type: FlowNodeType.transfer, transferTo: '+14155550100' },
    { id: 'end', type: FlowNodeType.end },
  ],
  edges: [
    { from: 'start', to: 'vm', condition: 'voicemail' },
    { from: 'start', to: 'hi', condition: 'answered' },
    { from: 'vm', to: 'end' },
    { from: 'hi', to: 'q' },
    { from: 'q', to: 'desk', condition: 'digit:0' },
    { from: 'q', to: 'end', condition: 'said:bye' },
  ],
  voiceOf: (id) => (id === 'a1' ? 'Polly.Matthew' : null),
  isSts: () => false,
  machine: false,
  ...overrides,
});

describe('walking a flow on the call', () => {
  it('a person: says, then listens at the ask node', () => {
    const walk = walkFrom(context(), 'start', { outcome: 'answered' });
    expect(walk).toEqual({
      actions: [
        { kind: 'say', text: 'Hi.', voice: 'Polly.Matthew' },
        { kind: 'gather', prompt: 'Why?', voice: 'Polly.Matthew' },
      ],
      reached: ['start', 'hi', 'q'],
      waitingAt: 'q',
    });
  });

  it('a machine: the voicemail is said, then the walk ends at end', () => {
    const walk = walkFrom(context({ machine: true }), 'start', { outcome: 'voicemail' });
    expect(walk.actions).toEqual([{ kind: 'say', text: 'Call us back.', voice: null }, { kind: 'hangup' }]);
    expect(walk.reached).toEqual(['start', 'vm', 'end']);
  });

  it('edges after an ask: a matching condition first, none: stay (null)', () => {
    expect(nextNode(context(), 'q', { digits: '0' })).toBe('desk');
    expect(nextNode(context(), 'q', { speech: 'ok bye now' })).toBe('end');
    expect(nextNode(context(), 'q', { speech: 'hmm' })).toBeNull();
    expect(walkFrom(context(), 'desk', {}).actions).toEqual([{ kind: 'dial', number: '+14155550100' }]);
  });

  it('an sts agent at an ask streams the call; a cycle of say nodes ends', () => {
    expect(walkFrom(context({ isSts: () => true }), 'hi', {}).actions.at(-1)).toEqual({ kind: 'stream' });
    const cycle = context({ nodes: [{ id: 'a', type: FlowNodeType.say, label: 'A' }], edges: [{ from: 'a', to: 'a' }] });
    const walk = walkFrom(cycle, 'a', {});
    expect(walk.actions.at(-1)).toEqual({ kind: 'hangup' });
    expect(walk.reached).toHaveLength(50);
  });

  it('an opt_out node says its label (or the default confirmation), hangs up and asks for the opt-out', () => {
    const flow = context({
      nodes: [...context().nodes, { id: 'out', type: FlowNodeType.opt_out, agentId: 'a1' }, { id: 'out2', type: FlowNodeType.opt_out, label: 'Done, bye.' }],
      edges: [...context().edges, { from: 'q', to: 'out', condition: 'said:stop calling' }, { from: 'q', to: 'out2', condition: 'digit:9' }],
    });
    const out = nextNode(flow, 'q', { speech: 'Please STOP calling me' });
    expect(out).toBe('out');
    expect(walkFrom(flow, out, {})).toEqual({
      actions: [{ kind: 'say', text: 'Understood. We will not call you again. Goodbye.', voice: 'Polly.Matthew' }, { kind: 'hangup' }],
      reached: ['out'],
      waitingAt: null,
      optOut: true,
    });
    expect(walkFrom(flow, nextNode(flow, 'q', { digits: '9' }), {}).actions[0]).toEqual({ kind: 'say', text: 'Done, bye.', voice: null });
    expect(walkFrom(flow, 'start', { outcome: 'answered' }).optOut).toBeUndefined();
  });

  it('maps voiceIds to Twilio voices', () => {
    expect(twilioVoice('Polly.Matthew')).toBe('Polly.Matthew');
    expect(twilioVoice('Google.en-US-Neural2-F')).toBe('Google.en-US-Neural2-F');
    expect(twilioVoice('alice')).toBe('alice');
    expect(twilioVoice('alloy')).toBe('Polly.Joanna');
    expect(twilioVoice(null)).toBe('Polly.Joanna');
  });
});
