// The bench's `voice` section (`npm run bench -- --only=voice`, also part of the default run): many
// concurrent speech-to-speech calls through the real built server (`node dist/src/main.js`) and its
// real bridge. Each call comes in as Twilio would bring it (the signed /inbound webhook of a number
// bound to an sts agent, the <Stream> URL of its answer, a Media Streams socket sending 20 ms μ-law
// frames in real time from right after its `start`: a turn of speech and silence every CYCLE_MS);
// per provider (--voice-providers, default both), the loopback OpenAI Realtime double
// (test/support/fake-openai-realtime.ts) or Gemini Live double (test/support/fake-gemini-live.ts,
// the gateway transcoding both ways) answers every turn after a declared fixed delay. The doubles
// and the callers run in this process and stamp every frame with performance.now(), so a frame's
// relay through the gateway is read on one clock. Per provider, a stepped ramp (BENCH_VOICE_STEPS,
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
import { startFakeRealtime, type FakeRealtime } from '../support/fake-openai-realtime.js';
import { startFakeGeminiLive, type FakeGeminiLive } from '../support/fake-gemini-live.js';
import type { VoiceProvider } from './options.js';
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
export const CPU_TARGET_MS: Record<VoiceProvider, number> = { openai: 2.5, google: 5 };
export const RSS_TARGET_MB = 1;
const NUMBERS: Record<VoiceProvider, string> = { openai: '+15550100100', google: '+15550100200' };

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
  /** Frames the callers sent from `start` on, before the provider's session was set up (kept by the gateway meanwhile). */
  framesBeforeReady: number;
  /** Frames the provider never received, over the whole calls (the gateway drops caller audio only when its start queue is full: these are lost at the start). */
  lostAtStart: number;
  /** The server process's CPU (user + system, /proc) over the call-seconds carried. */
  cpuMsPerCallSecond: number;
  rssMb: number;
  /** (RSS at the end of the window − the idle RSS after one warm-up call) / calls. */
  rssMbPerCall: number;
  loadAverage: number;
  passed: boolean;
}

export interface VoiceProviderRun {
  provider: VoiceProvider;
  steps: VoiceStep[];
  /** The most concurrent calls of a step that, like every step below it, had p99 added latency ≤ 20 ms and no frame dropped (null: none). */
  maxCalls: number | null;
  idleRssMb: number;
}

export interface VoiceSummary {
  database: string;
  providerDelayMs: number;
  cycleMs: number;
  duration: number;
  runs: VoiceProviderRun[];
  machine: string;
}

const live: { gateway?: ServerProcess; twilio?: FakeTwilio; dataDir?: string } = {};
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

/** What the bench reads of a double's session, either provider's (their stamps are alike). */
interface DoubleSession {
  appendedAt: number[];
  audioSentAt: number[];
  heardTurns: { frameIndex: number; stoppedAt: number; firstAudioIndex: number | null }[];
  closed: Promise<unknown>;
  /** When the gateway's session was set up (OpenAI's first session.update, Gemini's setup). */
  readyAt(): number | null;
  /** The double keeps every message and chunk for the tests' checks; here they are only garbage. */
  trim(): void;
}

/** One caller: its socket, the double's session (once open), and when each of its frames was sent. */
interface BenchCall {
  id: string;
  client: MediaStreamClient;
  session: DoubleSession | null;
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
      call.session?.trim();
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
  gemini: FakeGeminiLive;
}

/** The provider's next session of the gateway, as the bench reads it. */
async function nextSession(setup: Setup, provider: VoiceProvider): Promise<DoubleSession> {
  if (provider === 'openai') {
    const session = await setup.realtime.nextSession(10_000);
    return Object.assign(session, {
      readyAt: () => session.configuredAt,
      trim() {
        if (session.received.length > 500) session.received.length = 0;
        if (session.audioChunks.length > 500) session.audioChunks.length = 0;
      },
    });
  }
  const session = await setup.gemini.nextSession(10_000);
  return Object.assign(session, {
    readyAt: () => session.setupAt,
    trim() {
      if (session.received.length > 500) session.received.length = 0;
      if (session.audioChunks.length > 500) session.audioChunks.length = 0;
    },
  });
}

async function setUp(databaseUrl: string | null, log: (line: string) => void): Promise<Setup> {
  const fakeTwilio = (live.twilio = await startFakeTwilio());
  const realtime = await startFakeRealtime();
  realtime.everyTurn = { caller: 'A bench caller’s turn.', reply: [{ text: REPLY }], delayMs: PROVIDER_DELAY_MS };
  const gemini = await startFakeGeminiLive('gemini-bench-key');
  gemini.everyTurn = { caller: 'A bench caller’s turn.', reply: [{ text: REPLY }], delayMs: PROVIDER_DELAY_MS };
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
      GEMINI_API_KEY: gemini.apiKey,
      GEMINI_BASE_URL: gemini.baseUrl,
      ...(live.dataDir ? { DATA_DIR: live.dataDir } : {}),
    },
  }));
  const api = new ApiClient(gateway.base, key);
  const connection = await api.post<{ id: string }>('/api/carrier-connections', { name: 'Bench Twilio', accountSid: fakeTwilio.accountSid, authToken: fakeTwilio.authToken });
  const agents = {
    openai: { model: 'openai/gpt-realtime', voiceId: 'alloy' },
    google: { model: 'google/gemini-3.8-live', voiceId: 'Kore' },
  };
  for (const [provider, { model, voiceId }] of Object.entries(agents) as [VoiceProvider, { model: string; voiceId: string }][]) {
    const agent = await api.post<{ id: string }>('/api/agents', {
      name: `Bench voice agent (${provider})`,
      instructions: 'You answer the phone for the bench. Keep answers short.',
      modelConfig: { model },
      voiceConfig: { pipelineMode: 'sts', stsProvider: provider, voiceId },
    });
    await api.post(`/api/agents/${agent.id}/activate`);
    await api.post('/api/phone-numbers', { number: NUMBERS[provider], carrierConnectionId: connection.id, inboundAgentId: agent.id });
  }
  log(`  voice: gateway on port ${gateway.port} (log: ${gatewayLog}), ${databaseUrl ? 'PostgreSQL' : 'PGlite'}; sts agents on ${NUMBERS.openai} (openai) and ${NUMBERS.google} (google)`);
  return { gateway, api, connectionId: connection.id, fakeTwilio, realtime, gemini };
}

/**
 * One call as Twilio brings it: the signed inbound webhook, then the answer's media stream, started;
 * its audio starts right after `start` (not once the provider's session is open), as Twilio's does.
 */
async function dialIn(setup: Setup, provider: VoiceProvider, calls: Set<BenchCall>): Promise<BenchCall> {
  const { gateway, fakeTwilio, connectionId } = setup;
  const callSid = `CA${randomBytes(16).toString('hex')}`;
  const url = `${gateway.base}/telephony/twilio/${connectionId}/inbound`;
  const params = { CallSid: callSid, AccountSid: fakeTwilio.accountSid, From: `+1555${String(Math.floor(Math.random() * 1e7)).padStart(7, '0')}`, To: NUMBERS[provider], CallStatus: 'ringing', Direction: 'inbound' };
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
  const next = nextSession(setup, provider);
  client.start(callId, callSid);
  const call: BenchCall = { id: callId, client, session: null, startedAt: performance.now(), sentAt: [] };
  calls.add(call);
  call.session = await next;
  return call;
}

function within(at: number, from: number, to: number): boolean {
  return at >= from && at < to;
}

async function step(setup: Setup, provider: VoiceProvider, count: number, seconds: number, idleRssMb: number, log: (line: string) => void): Promise<VoiceStep> {
  const { gateway, api } = setup;
  const calls = new Set<BenchCall>();
  const pacer = pace(calls);
  const opened: BenchCall[] = [];
  try {
    for (let index = 0; index < count; index++) opened.push(await dialIn(setup, provider, calls));
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
    await Promise.all(opened.map((call) => Promise.race([call.session!.closed, sleep(5000)])));

    const relayIn: number[] = [];
    const relayOut: number[] = [];
    const added: number[] = [];
    let framesIn = 0;
    let framesOut = 0;
    let droppedIn = 0;
    let droppedOut = 0;
    let framesBeforeReady = 0;
    let lostAtStart = 0;
    for (const call of opened) {
      const { client } = call;
      const session = call.session!;
      // Every frame sent reached the provider before its session closed (the gateway relays in order), unless the gateway dropped it.
      const lost = Math.max(0, call.sentAt.length - session.appendedAt.length);
      lostAtStart += lost;
      const readyAt = session.readyAt() ?? Infinity;
      framesBeforeReady += call.sentAt.filter((sentAt) => sentAt < readyAt).length;
      call.sentAt.forEach((sentAt, index) => {
        if (!within(sentAt, from, to)) return;
        framesIn++;
        const arrived = session.appendedAt[index - lost];
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
        const frameSent = call.sentAt[turn.frameIndex + lost];
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
      framesBeforeReady,
      lostAtStart,
      cpuMsPerCallSecond: ((cpuEnd - cpuStart) * 1000) / (count * windowSeconds),
      rssMb: rssPeak,
      rssMbPerCall: (rssEnd - idleRssMb) / count,
      loadAverage: loadavg()[0]!,
      passed: added.length > 0 && percentile(added, 99) <= ADDED_P99_TARGET_MS && droppedIn + droppedOut + lostAtStart === 0,
    };
    const fmt = (value: number | null | undefined) => (value === null || value === undefined ? 'n/a' : value.toFixed(2));
    log(
      `  voice ${provider} ${count} calls, ${windowSeconds.toFixed(1)} s: ${result.turns} turns, added p50 ${fmt(result.addedMs?.p50)} p99 ${fmt(result.addedMs?.p99)} ms ` +
        `(recorded gatewayMs p99 ${fmt(result.recordedGatewayMs?.p99)}), relay p99 in ${fmt(result.relayInP99)} out ${fmt(result.relayOutP99)} ms, ` +
        `frames ${framesIn} in / ${framesOut} out, dropped ${droppedIn} / ${droppedOut}, lost at start ${lostAtStart} (of ${framesBeforeReady} sent before the session was ready), CPU ${result.cpuMsPerCallSecond.toFixed(2)} ms per call-second, ` +
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

export async function voiceBench(
  databaseUrl: string | null,
  database: string,
  duration: number,
  steps: number[],
  providers: VoiceProvider[],
  log: (line: string) => void,
): Promise<VoiceSummary> {
  const setup = await setUp(databaseUrl, log);
  const runs: VoiceProviderRun[] = [];
  try {
    for (const provider of providers) {
      // One call first, unmeasured: the JIT and the pool (and for Google the SDK's loading) warm up.
      const warm = new Set<BenchCall>();
      const pacer = pace(warm);
      const first = await dialIn(setup, provider, warm);
      await sleep(CYCLE_MS);
      pacer.stop();
      first.client.hangUp();
      await sleep(500);
      const idleRssMb = rssMb(setup.gateway.pid) ?? 0;
      log(`  voice ${provider}: steps of ${steps.join(', ')} concurrent calls, ${duration} s measured each; the double answers each turn after ${PROVIDER_DELAY_MS} ms`);
      const results: VoiceStep[] = [];
      for (const calls of steps) {
        const result = await step(setup, provider, calls, duration, idleRssMb, log);
        results.push(result);
        if (result.droppedIn + result.droppedOut + result.lostAtStart > 0 || (result.addedMs?.p99 ?? Infinity) > 10 * ADDED_P99_TARGET_MS) break;
      }
      const failed = results.findIndex((result) => !result.passed);
      const passing = (failed === -1 ? results : results.slice(0, failed)).map((result) => result.calls);
      runs.push({ provider, steps: results, maxCalls: passing.length > 0 ? Math.max(...passing) : null, idleRssMb });
    }
    const summary: VoiceSummary = { database, providerDelayMs: PROVIDER_DELAY_MS, cycleMs: CYCLE_MS, duration, runs, machine: machineLine() };
    if (setup.realtime.problems.length > 0) throw new Error(`the OpenAI double refused events of the gateway: ${JSON.stringify(setup.realtime.problems.slice(0, 3))}`);
    if (setup.gemini.problems.length > 0) throw new Error(`the Gemini Live double refused messages of the gateway: ${JSON.stringify(setup.gemini.problems.slice(0, 3))}`);
    writeFileSync(`${RESULTS}voice.json`, `${JSON.stringify({ finishedAt: new Date().toISOString(), ...summary }, null, 2)}\n`);
    return summary;
  } finally {
    await setup.gateway.stop();
    live.gateway = undefined;
    await setup.realtime.close();
    await setup.gemini.close();
    await setup.fakeTwilio.close();
    if (live.dataDir) rmSync(live.dataDir, { recursive: true, force: true });
    live.dataDir = undefined;
  }
}

export function voiceMarkdown(summary: VoiceSummary): string {
  const fmt = (value: number | null | undefined, digits = 2) => (value === null || value === undefined ? 'n/a' : value.toFixed(digits));
  const mark = (ok: boolean) => (ok ? '✓' : '✗');
  const targets = Object.entries(CPU_TARGET_MS).map(([provider, ms]) => `${provider} ${ms}`).join(', ');
  return [
    `Speech to speech (${summary.runs.map((run) => run.provider).join(', ')}; ${summary.database}): callers send 20 ms μ-law frames in real time from right after \`start\`, a turn every ${summary.cycleMs / 1000} s; ` +
      `each double answers after ${summary.providerDelayMs} ms; ${summary.duration} s measured per step. ${summary.machine}; idle RSS ${summary.runs.map((run) => `${run.provider} ${run.idleRssMb.toFixed(0)} MB`).join(', ')}.`,
    '',
    `| provider | calls | turns | added latency per turn p50 / p99 (ms; target p99 ≤ ${ADDED_P99_TARGET_MS}) | recorded gatewayMs p50 / p99 | frame relay p99 in / out (ms) | frames dropped in / out | frames lost at start (sent before the session was ready) | CPU ms per call-second (target ≤ ${targets}) | RSS per call (MB; target ≤ ${RSS_TARGET_MB}) | load |`,
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
    ...summary.runs.flatMap((run) =>
      run.steps.map(
        (step) =>
          `| ${run.provider} | ${step.calls} | ${step.turns} | ${fmt(step.addedMs?.p50)} / ${fmt(step.addedMs?.p99)}${step.addedMs ? ` ${mark(step.addedMs.p99 <= ADDED_P99_TARGET_MS)}` : ''} | ` +
          `${fmt(step.recordedGatewayMs?.p50)} / ${fmt(step.recordedGatewayMs?.p99)} | ${fmt(step.relayInP99)} / ${fmt(step.relayOutP99)} | ` +
          `${step.droppedIn} / ${step.droppedOut} of ${step.framesIn} / ${step.framesOut} | ${step.lostAtStart} ${mark(step.lostAtStart === 0)} (${step.framesBeforeReady}) | ` +
          `${fmt(step.cpuMsPerCallSecond)} ${mark(step.cpuMsPerCallSecond <= CPU_TARGET_MS[run.provider])} | ` +
          `${fmt(step.rssMbPerCall)} ${mark(step.rssMbPerCall <= RSS_TARGET_MB)} | ${fmt(step.loadAverage)} |`,
      ),
    ),
    '',
    ...summary.runs.map((run) => {
      const larger = run.steps.filter((step) => step.passed && step.calls > (run.maxCalls ?? 0)).map((step) => step.calls);
      return (
        `${run.provider}: most concurrent calls with p99 added latency ≤ ${ADDED_P99_TARGET_MS} ms and no frame dropped or lost (at that step and every step below it): ${run.maxCalls ?? 'none of the steps'}` +
        (larger.length > 0 ? `; a larger step passed too (${larger.join(', ')})` : '')
      );
    }),
  ].join('\n');
}
