// The bench's `voice` section (`npm run bench -- --only=voice`, also part of the default run): many
// concurrent speech-to-speech calls through the real built server (`node dist/src/main.js`) and its
// real bridge. Each call comes in as Twilio would bring it (the signed /inbound webhook of a number
// bound to an sts agent, the <Stream> URL of its answer, a Media Streams socket sending 20 ms μ-law
// frames in real time from right after its `start`: LEAD_IN_MS of silence, as someone who picks up
// waits to hear who it is, then a turn of speech and silence every CYCLE_MS);
// per provider (--voice-providers, default all three, streaming below), the loopback OpenAI Realtime double
// (test/support/fake-openai-realtime.ts) or Gemini Live double (test/support/fake-gemini-live.ts,
// the gateway transcoding both ways) answers every turn after a declared fixed delay. The doubles
// and the callers run in this process and stamp every frame with performance.now(), so a frame's
// relay through the gateway is read on one clock. Per provider, a stepped ramp (BENCH_VOICE_STEPS,
// default 10, 25, 50, 100 calls; each step measured for --duration seconds once all its calls are
// open) runs every step, unless one drops frames or misses the latency target tenfold (the process
// is past what it carries: the ramp stops there). Numbers are reported, never asserted: only a
// broken setup fails the section.
//
// The `streaming` provider is the streaming pipeline (src/modules/voice/streaming/streaming-call.ts)
// through the same media route: the number's agent has pipelineMode streaming, model builtin/echo,
// Deepgram as its recognizer and ElevenLabs as its synthesizer, both loopback doubles
// (test/support/fake-deepgram.ts, fake-elevenlabs.ts, each checking what it is sent against the
// vendor's AsyncAPI). Deepgram ends each turn after the gateway's endpointing (300 ms of silence in
// the audio it hears) and sends its final at once; ElevenLabs sends a reply's first audio
// STREAMING_FIRST_AUDIO_MS after its first text. Every caller speaks its own words (`Caller <n>.`),
// which the echo model repeats, so each reply's synthesizer stream is known to be its call's. Per
// turn the section reads the gateway's own share as the pipeline recorded it (`turnLatency`'s
// gatewayMs) and, on the bench's one clock, the relay of the turn's last frame to Deepgram, the
// time from Deepgram's final to the reply's first text at ElevenLabs (the gateway's turn handling,
// the in-process model included) and from ElevenLabs' first audio to the caller.
//
// The streaming provider's calls also arrive the gateway's other two ways (--voice-arrivals, default
// twilio,telnyx,web; voice-arrivals.ts): through Telnyx (a signed TeXML webhook of a number on a
// Telnyx connection, then Telnyx Media Streaming's frames) and as web calls (a token, then the
// /talk/socket). Each is its own ramp at the same steps, with the same doubles, pacing and clock; the
// speech-to-speech providers, the back-channel and the first-message tracks arrive through Twilio.
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, cpus, loadavg, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import twilio from 'twilio';
import { ApiClient } from './client.js';
import { cpuSeconds } from './runner.js';
import { BENCH_METRICS_TOKEN, rssMb, startGateway, type ServerProcess } from './servers.js';
import { startFakeRealtime, type FakeRealtime } from '../support/fake-openai-realtime.js';
import { startFakeGeminiLive, type FakeGeminiLive } from '../support/fake-gemini-live.js';
import { startFakeDeepgram, type FakeDeepgram, type FakeDeepgramSession } from '../support/fake-deepgram.js';
import { startFakeElevenLabs, type FakeElevenLabs, type FakeElevenLabsStream } from '../support/fake-elevenlabs.js';
import type { VoiceArrival, VoiceProvider } from './options.js';
import { startFakeTwilio, type FakeTwilio } from '../support/fake-twilio.js';
import { startFakeTelnyx, type FakeTelnyx } from '../support/fake-telnyx.js';
import { TelnyxMediaCaller } from '../support/telnyx-media-caller.js';
import { arrivalsMarkdown, WebCaller } from './voice-arrivals.js';
import { callerSpeech, MediaStreamClient } from '../support/media-stream-client.js';
import { freePort } from '../support/pg-cluster.js';
import {
  builtinVoiceCpu,
  firstAudioMarkdown,
  firstAudioNumbers,
  type BuiltinVoiceCpu,
  type FirstAudioCall,
  type FirstAudioNumbers,
} from './voice-first-audio.js';
import {
  BACK_CHANNEL_GREETING,
  BACK_CHANNEL_TRACKS,
  backChannelMarkdown,
  backChannelNumbers,
  runBackChannelCall,
  type BackChannelNumbers,
  type BackChannelTrack,
} from './voice-back-channel.js';

const RESULTS = fileURLToPath(new URL('./results/', import.meta.url));
const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** The double's declared delay: from the end of the caller's speech to its reply's first audio. */
export const PROVIDER_DELAY_MS = 200;
/** One caller turn: SPEECH_MS of speech, then silence (the agent's reply plays in it). */
const SPEECH_MS = 800;
const CYCLE_MS = 3000;
/**
 * Each caller's silence before its first turn: the agent's first message is heard before the caller
 * speaks (a caller speaking at once cuts it before its first audio when that comes later than the
 * recognizer's first words, ~160 ms of speech: then no first audio is recorded at all).
 */
const LEAD_IN_MS = 1000;
const FRAME_MS = 20;
const FRAME_BYTES = 160;
/** The reply: three words (each 200 ms of audio), sent as fast as the double makes them. */
const REPLY = 'one two three';
/** Targets of issue #23 (speech to speech). */
export const ADDED_P99_TARGET_MS = 20;
export const CPU_TARGET_MS: Partial<Record<VoiceProvider, number>> = { openai: 2.5, google: 5 };
export const RSS_TARGET_MB = 1;
const NUMBERS: Record<VoiceProvider, string> = { openai: '+15550100100', google: '+15550100200', streaming: '+15550100300' };
/** The streaming agent's number on the Telnyx connection (the Telnyx arrival's calls). */
const TELNYX_NUMBER = '+15550100320';
/** The Telnyx connection's TeXML Application (it places no call here: inbound only). */
const TELNYX_APPLICATION_ID = '2000000000000000320';
/** Credits granted for the web arrival's calls (a web call takes one when its token is claimed; phone calls take none). */
const WEB_CALL_CREDITS = 1_000_000;
/** The back-channel track's streaming agents (voice-back-channel.ts), by interruptions mode. */
const BACK_CHANNEL_NUMBERS = { words: '+15550100310', any: '+15550100311' } as const;
/** Concurrent calls of each back-channel track. */
const BACK_CHANNEL_CALLS = 10;
/** The speech-to-speech agents that speak first (the ramp's wait for the caller): answer → first audio, per provider. */
const FIRST_MESSAGE_NUMBERS: Partial<Record<VoiceProvider, string>> = { openai: '+15550100110', google: '+15550100210' };
const FIRST_MESSAGE = 'Hello, this is the bench calling.';
/** The streaming rows: the ElevenLabs double's first audio of a reply this long after its first text (its flash model's own figure is about 75 ms, plus the network). */
export const STREAMING_FIRST_AUDIO_MS = 100;
/** The streaming pipeline's target: the gateway's own share of a turn (recorded gatewayMs), p99, at 100 concurrent calls. */
export const STREAMING_GATEWAY_P99_TARGET_MS = 30;
/** What each streaming caller says: its own number, so its replies (the echo model repeats it) are known to be its. */
const callerWords = (tag: number) => `Caller ${tag}.`;

export interface Spread {
  p50: number;
  p99: number;
  max: number;
}

/** The streaming rows' numbers of one step. */
export interface StreamingStepNumbers {
  /** Turns the calls recorded whose speech ended in the window. */
  recordedTurns: number;
  /** Their parts (turnLatency): the gateway's own share, the providers', the grace period's wait, the total. */
  gatewayMs: Spread | null;
  recognizerMs: Spread | null;
  modelMs: Spread | null;
  synthesizerMs: Spread | null;
  waitMs: Spread | null;
  totalMs: Spread | null;
  /** On the bench's clock, per turn: Deepgram's final sent → the reply's first text received by ElevenLabs (the gateway's turn handling, the builtin model included). */
  finalToTextMs: Spread | null;
  /** ElevenLabs' first audio of a reply sent → the caller received it. */
  firstAudioRelayMs: Spread | null;
  /** Calls that ended failed (a provider lost, a reply not in time). */
  failedCalls: number;
}

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
  /**
   * Event-loop delay over the window, p99 / max in ms past the monitors' 10 ms timer (their
   * histograms hold the whole interval): the gateway's (prom-client's monitor, read from /metrics,
   * which resets it on each read) and the bench process's own (the callers and doubles: its stamps
   * are late by as much).
   */
  eventLoopDelayMs: { gateway: { p99: number; max: number } | null; bench: { p99: number; max: number } };
  /** Of the machine's CPU time over the window (/proc/stat, all cores): the gateway's, the bench process's (callers and doubles), and the rest (PostgreSQL and whatever else runs), in %; the gateway's and the bench's from their own CPU counters. */
  machineCpuPercent: { gateway: number; bench: number; rest: number; idle: number } | null;
  passed: boolean;
  /** The streaming rows only. */
  streaming?: StreamingStepNumbers;
  /** Answer → the first message's first audio, against its baseline (voice-first-audio.ts). */
  firstAudio: FirstAudioNumbers;
}

export interface VoiceProviderRun {
  provider: VoiceProvider;
  /** How its calls arrived (Telnyx and web: the streaming provider only). */
  arrival: VoiceArrival;
  steps: VoiceStep[];
  /** The most concurrent calls of a step that, like every step below it, had p99 added latency ≤ 20 ms (streaming: recorded gatewayMs ≤ 30 ms) and no frame dropped (null: none). */
  maxCalls: number | null;
  idleRssMb: number;
}

export interface VoiceSummary {
  database: string;
  providerDelayMs: number;
  streamingFirstAudioMs: number;
  cycleMs: number;
  duration: number;
  /** How the calls arrived (--voice-arrivals). */
  arrivals: VoiceArrival[];
  runs: VoiceProviderRun[];
  machine: string;
  /** The builtin voice's CPU per second of speech (null: not measured). */
  builtinVoice: BuiltinVoiceCpu | null;
  /** The back-channel track (streaming only; null: streaming not measured). */
  backChannel: BackChannelNumbers | null;
  /** Speech to speech: answer → the first message's first audio, on agents that speak first (the ramp's wait for the caller). */
  firstMessage: { provider: VoiceProvider; calls: number; numbers: FirstAudioNumbers }[];
}

const live: { gateway?: ServerProcess; twilio?: FakeTwilio; dataDir?: string } = {};
let tags = 0;
/** On a signal or an error: the server goes (the doubles go with this process). */
export function killVoiceBench(): void {
  live.gateway?.kill();
  if (live.dataDir) rmSync(live.dataDir, { recursive: true, force: true });
}

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}
function spread(values: number[]): Spread | null {
  return values.length > 0 ? { p50: percentile(values, 50), p99: percentile(values, 99), max: Math.max(...values) } : null;
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

/** A caller's side of a call, whichever way it arrived: its 20 ms frames out, the stamps of the audio it received. */
interface BenchCaller {
  sendAudio(frame: Buffer): unknown;
  /** When each audio frame (a media message) arrived, performance.now(), in order. */
  readonly mediaArrivals: number[];
  /** The carrier's (or the page's) end of the stream, then the socket's close. */
  stop(): void;
  hangUp(): void;
  /** What the gateway sent it otherwise than its protocol says (the Telnyx and web callers check; Twilio publishes no schema to check against). */
  readonly problems?: readonly string[];
}

/** The calls' callers were sent only what their protocols take: else the setup is broken and the section fails. */
function checkCallers(calls: Iterable<BenchCall>, arrival: VoiceArrival): void {
  const problems = [...calls].flatMap((call) => call.client.problems ?? []);
  if (problems.length > 0)
    throw new Error(`the gateway sent the ${arrival} callers what their protocol does not take: ${JSON.stringify(problems.slice(0, 3))}`);
}

/** One caller: its socket, the double's session (once open), and when each of its frames was sent. */
interface BenchCall<Client extends BenchCaller = BenchCaller> {
  id: string;
  client: Client;
  session: DoubleSession | null;
  /** Streaming: the Deepgram session (also `session`), and the number the caller says. */
  deepgram?: FakeDeepgramSession;
  tag?: number;
  startedAt: number;
  sentAt: number[];
  /** The carrier's part of the answer → first audio, on the bench's clock: the webhook's answer received → the stream's start sent. */
  carrierMs: number;
}

/** The caller's audio of one cycle, as 20 ms frames. */
const CYCLE_FRAMES: Buffer[] = (() => {
  const audio = callerSpeech(SPEECH_MS, CYCLE_MS - SPEECH_MS);
  const frames: Buffer[] = [];
  for (let offset = 0; offset < audio.length; offset += FRAME_BYTES) frames.push(audio.subarray(offset, offset + FRAME_BYTES));
  return frames;
})();

/** The lead-in's frames: μ-law silence. */
const LEAD_IN_FRAMES = LEAD_IN_MS / FRAME_MS;
const SILENT_FRAME = callerSpeech(0, FRAME_MS);

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
        const index = call.sentAt.length - LEAD_IN_FRAMES;
        call.client.sendAudio(index < 0 ? SILENT_FRAME : CYCLE_FRAMES[index % CYCLE_FRAMES.length]!);
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
  /** The Telnyx arrival: the loopback Telnyx (every REST request checked against Telnyx's OpenAPI) and the connection its number is on. */
  telnyx: FakeTelnyx;
  telnyxConnectionId: string;
  /** The web arrival: the streaming agent the tokens are for. */
  streamingAgentId: string;
  realtime: FakeRealtime;
  gemini: FakeGeminiLive;
  deepgram: FakeDeepgram;
  elevenlabs: FakeElevenLabs;
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
  if (provider === 'streaming') {
    const session = await setup.deepgram.nextSession(10_000);
    return {
      // Deepgram's session hears the caller; the replies come from ElevenLabs' streams, read apart.
      appendedAt: session.audioAt,
      audioSentAt: [],
      heardTurns: [],
      closed: session.closed,
      readyAt: () => session.openedAt,
      trim() {
        if (session.received.length > 500) session.received.length = 0;
        if (session.sent.length > 500) session.sent.length = 0;
        if (session.audioChunks.length > 500) session.audioChunks.length = 0;
      },
      deepgram: session,
    } as DoubleSession;
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

/** Credits the operator's way (the CLI: on PostgreSQL beside the server, on PGlite through the running server's operator socket). */
function grantCredits(databaseUrl: string | null, organizationId: string, amount: number): void {
  const result = spawnSync(
    process.execPath,
    [`${ROOT}dist/src/cli.js`, 'credits:add', '--org', organizationId, '--amount', String(amount), '--reason', 'voice bench: web calls'],
    {
      cwd: ROOT,
      env: { ...process.env, ...(databaseUrl ? { DATABASE_URL: databaseUrl } : { DATA_DIR: live.dataDir }) },
      encoding: 'utf8',
    },
  );
  if (result.status !== 0) throw new Error(`credits:add failed: ${result.stderr || result.stdout}`);
}

async function setUp(databaseUrl: string | null, arrivals: VoiceArrival[], log: (line: string) => void): Promise<Setup> {
  const fakeTwilio = (live.twilio = await startFakeTwilio());
  const telnyx = await startFakeTelnyx();
  const realtime = await startFakeRealtime();
  realtime.everyTurn = { caller: 'A bench caller’s turn.', reply: [{ text: REPLY }], delayMs: PROVIDER_DELAY_MS };
  const gemini = await startFakeGeminiLive('gemini-bench-key');
  gemini.everyTurn = { caller: 'A bench caller’s turn.', reply: [{ text: REPLY }], delayMs: PROVIDER_DELAY_MS };
  const deepgram = await startFakeDeepgram({ apiKey: 'dg-bench-key' });
  const elevenlabs = await startFakeElevenLabs({ apiKey: 'xi-bench-key' });
  elevenlabs.faults.firstAudioDelayMs = STREAMING_FIRST_AUDIO_MS;
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
      TELNYX_API_BASE_URL: telnyx.url,
      // The web calls are one key's and one organization's: their live-connection places (10 and 50 by default) would cap a step.
      LIVE_CONNECTIONS_PER_KEY: '10000',
      LIVE_CONNECTIONS_PER_ORG: '10000',
      CREDENTIALS_KEY: randomBytes(32).toString('hex'),
      OPENAI_API_KEY: 'sk-bench-realtime',
      OPENAI_REALTIME_URL: realtime.url,
      GEMINI_API_KEY: gemini.apiKey,
      GEMINI_BASE_URL: gemini.baseUrl,
      DEEPGRAM_API_KEY: deepgram.apiKey,
      DEEPGRAM_BASE_URL: deepgram.baseUrl,
      ELEVENLABS_API_KEY: elevenlabs.apiKey,
      ELEVENLABS_BASE_URL: elevenlabs.baseUrl,
      ...(live.dataDir ? { DATA_DIR: live.dataDir } : {}),
    },
  }));
  const api = new ApiClient(gateway.base, key);
  const connection = await api.post<{ id: string }>('/api/carrier-connections', {
    name: 'Bench Twilio',
    accountSid: fakeTwilio.accountSid,
    authToken: fakeTwilio.authToken,
  });
  // Checked by the gateway against the loopback Telnyx (a request of its own, validated there) before it is stored.
  const telnyxConnection = await api.post<{ id: string }>('/api/carrier-connections', {
    name: 'Bench Telnyx',
    carrier: 'telnyx',
    accountSid: telnyx.accountSid,
    authToken: telnyx.apiKey,
    publicKey: telnyx.publicKey,
    applicationId: TELNYX_APPLICATION_ID,
  });
  let streamingAgentId = '';
  const agents: Record<VoiceProvider, { model: string; voiceConfig: Record<string, unknown> }> = {
    openai: { model: 'openai/gpt-realtime', voiceConfig: { pipelineMode: 'sts', stsProvider: 'openai', voiceId: 'alloy' } },
    google: { model: 'google/gemini-3.8-live', voiceConfig: { pipelineMode: 'sts', stsProvider: 'google', voiceId: 'Kore' } },
    // The model in-process and instant (it repeats the caller's words): what is timed is the gateway's own work around it.
    streaming: { model: 'builtin/echo', voiceConfig: { pipelineMode: 'streaming', sttProvider: 'deepgram', ttsProvider: 'elevenlabs' } },
  };
  for (const [provider, { model, voiceConfig }] of Object.entries(agents) as [VoiceProvider, (typeof agents)[VoiceProvider]][]) {
    const agent = await api.post<{ id: string }>('/api/agents', {
      name: `Bench voice agent (${provider})`,
      instructions: 'You answer the phone for the bench. Keep answers short.',
      modelConfig: { model },
      voiceConfig,
      // The speech-to-speech agents wait for the caller, as before agents had a first message: what is timed is the caller's turns.
      ...(provider === 'streaming' ? {} : { firstMessageMode: 'wait_for_caller' }),
    });
    await api.post(`/api/agents/${agent.id}/activate`);
    await api.post('/api/phone-numbers', { number: NUMBERS[provider], carrierConnectionId: connection.id, inboundAgentId: agent.id });
    if (provider === 'streaming') {
      streamingAgentId = agent.id;
      await api.post('/api/phone-numbers', { number: TELNYX_NUMBER, carrierConnectionId: telnyxConnection.id, inboundAgentId: agent.id });
    }
  }
  if (arrivals.includes('web')) grantCredits(databaseUrl, (await api.get<{ id: string }>('/api/organization')).id, WEB_CALL_CREDITS);
  for (const [provider, number] of Object.entries(FIRST_MESSAGE_NUMBERS) as [VoiceProvider, string][]) {
    const { model, voiceConfig } = agents[provider];
    const agent = await api.post<{ id: string }>('/api/agents', {
      name: `Bench first-message agent (${provider})`,
      instructions: 'You call customers for the bench.',
      modelConfig: { model },
      voiceConfig,
      firstMessage: FIRST_MESSAGE,
    });
    await api.post(`/api/agents/${agent.id}/activate`);
    await api.post('/api/phone-numbers', { number, carrierConnectionId: connection.id, inboundAgentId: agent.id });
  }
  for (const mode of ['words', 'any'] as const) {
    const agent = await api.post<{ id: string }>('/api/agents', {
      name: `Bench back-channel agent (${mode})`,
      instructions: 'You call customers for the bench.',
      modelConfig: { model: 'builtin/echo' },
      voiceConfig: { ...agents.streaming.voiceConfig, interruptions: { mode } },
      firstMessage: BACK_CHANNEL_GREETING,
    });
    await api.post(`/api/agents/${agent.id}/activate`);
    await api.post('/api/phone-numbers', { number: BACK_CHANNEL_NUMBERS[mode], carrierConnectionId: connection.id, inboundAgentId: agent.id });
  }
  log(
    `  voice: gateway on port ${gateway.port} (log: ${gatewayLog}), ${databaseUrl ? 'PostgreSQL' : 'PGlite'}; sts agents on ${NUMBERS.openai} (openai) and ${NUMBERS.google} (google), ` +
      `a streaming agent (builtin/echo, Deepgram, ElevenLabs) on ${NUMBERS.streaming} (Twilio), ${TELNYX_NUMBER} (Telnyx) and web calls`,
  );
  return {
    gateway,
    api,
    connectionId: connection.id,
    fakeTwilio,
    telnyx,
    telnyxConnectionId: telnyxConnection.id,
    streamingAgentId,
    realtime,
    gemini,
    deepgram,
    elevenlabs,
  };
}

/**
 * One call as Twilio brings it: the signed inbound webhook, then the answer's media stream, started;
 * its audio starts right after `start` (not once the provider's session is open), as Twilio's does.
 */
async function dialIn(setup: Setup, provider: VoiceProvider, calls: Set<BenchCall>, to = NUMBERS[provider]): Promise<BenchCall<MediaStreamClient>> {
  const { gateway, fakeTwilio, connectionId } = setup;
  const callSid = `CA${randomBytes(16).toString('hex')}`;
  const url = `${gateway.base}/telephony/twilio/${connectionId}/inbound`;
  // A speech-to-speech call's session is opened while its answer is made (issue #45), before its stream: waited for from
  // before the webhook (the calls are dialled one after another, each once its session is open, so the next one opened is
  // this call's). A streaming call's Deepgram session opens on its stream's start, and is waited for from there.
  const early = provider === 'streaming' ? null : nextSession(setup, provider);
  // Awaited below; a webhook that fails first must not leave its wait unhandled.
  void early?.catch(() => undefined);
  const params = {
    CallSid: callSid,
    AccountSid: fakeTwilio.accountSid,
    From: randomCaller(),
    To: to,
    CallStatus: 'ringing',
    Direction: 'inbound',
  };
  const res = await fetch(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      'x-twilio-signature': twilio.getExpectedTwilioSignature(fakeTwilio.authToken, url, params),
    },
    body: new URLSearchParams(params),
  });
  const twiml = await res.text();
  const answeredAt = performance.now();
  const stream = /<Stream url="([^"]+)"/.exec(twiml);
  if (res.status !== 200 || !stream) throw new Error(`the inbound webhook gave no stream (${res.status}): ${twiml.slice(0, 300)}`);
  const streamUrl = stream[1]!.replace(/&amp;/g, '&');
  const callId = /\/media\/([^/]+)\//.exec(streamUrl)![1]!;
  const client = await MediaStreamClient.open(streamUrl, fakeTwilio.authToken);
  if (!(client instanceof MediaStreamClient)) throw new Error(`the media stream was refused (${client.refused})`);
  const next = early ?? nextSession(setup, provider);
  client.start(callId, callSid);
  const call: BenchCall<MediaStreamClient> = {
    id: callId,
    client,
    session: null,
    startedAt: performance.now(),
    sentAt: [],
    carrierMs: performance.now() - answeredAt,
  };
  calls.add(call);
  return joined(call, next);
}

const randomCaller = () => `+1555${String(Math.floor(Math.random() * 1e7)).padStart(7, '0')}`;

/** The call's double session, once open; a streaming call's Deepgram session is told its caller's words. */
async function joined<Client extends BenchCaller>(call: BenchCall<Client>, next: Promise<DoubleSession>): Promise<BenchCall<Client>> {
  call.session = await next;
  const deepgram = (call.session as DoubleSession & { deepgram?: FakeDeepgramSession }).deepgram;
  if (deepgram) {
    // Set as the session opens, long before its first turn is heard (60 ms of speech).
    call.tag = ++tags;
    call.deepgram = deepgram;
    deepgram.everyTurn = callerWords(call.tag);
  }
  return call;
}

/**
 * One streaming call as Telnyx brings it: the TeXML inbound webhook of the Telnyx number, signed with
 * the loopback Telnyx's Ed25519 key, then Telnyx's side of the answer's <Connect><Stream> (its
 * `connected` and `start`, naming the call's call_control_id, its CallSid); audio from right after
 * `start`, as on Twilio.
 */
async function dialTelnyx(setup: Setup, calls: Set<BenchCall>): Promise<BenchCall> {
  const { gateway, telnyx, telnyxConnectionId } = setup;
  const callSid = `v3:${randomBytes(18).toString('base64url')}`;
  const fields = { AccountSid: telnyx.accountSid, CallSid: callSid, From: randomCaller(), To: TELNYX_NUMBER, CallStatus: 'ringing', Direction: 'inbound' };
  const body = new URLSearchParams(fields).toString();
  const res = await fetch(`${gateway.base}/telephony/telnyx/${telnyxConnectionId}/inbound`, { method: 'POST', headers: telnyx.signedHeaders(body), body });
  const texml = await res.text();
  const answeredAt = performance.now();
  const stream = /<Connect><Stream url="([^"]+)"[^>]*bidirectionalMode="rtp"[^>]*bidirectionalCodec="PCMU"/.exec(texml);
  if (res.status !== 200 || !stream) throw new Error(`the Telnyx inbound webhook gave no bidirectional PCMU stream (${res.status}): ${texml.slice(0, 300)}`);
  const streamUrl = stream[1]!.replace(/&amp;/g, '&');
  const callId = /\/media\/([^/]+)\//.exec(streamUrl)![1]!;
  const caller = await TelnyxMediaCaller.open(streamUrl);
  if (!(caller instanceof TelnyxMediaCaller)) throw new Error(`the Telnyx media stream was refused (${caller.refused})`);
  const next = nextSession(setup, 'streaming');
  caller.start(callSid, callId);
  const client: BenchCaller = {
    // One 20 ms frame: sent before sendAudio's first await.
    sendAudio: (frame) => void caller.sendAudio(frame),
    mediaArrivals: caller.mediaArrivals,
    // Telnyx's `stop` (reason hangup), then its close: the caller's one way to hang up (again, once closed, nothing).
    stop: () => caller.stop(),
    hangUp: () => caller.stop(),
    problems: caller.problems,
  };
  const call: BenchCall = { id: callId, client, session: null, startedAt: performance.now(), sentAt: [], carrierMs: performance.now() - answeredAt };
  calls.add(call);
  return joined(call, next);
}

/**
 * One streaming call from a browser: a token for the streaming agent (POST /api/web-calls, as the
 * page's server asks it), then the page's talk socket, opened from the gateway's own origin. The
 * call is answered when the socket is let in (the token claimed), so the first-audio baseline has
 * no carrier part; the page's microphone frames go out from the socket's open.
 */
async function dialWeb(setup: Setup, calls: Set<BenchCall>): Promise<BenchCall> {
  const { gateway, api, streamingAgentId } = setup;
  const { token } = await api.post<{ token: string }>('/api/web-calls', { agentId: streamingAgentId });
  const next = nextSession(setup, 'streaming');
  const caller = await WebCaller.open(gateway.base, token, gateway.base);
  if (!(caller instanceof WebCaller)) throw new Error(`the talk socket was refused (${caller.refused})`);
  const call: BenchCall = { id: '', client: caller, session: null, startedAt: performance.now(), sentAt: [], carrierMs: 0 };
  calls.add(call);
  call.id = await caller.ready(10_000);
  return joined(call, next);
}

/** One call of `provider` arriving as `arrival` (Telnyx and web: streaming only). */
function dial(setup: Setup, provider: VoiceProvider, arrival: VoiceArrival, calls: Set<BenchCall>): Promise<BenchCall> {
  if (arrival === 'twilio') return dialIn(setup, provider, calls);
  if (provider !== 'streaming') throw new Error(`the ${arrival} arrival is measured at the streaming provider only, not ${provider}`);
  return arrival === 'telnyx' ? dialTelnyx(setup, calls) : dialWeb(setup, calls);
}

/** The event-loop monitors' timer (prom-client's default, and the bench's own). */
const LOOP_RESOLUTION_MS = 10;

/** The machine's CPU ticks, all cores (/proc/stat's first line): busy and idle (iowait counted idle). */
function machineTicks(): { busy: number; idle: number } | null {
  try {
    const fields = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
    const idle = fields[3]! + fields[4]!;
    return { busy: fields.slice(0, 8).reduce((sum, value) => sum + value, 0) - idle, idle };
  } catch {
    return null;
  }
}

/** The gateway's event-loop delay since its last read (prom-client resets its monitor on each /metrics), ms; null if unreadable. */
async function gatewayLoopDelay(gateway: ServerProcess): Promise<{ p99: number; max: number } | null> {
  try {
    const text = await (await fetch(`${gateway.base}/metrics`, { headers: { authorization: `Bearer ${BENCH_METRICS_TOKEN}` } })).text();
    const read = (name: string) => Math.max(0, Number(new RegExp(`^${name} (\\S+)`, 'm').exec(text)?.[1] ?? NaN) * 1000 - LOOP_RESOLUTION_MS);
    const p99 = read('nodejs_eventloop_lag_p99_seconds');
    const max = read('nodejs_eventloop_lag_max_seconds');
    return Number.isFinite(p99) && Number.isFinite(max) ? { p99, max } : null;
  } catch {
    return null;
  }
}

function within(at: number, from: number, to: number): boolean {
  return at >= from && at < to;
}

/** One agent turn as a streaming call recorded it (`turnLatency.turns`). */
interface RecordedTurn {
  endOfSpeechAt: string;
  totalMs: number;
  gatewayMs: number;
  recognizerMs: number;
  modelMs: number;
  synthesizerMs: number;
  waitMs: number;
}

/**
 * The streaming turns whose final Deepgram sent in the window, read on the bench's clock: each
 * reply's ElevenLabs stream is its call's by the words it speaks (the echo of the caller's own), and
 * its first after the turn's final; its audio reaches the caller as one media message per chunk, in
 * order (no grace wait holds it: Deepgram's endpointing alone is longer), so the caller's first
 * media after the stream's first audio is that audio.
 */
function streamingTurns(calls: BenchCall[], streams: FakeElevenLabsStream[], from: number, to: number) {
  const byTag = new Map<number, FakeElevenLabsStream[]>();
  for (const stream of streams) {
    const tag = /Caller (\d+)\./.exec(stream.texts.join(''));
    if (!tag || stream.textAt.length === 0) continue;
    const list = byTag.get(Number(tag[1])) ?? [];
    list.push(stream);
    byTag.set(Number(tag[1]), list);
  }
  const out = { added: [] as number[], finalToText: [] as number[], firstAudio: [] as number[], relayOut: [] as number[], framesOut: 0, droppedOut: 0 };
  for (const call of calls) {
    const deepgram = call.deepgram!;
    const lost = Math.max(0, call.sentAt.length - deepgram.audioAt.length);
    const replies = (byTag.get(call.tag!) ?? []).sort((a, b) => a.textAt[0]! - b.textAt[0]!);
    const arrivals = call.client.mediaArrivals;
    deepgram.turnEnds.forEach((end, index) => {
      const finalAt = end.finalSentAt;
      if (finalAt === null || !within(finalAt, from, to)) return;
      const nextFinal = deepgram.turnEnds[index + 1]?.finalSentAt ?? Infinity;
      const reply = replies.find((stream) => stream.textAt[0]! >= finalAt && stream.textAt[0]! < nextFinal);
      if (!reply || reply.audioSentAt.length === 0) return;
      const first = arrivals.findIndex((at) => at >= reply.audioSentAt[0]!);
      reply.audioSentAt.forEach((sentAt, chunk) => {
        out.framesOut++;
        const arrived = first < 0 ? undefined : arrivals[first + chunk];
        if (arrived === undefined) out.droppedOut++;
        else out.relayOut.push(arrived - sentAt);
      });
      const frameSent = call.sentAt[end.frameIndex + lost];
      const frameArrived = deepgram.audioAt[end.frameIndex];
      if (first < 0 || frameSent === undefined || frameArrived === undefined) return;
      const finalToText = reply.textAt[0]! - finalAt;
      const firstAudio = arrivals[first]! - reply.audioSentAt[0]!;
      out.finalToText.push(finalToText);
      out.firstAudio.push(firstAudio);
      out.added.push(frameArrived - frameSent + finalToText + firstAudio);
    });
  }
  return out;
}

async function step(
  setup: Setup,
  provider: VoiceProvider,
  arrival: VoiceArrival,
  count: number,
  seconds: number,
  idleRssMb: number,
  log: (line: string) => void,
): Promise<VoiceStep> {
  const { gateway, api } = setup;
  const calls = new Set<BenchCall>();
  const pacer = pace(calls);
  const opened: BenchCall[] = [];
  const label = arrival === 'twilio' ? provider : `${provider} (${arrival})`;
  try {
    for (let index = 0; index < count; index++) opened.push(await dial(setup, provider, arrival, calls));
    // A turn's time for the last calls to settle in before the window opens.
    await sleep(1000);
    await gatewayLoopDelay(gateway);
    const benchLoop = monitorEventLoopDelay({ resolution: LOOP_RESOLUTION_MS });
    benchLoop.enable();
    const cpuStart = cpuSeconds(gateway.pid) ?? 0;
    const benchCpuStart = process.cpuUsage();
    const ticksStart = machineTicks();
    const from = performance.now();
    const fromWall = Date.now();
    let rssPeak = rssMb(gateway.pid) ?? 0;
    const sampler = setInterval(() => (rssPeak = Math.max(rssPeak, rssMb(gateway.pid) ?? 0)), 200);
    await sleep(seconds * 1000);
    const to = performance.now();
    const toWall = Date.now();
    const cpuEnd = cpuSeconds(gateway.pid) ?? 0;
    const benchCpu = process.cpuUsage(benchCpuStart);
    const ticksEnd = machineTicks();
    benchLoop.disable();
    const gatewayLoop = await gatewayLoopDelay(gateway);
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
    checkCallers(opened, arrival);

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
    const recordedTurns: RecordedTurn[] = [];
    const firstAudioCalls: FirstAudioCall[] = [];
    let failedCalls = 0;
    for (const call of opened) {
      const deadline = Date.now() + 5000;
      for (;;) {
        const row = await api.get<{ status: string; firstAudioMs: number | null; turnLatency: { turns: RecordedTurn[] } | null }>(`/api/calls/${call.id}`);
        if (row.turnLatency) {
          firstAudioCalls.push({ firstAudioMs: row.firstAudioMs, carrierMs: call.carrierMs });
          recorded.push(...row.turnLatency.turns.map((turn) => turn.gatewayMs));
          // Streaming: the turns whose speech ended in the window (the calls' first turns fell in their settling).
          recordedTurns.push(...row.turnLatency.turns.filter((turn) => within(Date.parse(turn.endOfSpeechAt), fromWall, toWall)));
        }
        if (row.turnLatency || Date.now() > deadline) {
          if (!row.turnLatency) firstAudioCalls.push({ firstAudioMs: null, carrierMs: call.carrierMs });
          if (row.status === 'failed') failedCalls++;
          break;
        }
        await sleep(50);
      }
    }
    let streaming: StreamingStepNumbers | undefined;
    if (provider === 'streaming') {
      const turns = streamingTurns(opened, setup.elevenlabs.streams, from, to);
      added.push(...turns.added);
      relayOut.push(...turns.relayOut);
      framesOut = turns.framesOut;
      droppedOut = turns.droppedOut;
      const part = (name: keyof Omit<RecordedTurn, 'endOfSpeechAt'>) => spread(recordedTurns.map((turn) => turn[name]));
      streaming = {
        recordedTurns: recordedTurns.length,
        gatewayMs: part('gatewayMs'),
        recognizerMs: part('recognizerMs'),
        modelMs: part('modelMs'),
        synthesizerMs: part('synthesizerMs'),
        waitMs: part('waitMs'),
        totalMs: part('totalMs'),
        finalToTextMs: spread(turns.finalToText),
        firstAudioRelayMs: spread(turns.firstAudio),
        failedCalls,
      };
      // The doubles' records of this step are read: the next step starts without them.
      setup.elevenlabs.streams.length = 0;
      setup.elevenlabs.texts.length = 0;
      if (streaming.recordedTurns === 0)
        throw new Error(`the streaming pipeline recorded no turn in ${count} ${arrival} calls over ${seconds} s (see ${RESULTS}voice-gateway.log)`);
    }
    const windowSeconds = (to - from) / 1000;
    let machineCpuPercent: VoiceStep['machineCpuPercent'] = null;
    if (ticksStart && ticksEnd) {
      // /proc/stat counts in USER_HZ ticks: their total over the window is every core's time.
      const busy = ticksEnd.busy - ticksStart.busy;
      const idle = ticksEnd.idle - ticksStart.idle;
      const total = busy + idle;
      const perTick = windowSeconds / (total / availableParallelism());
      const gatewayPercent = (((cpuEnd - cpuStart) / perTick) * 100) / total;
      const benchPercent = (((benchCpu.user + benchCpu.system) / 1e6 / perTick) * 100) / total;
      machineCpuPercent = {
        gateway: gatewayPercent,
        bench: benchPercent,
        rest: Math.max(0, (busy / total) * 100 - gatewayPercent - benchPercent),
        idle: (idle / total) * 100,
      };
    }
    const result: VoiceStep = {
      calls: count,
      seconds: windowSeconds,
      callSeconds: count * windowSeconds,
      turns: added.length,
      addedMs: added.length > 0 ? { p50: percentile(added, 50), p99: percentile(added, 99), max: Math.max(...added) } : null,
      recordedGatewayMs: streaming
        ? streaming.gatewayMs && { p50: streaming.gatewayMs.p50, p99: streaming.gatewayMs.p99 }
        : recorded.length > 0
          ? { p50: percentile(recorded, 50), p99: percentile(recorded, 99) }
          : null,
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
      machineCpuPercent,
      eventLoopDelayMs: {
        gateway: gatewayLoop,
        bench: { p99: Math.max(0, benchLoop.percentile(99) / 1e6 - LOOP_RESOLUTION_MS), max: Math.max(0, benchLoop.max / 1e6 - LOOP_RESOLUTION_MS) },
      },
      passed: streaming
        ? (streaming.gatewayMs?.p99 ?? Infinity) <= STREAMING_GATEWAY_P99_TARGET_MS && droppedIn + droppedOut + lostAtStart + streaming.failedCalls === 0
        : added.length > 0 && percentile(added, 99) <= ADDED_P99_TARGET_MS && droppedIn + droppedOut + lostAtStart === 0,
      streaming,
      // The first message's audio: ElevenLabs' double holds a stream's first audio; the sts doubles say a first message at once.
      firstAudio: firstAudioNumbers(firstAudioCalls, provider === 'streaming' ? STREAMING_FIRST_AUDIO_MS : 0),
    };
    const fmt = (value: number | null | undefined, digits = 2) => (value === null || value === undefined ? 'n/a' : value.toFixed(digits));
    if (streaming) {
      log(
        `  voice ${label} ${count} calls, ${windowSeconds.toFixed(1)} s: ${streaming.recordedTurns} turns recorded, gatewayMs p50 ${fmt(streaming.gatewayMs?.p50)} p99 ${fmt(streaming.gatewayMs?.p99)} max ${fmt(streaming.gatewayMs?.max)} ms ` +
          `(recognizer p50 ${fmt(streaming.recognizerMs?.p50)}, model ${fmt(streaming.modelMs?.p50)}, synthesizer ${fmt(streaming.synthesizerMs?.p50)}, wait ${fmt(streaming.waitMs?.p50)}, total p50 ${fmt(streaming.totalMs?.p50)} p99 ${fmt(streaming.totalMs?.p99)}); ` +
          `on the bench's clock (${result.turns} turns): final → text p50 ${fmt(streaming.finalToTextMs?.p50)} p99 ${fmt(streaming.finalToTextMs?.p99)}, first audio → caller p50 ${fmt(streaming.firstAudioRelayMs?.p50)} p99 ${fmt(streaming.firstAudioRelayMs?.p99)}, ` +
          `added p50 ${fmt(result.addedMs?.p50)} p99 ${fmt(result.addedMs?.p99)} ms; failed calls ${streaming.failedCalls}; ` +
          `event-loop delay p99 / max: gateway ${fmt(gatewayLoop?.p99)} / ${fmt(gatewayLoop?.max)}, bench ${fmt(result.eventLoopDelayMs.bench.p99)} / ${fmt(result.eventLoopDelayMs.bench.max)} ms; ` +
          `machine CPU % gateway ${fmt(machineCpuPercent?.gateway, 0)}, bench ${fmt(machineCpuPercent?.bench, 0)}, rest ${fmt(machineCpuPercent?.rest, 0)}, idle ${fmt(machineCpuPercent?.idle, 0)}`,
      );
    }
    log(
      `  voice ${label} ${count} calls, ${windowSeconds.toFixed(1)} s: ${result.turns} turns, added p50 ${fmt(result.addedMs?.p50)} p99 ${fmt(result.addedMs?.p99)} ms ` +
        `(recorded gatewayMs p99 ${fmt(result.recordedGatewayMs?.p99)}), relay p99 in ${fmt(result.relayInP99)} out ${fmt(result.relayOutP99)} ms, ` +
        `frames ${framesIn} in / ${framesOut} out, dropped ${droppedIn} / ${droppedOut}, lost at start ${lostAtStart} (of ${framesBeforeReady} sent before the session was ready), CPU ${result.cpuMsPerCallSecond.toFixed(2)} ms per call-second, ` +
        `RSS ${result.rssMb.toFixed(0)} MB (${result.rssMbPerCall.toFixed(2)} MB per call), load ${result.loadAverage.toFixed(2)}; ` +
        `answer → first audio p50 ${fmt(result.firstAudio.firstAudioMs?.p50)} p99 ${fmt(result.firstAudio.firstAudioMs?.p99)} ms (baseline p99 ${fmt(result.firstAudio.baselineMs?.p99)}, gateway share p99 ${fmt(result.firstAudio.gatewayMs?.p99)}, ${result.firstAudio.missing} without)`,
    );
    return result;
  } finally {
    pacer.stop();
    for (const call of opened) call.client.hangUp();
    // Let the server end the calls (their records written) before the next step measures its own.
    await sleep(1000);
  }
}

/**
 * Speech to speech, answer → first audio: `count` calls at once (each of the ramp's steps) to the
 * provider's agent that speaks first; each is read once its caller heard the first audio and it hung
 * up (the call's firstAudioMs, against its carrier part: the doubles say a first message at once).
 */
async function firstMessageTrack(setup: Setup, provider: VoiceProvider, count: number, log: (line: string) => void): Promise<FirstAudioNumbers> {
  const opened: BenchCall<MediaStreamClient>[] = [];
  const calls: FirstAudioCall[] = [];
  try {
    for (let index = 0; index < count; index++) opened.push(await dialIn(setup, provider, new Set(), FIRST_MESSAGE_NUMBERS[provider]));
    await Promise.all(
      opened.map((call) => call.client.waitFor(() => call.client.mediaArrivals.length > 0, 'the first message', 10_000).catch(() => undefined)),
    );
  } finally {
    for (const call of opened) call.client.hangUp();
    await Promise.all(opened.map((call) => Promise.race([call.session!.closed, sleep(5000)])));
  }
  for (const call of opened) {
    const deadline = Date.now() + 5000;
    for (;;) {
      const row = await setup.api.get<{ firstAudioMs: number | null }>(`/api/calls/${call.id}`);
      if (row.firstAudioMs !== null || Date.now() > deadline) {
        calls.push({ firstAudioMs: row.firstAudioMs, carrierMs: call.carrierMs });
        break;
      }
      await sleep(50);
    }
  }
  const numbers = firstAudioNumbers(calls, 0);
  log(
    `  voice ${provider} first message, ${count} calls: answer → first audio p50 ${numbers.firstAudioMs?.p50.toFixed(1) ?? 'n/a'} p99 ${numbers.firstAudioMs?.p99.toFixed(1) ?? 'n/a'} ms ` +
      `(baseline p99 ${numbers.baselineMs?.p99.toFixed(1) ?? 'n/a'}, gateway share p99 ${numbers.gatewayMs?.p99.toFixed(1) ?? 'n/a'}, ${numbers.missing} without)`,
  );
  return numbers;
}

/** The back-channel tracks (voice-back-channel.ts), one after another, BACK_CHANNEL_CALLS concurrent calls each. */
async function backChannelTracks(setup: Setup, log: (line: string) => void): Promise<BackChannelNumbers> {
  const results = {} as Record<BackChannelTrack, (boolean | null)[]>;
  for (const { track, mode, words, speechMs } of BACK_CHANNEL_TRACKS) {
    const opened: BenchCall<MediaStreamClient>[] = [];
    try {
      for (let index = 0; index < BACK_CHANNEL_CALLS; index++) {
        const call = await dialIn(setup, 'streaming', new Set(), BACK_CHANNEL_NUMBERS[mode]);
        call.deepgram!.everyTurn = words;
        opened.push(call);
      }
      results[track] = await Promise.all(opened.map((call) => runBackChannelCall(setup.api, call, speechMs)));
    } finally {
      for (const call of opened) call.client.hangUp();
      await Promise.all(opened.map((call) => Promise.race([call.session!.closed, sleep(5000)])));
    }
    const cut = results[track].filter((result) => result === true).length;
    log(
      `  voice back-channel track ${track} (mode ${mode}, "${words}"): ${cut} of ${BACK_CHANNEL_CALLS} calls cut, ${results[track].filter((result) => result === null).length} not read`,
    );
  }
  setup.elevenlabs.streams.length = 0;
  setup.elevenlabs.texts.length = 0;
  return backChannelNumbers(BACK_CHANNEL_CALLS, results);
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
  arrivals: VoiceArrival[],
  log: (line: string) => void,
): Promise<VoiceSummary> {
  // Before any call, on a quiet process: what the builtin voice costs per second of speech.
  const builtinVoice = await builtinVoiceCpu();
  log(
    `  builtin voice: ${builtinVoice.voiceMsPerSecond.toFixed(1)} ms CPU per second of speech (the modem ${builtinVoice.modemMsPerSecond.toFixed(2)} ms) over ${builtinVoice.speechSeconds.toFixed(1)} s`,
  );
  const setup = await setUp(databaseUrl, arrivals, log);
  const runs: VoiceProviderRun[] = [];
  // Twilio at every provider; Telnyx and web calls at the streaming provider, after its Twilio ramp.
  const ramps = providers.flatMap((provider) =>
    arrivals.filter((arrival) => arrival === 'twilio' || provider === 'streaming').map((arrival) => ({ provider, arrival })),
  );
  const skipped = providers.filter((provider) => !ramps.some((ramp) => ramp.provider === provider));
  if (skipped.length > 0)
    log(`  voice ${skipped.join(', ')}: not measured (--voice-arrivals=${arrivals.join(',')}: speech to speech arrives through Twilio only)`);
  const twilio = arrivals.includes('twilio');
  try {
    for (const { provider, arrival } of ramps) {
      const label = arrival === 'twilio' ? provider : `${provider} (${arrival})`;
      // One call first, unmeasured: the JIT and the pool (and for Google the SDK's loading) warm up.
      const warm = new Set<BenchCall>();
      const pacer = pace(warm);
      const first = await dial(setup, provider, arrival, warm);
      await sleep(CYCLE_MS);
      pacer.stop();
      first.client.stop();
      first.client.hangUp();
      await sleep(500);
      checkCallers([first], arrival);
      const idleRssMb = rssMb(setup.gateway.pid) ?? 0;
      log(
        `  voice ${label}: steps of ${steps.join(', ')} concurrent calls, ${duration} s measured each; ` +
          (provider === 'streaming'
            ? `Deepgram's final after its endpointing (300 ms of silence), ElevenLabs' first audio ${STREAMING_FIRST_AUDIO_MS} ms after a reply's first text, the model builtin/echo`
            : `the double answers each turn after ${PROVIDER_DELAY_MS} ms`),
      );
      const results: VoiceStep[] = [];
      for (const calls of steps) {
        const result = await step(setup, provider, arrival, calls, duration, idleRssMb, log);
        results.push(result);
        const overloaded = result.streaming
          ? (result.streaming.gatewayMs?.p99 ?? Infinity) > 10 * STREAMING_GATEWAY_P99_TARGET_MS
          : (result.addedMs?.p99 ?? Infinity) > 10 * ADDED_P99_TARGET_MS;
        if (result.droppedIn + result.droppedOut + result.lostAtStart > 0 || overloaded) break;
      }
      const failed = results.findIndex((result) => !result.passed);
      const passing = (failed === -1 ? results : results.slice(0, failed)).map((result) => result.calls);
      runs.push({ provider, arrival, steps: results, maxCalls: passing.length > 0 ? Math.max(...passing) : null, idleRssMb });
    }
    // The tracks are Twilio calls.
    const backChannel = twilio && providers.includes('streaming') ? await backChannelTracks(setup, log) : null;
    const firstMessage: VoiceSummary['firstMessage'] = [];
    // At the ramps' steps, as the streaming calls' first audio is measured.
    for (const provider of providers.filter((name) => twilio && FIRST_MESSAGE_NUMBERS[name]))
      for (const calls of steps) firstMessage.push({ provider, calls, numbers: await firstMessageTrack(setup, provider, calls, log) });
    const summary: VoiceSummary = {
      database,
      providerDelayMs: PROVIDER_DELAY_MS,
      streamingFirstAudioMs: STREAMING_FIRST_AUDIO_MS,
      cycleMs: CYCLE_MS,
      duration,
      arrivals,
      runs,
      machine: machineLine(),
      builtinVoice,
      backChannel,
      firstMessage,
    };
    if (setup.realtime.problems.length > 0)
      throw new Error(`the OpenAI double refused events of the gateway: ${JSON.stringify(setup.realtime.problems.slice(0, 3))}`);
    if (setup.gemini.problems.length > 0)
      throw new Error(`the Gemini Live double refused messages of the gateway: ${JSON.stringify(setup.gemini.problems.slice(0, 3))}`);
    if (setup.deepgram.problems.length > 0)
      throw new Error(`the Deepgram double refused messages of the gateway: ${JSON.stringify(setup.deepgram.problems.slice(0, 3))}`);
    if (setup.elevenlabs.problems.length > 0)
      throw new Error(`the ElevenLabs double refused messages of the gateway: ${JSON.stringify(setup.elevenlabs.problems.slice(0, 3))}`);
    if (setup.telnyx.refusals().length > 0)
      throw new Error(`the Telnyx double refused requests of the gateway: ${JSON.stringify(setup.telnyx.refusals().slice(0, 3))}`);
    writeFileSync(`${RESULTS}voice.json`, `${JSON.stringify({ finishedAt: new Date().toISOString(), ...summary }, null, 2)}\n`);
    return summary;
  } finally {
    await setup.gateway.stop();
    live.gateway = undefined;
    await setup.realtime.close();
    await setup.gemini.close();
    await setup.deepgram.close();
    await setup.elevenlabs.close();
    await setup.fakeTwilio.close();
    await setup.telnyx.close();
    if (live.dataDir) rmSync(live.dataDir, { recursive: true, force: true });
    live.dataDir = undefined;
  }
}

export function voiceMarkdown(summary: VoiceSummary): string {
  const fmt = (value: number | null | undefined, digits = 2) => (value === null || value === undefined ? 'n/a' : value.toFixed(digits));
  const mark = (ok: boolean) => (ok ? '✓' : '✗');
  const pair = (value: Spread | null | undefined) => `${fmt(value?.p50)} / ${fmt(value?.p99)}`;
  const targets = Object.entries(CPU_TARGET_MS)
    .map(([provider, ms]) => `${provider} ${ms}`)
    .join(', ');
  const sts = summary.runs.filter((run) => run.provider !== 'streaming');
  // The streaming table is its Twilio ramp's; the other arrivals' rows are arrivalsMarkdown's, beside that one.
  const streaming = summary.runs.filter((run) => run.provider === 'streaming' && run.arrival === 'twilio');
  const lines: string[] = [];
  if (sts.length > 0) {
    lines.push(
      `Speech to speech (${sts.map((run) => run.provider).join(', ')}; ${summary.database}): callers send 20 ms μ-law frames in real time from right after \`start\`, a turn every ${summary.cycleMs / 1000} s; ` +
        `each double answers after ${summary.providerDelayMs} ms; ${summary.duration} s measured per step. ${summary.machine}; idle RSS ${sts.map((run) => `${run.provider} ${run.idleRssMb.toFixed(0)} MB`).join(', ')}.`,
      '',
      `| provider | calls | turns | added latency per turn p50 / p99 (ms; target p99 ≤ ${ADDED_P99_TARGET_MS}) | recorded gatewayMs p50 / p99 | frame relay p99 in / out (ms) | frames dropped in / out | frames lost at start (sent before the session was ready) | CPU ms per call-second (target ≤ ${targets}) | RSS per call (MB; target ≤ ${RSS_TARGET_MB}) | load |`,
      '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
      ...sts.flatMap((run) =>
        run.steps.map(
          (step) =>
            `| ${run.provider} | ${step.calls} | ${step.turns} | ${fmt(step.addedMs?.p50)} / ${fmt(step.addedMs?.p99)}${step.addedMs ? ` ${mark(step.addedMs.p99 <= ADDED_P99_TARGET_MS)}` : ''} | ` +
            `${fmt(step.recordedGatewayMs?.p50)} / ${fmt(step.recordedGatewayMs?.p99)} | ${fmt(step.relayInP99)} / ${fmt(step.relayOutP99)} | ` +
            `${step.droppedIn} / ${step.droppedOut} of ${step.framesIn} / ${step.framesOut} | ${step.lostAtStart} ${mark(step.lostAtStart === 0)} (${step.framesBeforeReady}) | ` +
            `${fmt(step.cpuMsPerCallSecond)} ${mark(step.cpuMsPerCallSecond <= (CPU_TARGET_MS[run.provider] ?? Infinity))} | ` +
            `${fmt(step.rssMbPerCall)} ${mark(step.rssMbPerCall <= RSS_TARGET_MB)} | ${fmt(step.loadAverage)} |`,
        ),
      ),
      '',
      ...sts.map((run) => {
        const larger = run.steps.filter((step) => step.passed && step.calls > (run.maxCalls ?? 0)).map((step) => step.calls);
        return (
          `${run.provider}: most concurrent calls with p99 added latency ≤ ${ADDED_P99_TARGET_MS} ms and no frame dropped or lost (at that step and every step below it): ${run.maxCalls ?? 'none of the steps'}` +
          (larger.length > 0 ? `; a larger step passed too (${larger.join(', ')})` : '')
        );
      }),
    );
  }
  for (const run of streaming) {
    if (lines.length > 0) lines.push('');
    const larger = run.steps.filter((step) => step.passed && step.calls > (run.maxCalls ?? 0)).map((step) => step.calls);
    lines.push(
      `Streaming (${summary.database}): the same callers (a turn every ${summary.cycleMs / 1000} s), a streaming agent (builtin/echo) with the Deepgram double (its final after the gateway's 300 ms endpointing) ` +
        `and the ElevenLabs double (first audio ${summary.streamingFirstAudioMs} ms after a reply's first text); ${summary.duration} s measured per step. ${summary.machine}; idle RSS ${run.idleRssMb.toFixed(0)} MB.`,
      '',
      `| calls | turns recorded / timed | gatewayMs p50 / p99 (ms; target p99 ≤ ${STREAMING_GATEWAY_P99_TARGET_MS}) | recognizer / model / synthesizer / wait p50 (ms) | total p50 / p99 (ms) | ` +
        `final → text at the synthesizer p50 / p99 | synthesizer's first audio → caller p50 / p99 | added per turn p50 / p99 | frame relay p99 in / out | frames dropped in / out | lost at start | failed calls | ` +
        `event-loop delay p99 / max, gateway · bench (ms) | CPU ms per call-second | RSS per call (MB) | machine CPU %: gateway · bench · rest · idle | load |`,
      '|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
      ...run.steps.map((step) => {
        const numbers = step.streaming!;
        return (
          `| ${step.calls} | ${numbers.recordedTurns} / ${step.turns} | ${pair(numbers.gatewayMs)}${numbers.gatewayMs ? ` ${mark(numbers.gatewayMs.p99 <= STREAMING_GATEWAY_P99_TARGET_MS)}` : ''} | ` +
          `${fmt(numbers.recognizerMs?.p50, 0)} / ${fmt(numbers.modelMs?.p50, 1)} / ${fmt(numbers.synthesizerMs?.p50, 0)} / ${fmt(numbers.waitMs?.p50, 0)} | ${pair(numbers.totalMs)} | ` +
          `${pair(numbers.finalToTextMs)} | ${pair(numbers.firstAudioRelayMs)} | ${pair(step.addedMs)} | ${fmt(step.relayInP99)} / ${fmt(step.relayOutP99)} | ` +
          `${step.droppedIn} / ${step.droppedOut} of ${step.framesIn} / ${step.framesOut} | ${step.lostAtStart} (${step.framesBeforeReady}) | ${numbers.failedCalls} | ` +
          `${fmt(step.eventLoopDelayMs.gateway?.p99, 0)} / ${fmt(step.eventLoopDelayMs.gateway?.max, 0)} · ${fmt(step.eventLoopDelayMs.bench.p99, 0)} / ${fmt(step.eventLoopDelayMs.bench.max, 0)} | ` +
          `${fmt(step.cpuMsPerCallSecond)} | ${fmt(step.rssMbPerCall)} | ` +
          `${step.machineCpuPercent ? [step.machineCpuPercent.gateway, step.machineCpuPercent.bench, step.machineCpuPercent.rest, step.machineCpuPercent.idle].map((value) => fmt(value, 0)).join(' · ') : 'n/a'} | ${fmt(step.loadAverage)} |`
        );
      }),
      '',
      `streaming: most concurrent calls with recorded gatewayMs p99 ≤ ${STREAMING_GATEWAY_P99_TARGET_MS} ms, no frame dropped or lost and no call failed (at that step and every step below it): ${run.maxCalls ?? 'none of the steps'}` +
        (larger.length > 0 ? `; a larger step passed too (${larger.join(', ')})` : ''),
    );
  }
  const arrivals = arrivalsMarkdown(summary.runs, summary);
  if (arrivals) lines.push('', arrivals);
  const firstAudio = firstAudioMarkdown(
    [
      // The speech-to-speech ramps wait for the caller (no first message): their rows come from the first-message track.
      ...summary.runs
        .filter((run) => run.provider === 'streaming')
        .flatMap((run) =>
          run.steps.map((step) => ({
            provider: run.arrival === 'twilio' ? run.provider : `${run.provider} (${run.arrival})`,
            calls: step.calls,
            numbers: step.firstAudio,
          })),
        ),
      ...summary.firstMessage,
    ],
    summary.builtinVoice,
  );
  if (firstAudio) lines.push('', firstAudio);
  const backChannel = backChannelMarkdown(summary.backChannel);
  if (backChannel) lines.push('', backChannel);
  return lines.join('\n');
}
