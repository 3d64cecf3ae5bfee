import { FlowNodeType } from '../../src/modules/programs/program.enums.js';
import { CALL_OUTCOMES, type CallOutcome } from '../../src/modules/programs/runner/dialer.js';
import { SimulatedDialer, walkFlow, pickOutcome, DEFAULT_OUTCOME_WEIGHTS } from '../../src/modules/programs/runner/simulated-dialer.js';
import { FLOW } from './fixtures.js';

const phones = Array.from({ length: 2000 }, (_, i) => `+1415${String(1_000_000 + i)}`);
const call = (phone: string, attempt = 1) => ({ executionContactId: 'x', phone, timeZone: null, attempt, flow: FLOW, agentId: null });

describe('SimulatedDialer', () => {
  it('is deterministic in (seed, phone, attempt)', async () => {
    const a = new SimulatedDialer({ seed: 's1', speedMs: 0 });
    const b = new SimulatedDialer({ seed: 's1', speedMs: 0 });
    for (const phone of phones.slice(0, 200)) {
      expect(await a.placeCall(call(phone, 2))).toEqual(await b.placeCall(call(phone, 2)));
    }
    const other = new SimulatedDialer({ seed: 's2', speedMs: 0 });
    const differ = phones.filter((phone) => a.outcomeOf(phone, 1) !== other.outcomeOf(phone, 1));
    expect(differ.length).toBeGreaterThan(100);
    const byAttempt = phones.filter((phone) => a.outcomeOf(phone, 1) !== a.outcomeOf(phone, 2));
    expect(byAttempt.length).toBeGreaterThan(100);
  });

  it('draws the default outcomes at about 70/15/5/5/5', () => {
    const dialer = new SimulatedDialer({ speedMs: 0 });
    const counts = Object.fromEntries(CALL_OUTCOMES.map((outcome) => [outcome, 0])) as Record<CallOutcome, number>;
    for (const phone of phones) counts[dialer.outcomeOf(phone, 1)]++;
    for (const outcome of CALL_OUTCOMES) {
      expect(Math.abs(counts[outcome] / phones.length - DEFAULT_OUTCOME_WEIGHTS[outcome] / 100)).toBeLessThan(0.035);
    }
  });

  it('follows configured weights; a zero weight never comes up', () => {
    const onlyBusy = new SimulatedDialer({ speedMs: 0, weights: { answered: 0, no_answer: 0, voicemail: 0, failed: 0, busy: 1 } });
    expect(new Set(phones.map((phone) => onlyBusy.outcomeOf(phone, 1)))).toEqual(new Set(['busy']));
    const weights = { answered: 1, no_answer: 1, busy: 0, voicemail: 0, failed: 0 };
    expect(pickOutcome(0, weights)).toBe('answered');
    expect(pickOutcome(0.4999, weights)).toBe('answered');
    expect(pickOutcome(0.5, weights)).toBe('no_answer');
    expect(pickOutcome(0.9999, weights)).toBe('no_answer');
  });

  it('reports the nodes the flow walk reaches for its outcome, after its delay', async () => {
    const dialer = new SimulatedDialer({ speedMs: 30 });
    const phone = phones.find((p) => dialer.outcomeOf(p, 1) === 'answered')!;
    const started = Date.now();
    const result = await dialer.placeCall(call(phone));
    expect(Date.now() - started).toBeGreaterThanOrEqual(25);
    expect(result.outcome).toBe('answered');
    expect(result.reachedNodeIds).toEqual(['start', 'greet', 'offer', 'end']);
    expect(result.durationSeconds).toBeGreaterThan(0);
  });

  it('reaches no node on a call that never connects; a voicemail walks to the voicemail node', async () => {
    const dialer = new SimulatedDialer({ speedMs: 0, weights: { answered: 1, no_answer: 1, busy: 1, voicemail: 1, failed: 1 } });
    const seen = new Map<CallOutcome, string[]>();
    for (const phone of phones.slice(0, 200)) {
      const result = await dialer.placeCall(call(phone));
      seen.set(result.outcome, result.reachedNodeIds);
    }
    expect(Object.fromEntries(seen)).toEqual({
      answered: ['start', 'greet', 'offer', 'end'],
      voicemail: ['start', 'vm', 'end'],
      no_answer: [],
      busy: [],
      failed: [],
    });
  });
});

describe('walkFlow', () => {
  it('takes the edge whose condition is the outcome, else an unconditioned one', () => {
    expect(walkFlow(FLOW, 'answered')).toEqual(['start', 'greet', 'offer', 'end']);
    expect(walkFlow(FLOW, 'voicemail')).toEqual(['start', 'vm', 'end']);
    expect(walkFlow(FLOW, 'no_answer')).toEqual(['start']);
    expect(walkFlow(null, 'answered')).toEqual([]);
  });

  it('starts at the start node wherever it is listed, and stops at a cycle or a dangling edge', () => {
    const flow = {
      nodes: [
        { id: 'b', type: FlowNodeType.say },
        { id: 'a', type: FlowNodeType.start },
        { id: 'c', type: FlowNodeType.ask },
      ],
      edges: [
        { from: 'a', to: 'b' },
        { from: 'b', to: 'c', condition: 'busy' },
        { from: 'b', to: 'nowhere' },
        { from: 'c', to: 'a' },
      ],
    };
    expect(walkFlow(flow, 'busy')).toEqual(['a', 'b', 'c']);
    expect(walkFlow(flow, 'answered')).toEqual(['a', 'b']);
  });
});
