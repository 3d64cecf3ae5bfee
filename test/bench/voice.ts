// The bench's `voice` section (`npm run bench -- --only=voice`, also part of the default run): many
// concurrent speech-to-speech calls through the real built server (`node dist/src/main.js`) and its
// real bridge. Each call comes in as Twilio would bring it (the signed /inbound webhook of a number
// bound to an sts agent, the <Stream> URL of its answer, a Media Streams socket sending 20 ms μ-law
// frames in real time: a turn of speech and silence every CYCLE_MS); the loopback OpenAI Realtime
// double (test/support/fake-openai-realtime.ts) answers every turn after a declared fixed delay. The
// double and the callers run in this process and stamp every frame with performance.now(), so a
// frame's relay through the gateway is read on one clock. A stepped ramp (BENCH_VOICE_STEPS,
// default 10, 25, 50, 100 calls; each step measured for --duration seconds once all its calls are
// open) runs every step, unless one drops frames or misses the latency target tenfold (the process
// is past what it carries: the ramp stops there). Numbers are reported, never asserted: only a
// broken setup fails the section.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, cpus, loadavg, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import twilio from 'twilio';
import { ApiClient } from './client.js';
import { cpuSeconds } from './runner.js';
import { rssMb, startGateway, type ServerProcess } from './servers.js';
import { startFakeRealtime, type FakeRealtime, type FakeRealtimeSession } from '../support/fake-openai-realtime.js';
import { startFakeTwilio, type FakeTwilio } from '../support/fake-twilio.js';
import { callerSpeech, MediaStreamClient } from '../support/media-stream-client.js';
import { freePort } from '../support/pg-cluster.js';

const RESULTS = fileURLToPath(new URL('./results/', import.meta.url));

/** The double's declared delay: from the end of the caller's speech to its reply's first audio. */
export const PROVIDER_DELAY_MS = 200;
/** One caller turn: SPEECH_MS of speech, then silence (the agent's reply plays in it). */
const SPEECH_MS = 800;
const CYCLE_MS = 3000;
const FRAME_MS = 20;
const FRAME_BYTES = 160;
/** The reply: three words (each 200 ms of audio), sent as fast as the double makes them. */
const REPLY = 'one two three';
/** Targets of issue #23. */
export const ADDED_P99_TARGET_MS = 20;
export const CPU_TARGET_MS = 2.5;
export const RSS_TARGET_MB = 1;
const NUMBER = '+15550100100';

export interface VoiceStep {
  calls: number;
  /** Seconds measured (all the step's calls open). */
  seconds: number;
  callSeconds: number;
  turns: number;
  /** Per turn: relay of the caller's frame that ended the turn (to the provider) + relay of the reply's first audio (to the caller), ms. */
  addedMs: { p50: number; p99: number; max: number } | null;
  /** The same turns as the gateway recorded them on the calls (gatewayMs: received → written to the carrier's socket). */
  recordedGatewayMs: { p50: number; p99: number } | null;
  /** A frame's relay through the gateway, ms: caller → provider, provider → caller. */
  relayInP99: number | null;
  relayOutP99: number | null;
  framesIn: number;
  framesOut: number;
  droppedIn: number;
  droppedOut: number;
  /** The server process's CPU (user + system, /proc) over the call-seconds carried. */
  cpuMsPerCallSecond: number;
  rssMb: number;
  /** (RSS at the end of the window − the idle RSS after one warm-up call) / calls. */
  rssMbPerCall: number;
  loadAverage: number;
  passed: boolean;
}

export interface VoiceSummary {
  provider: string;
  database: string;
  providerDelayMs: number;
  cycleMs: number;
  duration: number;
  steps: VoiceStep[];
  /** The most concurrent calls of a step that, like every step below it, had p99 added latency ≤ 20 ms and no frame dropped (null: none). */
  maxCalls: number | null;
  idleRssMb: number;
  machine: string;
}

const live: { gateway?: ServerProcess; twilio?: FakeTwilio; realtime?: FakeRealtime; dataDir?: string } = {};
/** On a signal or an error: the server goes (the doubles go with this process). */
export function killVoiceBench(): void {
  live.gateway?.kill();
  if (live.dataDir) rmSync(live.dataDir, { recursive: true, force: true });
}

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** One caller: its socket, the double's session, and when each of its frames was sent. */
interface BenchCall {
  id: string;
  client: MediaStreamClient;
  session: FakeRealtimeSession;
  startedAt: number;
  sentAt: number[];
}

/** The caller's audio of one cycle, as 20 ms frames. */
const CYCLE_FRAMES: Buffer[] = (() => {
  const audio = callerSpeech(SPEECH_MS, CYCLE_MS - SPEECH_MS);
  const frames: Buffer[] = [];
  for (let offset = 0; offset < audio.length; offset += FRAME_BYTES) frames.push(audio.subarray(offset, offset + FRAME_BYTES));
  return frames;
})();

/**
 * Sends every open call's frames in real time: each call's n-th frame at start + n × 20 ms (a
 * late tick sends the frames due, so no call falls behind for good).
 */
function pace(calls: Set<BenchCall>): { stop(): void } {
  let stopped = false;
  const tick = () => {
    if (stopped) return;
    const now = performance.now();
    for (const call of calls) {
      const due = Math.floor((now - call.startedAt) / FRAME_MS) + 1;
      while (call.sentAt.length < due) {
        call.client.sendAudio(CYCLE_FRAMES[call.sentAt.length % CYCLE_FRAMES.length]!);
        call.sentAt.push(performance.now());
      }
      // The double keeps every event and chunk for the tests' checks; here they are only garbage for this process to collect.
      if (call.session.received.length > 500) call.session.received.length = 0;
      if (call.session.audioChunks.length > 500) call.session.audioChunks.length = 0;
    }
    setTimeout(tick, 5);
  };
  tick();
  return {
    stop() {
      stopped = true;
    },
  };
}

interface Setup {
  gateway: ServerProcess;
  api: ApiClient;
  connectionId: string;
  fakeTwilio: FakeTwilio;
  realtime: FakeRealtime;
}

async function setUp(databaseUrl: string | null, log: (line: string) => void): Promise<Setup> {
  const fakeTwilio = (live.twilio = await startFakeTwilio());
  const realtime = (live.realtime = await startFakeRealtime());
  realtime.everyTurn = { caller: 'A bench caller’s turn.', reply: [{ text: REPLY }], delayMs: PROVIDER_DELAY_MS };
  const key = `bench_${randomBytes(24).toString('hex')}`;
  const port = await freePort();
  const gatewayLog = `${RESULTS}voice-gateway.log`;
  writeFileSync(gatewayLog, '');
  if (!databaseUrl) live.dataDir = mkdtempSync(join(tmpdir(), 'gateway-voice-bench-'));
  const gateway = (live.gateway = await startGateway(databaseUrl, key, gatewayLog, {
    port,
    env: {
      PUBLIC_URL: `http://127.0.0.1:${port}`,
      TWILIO_API_BASE_URL: fakeTwilio.url,
      CREDENTIALS_KEY: randomBytes(32).toString('hex'),
      OPENAI_API_KEY: 'sk-bench-realtime',
      OPENAI_REALTIME_URL: realtime.url,
      ...(live.dataDir ? { DATA_DIR: live.dataDir } : {}),
    },
  }));
  const api = new ApiClient(gateway.base, key);
  const connection = await api.post<{ id: string }>('/api/carrier-connections', { name: 'Bench Twilio', accountSid: fakeTwilio.accountSid, authToken: fakeTwilio.authToken });
  const agent = await api.post<{ id: string }>('/api/agents', {
    name: 'Bench voice agent',
    instructions: 'You answer the phone for the bench. Keep answers short.',
    modelConfig: { model: 'openai/gpt-realtime' },
    voiceConfig: { pipelineMode: 'sts', stsProvider: 'openai', voiceId: 'alloy' },
  });
  await api.post(`/api/agents/${agent.id}/activate`);
  await api.post('/api/phone-numbers', { number: NUMBER, carrierConnectionId: connection.id, inboundAgentId: agent.id });
  log(`  voice: gateway on port ${gateway.port} (log: ${gatewayLog}), ${databaseUrl ? 'PostgreSQL' : 'PGlite'}; an sts agent on ${NUMBER}`);
  return { gateway, api, connectionId: connection.id, fakeTwilio, realtime };
}

/** One call as Twilio brings it: the signed inbound webhook, then the answer's media stream, started. */
async function dialIn(setup: Setup, calls: Set<BenchCall>): Promise<BenchCall> {
  const { gateway, fakeTwilio, realtime, connectionId } = setup;
  const callSid = `CA${randomBytes(16).toString('hex')}`;
  const url = `${gateway.base}/telephony/twilio/${connectionId}/inbound`;
  const params = { CallSid: callSid, AccountSid: fakeTwilio.accountSid, From: `+1555${String(Math.floor(Math.random() * 1e7)).padStart(7, '0')}`, To: NUMBER, CallStatus: 'ringing', Direction: 'inbound' };
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-twilio-signature': twilio.getExpectedTwilioSignature(fakeTwilio.authToken, url, params) },
    body: new URLSearchParams(params),
  });
  const twiml = await res.text();
  const stream = /<Stream url="([^"]+)"/.exec(twiml);
  if (res.status !== 200 || !stream) throw new Error(`the inbound webhook gave no stream (${res.status}): ${twiml.slice(0, 300)}`);
  const streamUrl = stream[1]!.replace(/&amp;/g, '&');
  const callId = /\/media\/([^/]+)\//.exec(streamUrl)![1]!;
  const client = await MediaStreamClient.open(streamUrl, fakeTwilio.authToken);
  if (!(client instanceof MediaStreamClient)) throw new Error(`the media stream was refused (${client.refused})`);
  const next = realtime.nextSession(10_000);
  client.start(callId, callSid);
  const session = await next;
  const call: BenchCall = { id: callId, client, session, startedAt: performance.now(), sentAt: [] };
  calls.add(call);
  return call;
}

function within(at: number, from: number, to: number): boolean {
  return at >= from && at < to;
}

async function step(setup: Setup, count: number, seconds: number, idleRssMb: number, log: (line: string) => void): Promise<VoiceStep> {
  const { gateway, api } = setup;
  const calls = new Set<BenchCall>();
  const pacer = pace(calls);
  const opened: BenchCall[] = [];
  try {
    for (let index = 0; index < count; index++) opened.push(await dialIn(setup, calls));
    // A turn's time for the last calls to settle in before the window opens.
    await sleep(1000);
    const cpuStart = cpuSeconds(gateway.pid) ?? 0;
    const from = performance.now();
    let rssPeak = rssMb(gateway.pid) ?? 0;
    const sampler = setInterval(() => (rssPeak = Math.max(rssPeak, rssMb(gateway.pid) ?? 0)), 200);
    await sleep(seconds * 1000);
    const to = performance.now();
    const cpuEnd = cpuSeconds(gateway.pid) ?? 0;
    clearInterval(sampler);
    const rssEnd = rssMb(gateway.pid) ?? 0;
    rssPeak = Math.max(rssPeak, rssEnd);
    // What was sent in the window has time to arrive before the calls hang up.
    await sleep(500);
    pacer.stop();
    for (const call of opened) {
      call.client.stop();
      call.client.hangUp();
    }
    await Promise.all(opened.map((call) => Promise.race([call.session.closed, sleep(5000)])));

    const relayIn: number[] = [];
    const relayOut: number[] = [];
    const added: number[] = [];
    let framesIn = 0;
    let framesOut = 0;
    let droppedIn = 0;
    let droppedOut = 0;
    for (const call of opened) {
      const { session, client } = call;
      call.sentAt.forEach((sentAt, index) => {
        if (!within(sentAt, from, to)) return;
        framesIn++;
        const arrived = session.appendedAt[index];
        if (arrived === undefined) droppedIn++;
        else relayIn.push(arrived - sentAt);
      });
      session.audioSentAt.forEach((sentAt, index) => {
        if (!within(sentAt, from, to)) return;
        framesOut++;
        const arrived = client.mediaArrivals[index];
        if (arrived === undefined) droppedOut++;
        else relayOut.push(arrived - sentAt);
      });
      for (const turn of session.heardTurns) {
        if (!within(turn.stoppedAt, from, to) || turn.firstAudioIndex === null) continue;
        const frameSent = call.sentAt[turn.frameIndex];
        const frameArrived = session.appendedAt[turn.frameIndex];
        const audioSent = session.audioSentAt[turn.firstAudioIndex];
        const audioArrived = client.mediaArrivals[turn.firstAudioIndex];
        if (frameSent === undefined || frameArrived === undefined || audioSent === undefined || audioArrived === undefined) continue;
        added.push(frameArrived - frameSent + (audioArrived - audioSent));
      }
    }
    // The gateway's own stamps, as each call recorded them when its stream ended.
    const recorded: number[] = [];
    for (const call of opened) {
      const deadline = Date.now() + 5000;
      for (;;) {
        const row = await api.get<{ turnLatency: { turns: { gatewayMs: number }[] } | null }>(`/api/calls/${call.id}`);
        if (row.turnLatency) {
          recorded.push(...row.turnLatency.turns.map((turn) => turn.gatewayMs));
          break;
        }
        if (Date.now() > deadline) break;
        await sleep(50);
      }
    }
    const windowSeconds = (to - from) / 1000;
    const result: VoiceStep = {
      calls: count,
      seconds: windowSeconds,
      callSeconds: count * windowSeconds,
      turns: added.length,
      addedMs: added.length > 0 ? { p50: percentile(added, 50), p99: percentile(added, 99), max: Math.max(...added) } : null,
      recordedGatewayMs: recorded.length > 0 ? { p50: percentile(recorded, 50), p99: percentile(recorded, 99) } : null,
      relayInP99: relayIn.length > 0 ? percentile(relayIn, 99) : null,
      relayOutP99: relayOut.length > 0 ? percentile(relayOut, 99) : null,
      framesIn,
      framesOut,
      droppedIn,
      droppedOut,
      cpuMsPerCallSecond: ((cpuEnd - cpuStart) * 1000) / (count * windowSeconds),
      rssMb: rssPeak,
      rssMbPerCall: (rssEnd - idleRssMb) / count,
      loadAverage: loadavg()[0]!,
      passed: added.length > 0 && percentile(added, 99) <= ADDED_P99_TARGET_MS && droppedIn + droppedOut === 0,
    };
    const fmt = (value: number | null | undefined) => (value === null || value === undefined ? 'n/a' : value.toFixed(2));
    log(
      `  voice ${count} calls, ${windowSeconds.toFixed(1)} s: ${result.turns} turns, added p50 ${fmt(result.addedMs?.p50)} p99 ${fmt(result.addedMs?.p99)} ms ` +
        `(recorded gatewayMs p99 ${fmt(result.recordedGatewayMs?.p99)}), relay p99 in ${fmt(result.relayInP99)} out ${fmt(result.relayOutP99)} ms, ` +
        `frames ${framesIn} in / ${framesOut} out, dropped ${droppedIn} / ${droppedOut}, CPU ${result.cpuMsPerCallSecond.toFixed(2)} ms per call-second, ` +
        `RSS ${result.rssMb.toFixed(0)} MB (${result.rssMbPerCall.toFixed(2)} MB per call), load ${result.loadAverage.toFixed(2)}`,
    );
    return result;
  } finally {
    pacer.stop();
    for (const call of opened) call.client.hangUp();
    // Let the server end the calls (their records written) before the next step measures its own.
    await sleep(1000);
  }
}

export function machineLine(): string {
  return `${cpus()[0]?.model.trim() ?? 'unknown CPU'}, ${availableParallelism()} cores, ${(totalmem() / 1024 ** 3).toFixed(1)} GB, Node ${process.versions.node}`;
}

export async function voiceBench(databaseUrl: string | null, database: string, duration: number, steps: number[], log: (line: string) => void): Promise<VoiceSummary> {
  const setup = await setUp(databaseUrl, log);
  const results: VoiceStep[] = [];
  try {
    // One call first, unmeasured: the JIT and the pool warm up.
    const warm = new Set<BenchCall>();
    const pacer = pace(warm);
    const first = await dialIn(setup, warm);
    await sleep(CYCLE_MS);
    pacer.stop();
    first.client.hangUp();
    await sleep(500);
    const idleRssMb = rssMb(setup.gateway.pid) ?? 0;
    log(`  voice: steps of ${steps.join(', ')} concurrent calls, ${duration} s measured each; the double answers each turn after ${PROVIDER_DELAY_MS} ms`);
    for (const calls of steps) {
      const result = await step(setup, calls, duration, idleRssMb, log);
      results.push(result);
      if (result.droppedIn + result.droppedOut > 0 || (result.addedMs?.p99 ?? Infinity) > 10 * ADDED_P99_TARGET_MS) break;
    }
    const failed = results.findIndex((result) => !result.passed);
    const passing = (failed === -1 ? results : results.slice(0, failed)).map((result) => result.calls);
    const summary: VoiceSummary = {
      provider: 'openai',
      database,
      providerDelayMs: PROVIDER_DELAY_MS,
      cycleMs: CYCLE_MS,
      duration,
      steps: results,
      maxCalls: passing.length > 0 ? Math.max(...passing) : null,
      idleRssMb,
      machine: machineLine(),
    };
    if (setup.realtime.problems.length > 0) throw new Error(`the OpenAI double refused events of the gateway: ${JSON.stringify(setup.realtime.problems.slice(0, 3))}`);
    writeFileSync(`${RESULTS}voice.json`, `${JSON.stringify({ finishedAt: new Date().toISOString(), ...summary }, null, 2)}\n`);
    return summary;
  } finally {
    await setup.gateway.stop();
    live.gateway = undefined;
    await setup.realtime.close();
    await setup.fakeTwilio.close();
    if (live.dataDir) rmSync(live.dataDir, { recursive: true, force: true });
    live.dataDir = undefined;
  }
}

export function voiceMarkdown(summary: VoiceSummary): string {
  const fmt = (value: number | null | undefined, digits = 2) => (value === null || value === undefined ? 'n/a' : value.toFixed(digits));
  const mark = (ok: boolean) => (ok ? '✓' : '✗');
  return [
    `Speech to speech (${summary.provider}, ${summary.database}): callers send 20 ms μ-law frames in real time, a turn every ${summary.cycleMs / 1000} s; ` +
      `the double answers after ${summary.providerDelayMs} ms; ${summary.duration} s measured per step. ${summary.machine}; idle RSS ${summary.idleRssMb.toFixed(0)} MB.`,
    '',
    `| provider | calls | turns | added latency per turn p50 / p99 (ms; target p99 ≤ ${ADDED_P99_TARGET_MS}) | recorded gatewayMs p50 / p99 | frame relay p99 in / out (ms) | frames dropped in / out | CPU ms per call-second (target ≤ ${CPU_TARGET_MS}) | RSS per call (MB; target ≤ ${RSS_TARGET_MB}) | load |`,
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
    ...summary.steps.map(
      (step) =>
        `| ${summary.provider} | ${step.calls} | ${step.turns} | ${fmt(step.addedMs?.p50)} / ${fmt(step.addedMs?.p99)}${step.addedMs ? ` ${mark(step.addedMs.p99 <= ADDED_P99_TARGET_MS)}` : ''} | ` +
        `${fmt(step.recordedGatewayMs?.p50)} / ${fmt(step.recordedGatewayMs?.p99)} | ${fmt(step.relayInP99)} / ${fmt(step.relayOutP99)} | ` +
        `${step.droppedIn} / ${step.droppedOut} of ${step.framesIn} / ${step.framesOut} | ${fmt(step.cpuMsPerCallSecond)} ${mark(step.cpuMsPerCallSecond <= CPU_TARGET_MS)} | ` +
        `${fmt(step.rssMbPerCall)} ${mark(step.rssMbPerCall <= RSS_TARGET_MB)} | ${fmt(step.loadAverage)} |`,
    ),
    '',
    `Most concurrent calls with p99 added latency ≤ ${ADDED_P99_TARGET_MS} ms and no frame dropped (at that step and every step below it): ${summary.maxCalls ?? 'none of the steps'}` +
      (summary.steps.some((step) => step.passed && step.calls > (summary.maxCalls ?? 0)) ? `; a larger step passed too (${summary.steps.filter((step) => step.passed && step.calls > (summary.maxCalls ?? 0)).map((step) => step.calls).join(', ')})` : ''),
  ].join('\n');
}
