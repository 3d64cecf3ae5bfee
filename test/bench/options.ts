// What `npm run bench` takes, from the environment or from `npm run bench -- --duration=2 ...` (argv wins).
import { parseArgs } from 'node:util';

export const KINDS = ['rest-agents', 'rest-executions', 'graphql-programs', 'graphql-agents', 'rest-agent-test'] as const;
export type Kind = (typeof KINDS)[number];

export interface BenchOptions {
  /** An existing server: the bench (re)creates and finally drops its own database `gateway_bench` in it. Unset = a throwaway cluster. */
  databaseUrl: string | undefined;
  /** With DATABASE_URL: leave gateway_bench in place at the end (BENCH_KEEP_DATABASE=1). */
  keepDatabase: boolean;
  /** Seconds per measurement run. */
  duration: number;
  /** A B rounds per request kind. */
  rounds: number;
  connections: number;
  kinds: Kind[];
  /** Seconds of unmeasured load per server and kind before its rounds (JIT, caches, pool). */
  warmup: number;
  /** The campaign runner section (test/bench/runner.ts): `--only=runner`, or part of the default run. */
  runner: boolean;
  /** The speech-to-speech section (test/bench/voice.ts): `--only=voice`, or part of the default run. */
  voice: boolean;
  /** The scale sections (test/bench/scale-runner.ts, test/bench/scale/): `--only=scale` alone; not part of the default run (they seed a million rows). */
  scale: boolean;
  /** The voice section's ramp: concurrent calls per step. */
  voiceSteps: number[];
  /** The voice section's providers, each measured through its doubles (`--voice-providers`, default all three). */
  voiceProviders: VoiceProvider[];
  /**
   * How the voice section's calls arrive (`--voice-arrivals`, default all three): Twilio at every provider; Telnyx and a web call
   * at the streaming provider only, at the same steps (their rows beside its Twilio row).
   */
  voiceArrivals: VoiceArrival[];
  /** The voice section on the embedded PGlite rather than PostgreSQL (`--pglite`; also when no PostgreSQL can be had). */
  pglite: boolean;
  /** Its contacts (`--scale-rows`, default 1,000,000), sequential requests per latency (`--scale-requests`, 50) and databases (`--scale-databases`, both). */
  scaleRows: number;
  scaleRequests: number;
  /** Rows of the CSV import measure's file (`--scale-import-rows`, 100,000). */
  scaleImportRows: number;
  scaleDatabases: ('postgresql' | 'pglite')[];
}

const SECTIONS = ['runner', 'voice', 'scale'];
/** The speech-to-speech bridge to OpenAI Realtime or Gemini Live, or the streaming pipeline (Deepgram → the agent's model → ElevenLabs). */
export const VOICE_PROVIDERS = ['openai', 'google', 'streaming'] as const;
export type VoiceProvider = (typeof VOICE_PROVIDERS)[number];
/** How a call reaches the gateway: Twilio's webhook and Media Streams, Telnyx's TeXML and Media Streaming, or the web-call socket (/talk/socket). */
export const VOICE_ARRIVALS = ['twilio', 'telnyx', 'web'] as const;
export type VoiceArrival = (typeof VOICE_ARRIVALS)[number];

export const USAGE = `Usage: npm run bench [-- --duration=S --rounds=N --connections=C --only=kind,kind --warmup=S --voice-steps=10,25,50,100 --voice-providers=openai,google,streaming --voice-arrivals=twilio,telnyx,web --pglite --scale-rows=N --scale-requests=N --scale-import-rows=N --scale-databases=postgresql,pglite]

Env (argv wins): DATABASE_URL, BENCH_DURATION (5), BENCH_ROUNDS (3), BENCH_CONNECTIONS (10),
BENCH_ONLY (comma list), BENCH_WARMUP (2), BENCH_KEEP_DATABASE=1 (with DATABASE_URL:
keep gateway_bench at the end), BENCH_VOICE_STEPS (10,25,50,100), BENCH_VOICE_PROVIDERS (openai,google,streaming),
BENCH_VOICE_ARRIVALS (twilio,telnyx,web). Kinds: ${KINDS.join(', ')},
runner (the campaign runner section), scale (campaigns of 10k and 1M pending contacts: the claim's cost,
the runner's CPU per call, the API's p99 while a campaign dials; only when named), voice (voice calls through the media stream: --duration is each
step's measured seconds, --voice-steps the concurrent calls of each step, --voice-providers the doubles
called (openai: OpenAI Realtime, google: Gemini Live, streaming: the streaming pipeline with Deepgram and
ElevenLabs), --voice-arrivals how the calls come in (twilio at every provider; telnyx, its TeXML and
Media Streaming, and web, the web-call socket, at the streaming provider only), --pglite the embedded database), scale (only with --only: a million contacts seeded in SQL on PostgreSQL
and PGlite, the first and last pages of their lists, a search, an execution's snapshot and a CSV import's
rate against the JSON import's; --scale-rows, --scale-requests (sequential requests per latency),
--scale-import-rows (the CSV file's rows) and --scale-databases change it).`;

function positive(name: string, value: string | undefined, fallback: number, integer: boolean, zero = false): number {
  if (value === undefined || value === '') return fallback;
  const number = Number(value);
  if (!Number.isFinite(number) || number < 0 || (number === 0 && !zero) || (integer && !Number.isInteger(number))) {
    throw new Error(`${name} must be a positive ${integer ? 'integer' : 'number'}, got "${value}"\n\n${USAGE}`);
  }
  return number;
}

export function parseOptions(argv: string[], env: NodeJS.ProcessEnv): BenchOptions {
  const { values } = parseArgs({
    args: argv,
    options: {
      duration: { type: 'string' },
      rounds: { type: 'string' },
      connections: { type: 'string' },
      only: { type: 'string' },
      warmup: { type: 'string' },
      'voice-steps': { type: 'string' },
      'voice-providers': { type: 'string' },
      'voice-arrivals': { type: 'string' },
      pglite: { type: 'boolean' },
      'scale-rows': { type: 'string' },
      'scale-requests': { type: 'string' },
      'scale-import-rows': { type: 'string' },
      'scale-databases': { type: 'string' },
      help: { type: 'boolean' },
    },
    strict: true,
  });
  if (values.help) {
    console.log(USAGE);
    process.exit(0);
  }
  const only = (values.only ?? env.BENCH_ONLY ?? '')
    .split(',')
    .map((kind) => kind.trim())
    .filter(Boolean);
  const unknown = only.filter((kind) => !SECTIONS.includes(kind) && !(KINDS as readonly string[]).includes(kind));
  if (unknown.length > 0) throw new Error(`unknown kind(s) ${unknown.join(', ')}: use ${[...KINDS, ...SECTIONS].join(', ')}`);
  const steps = (values['voice-steps'] ?? env.BENCH_VOICE_STEPS ?? '10,25,50,100')
    .split(',')
    .map((step) => step.trim())
    .filter(Boolean);
  const voiceSteps = steps.map((step) => positive('BENCH_VOICE_STEPS', step, 0, true));
  if (voiceSteps.length === 0) throw new Error(`BENCH_VOICE_STEPS names no step\n\n${USAGE}`);
  const providers = (values['voice-providers'] ?? env.BENCH_VOICE_PROVIDERS ?? VOICE_PROVIDERS.join(','))
    .split(',')
    .map((name) => name.trim())
    .filter(Boolean);
  const unknownProviders = providers.filter((name) => !(VOICE_PROVIDERS as readonly string[]).includes(name));
  if (providers.length === 0 || unknownProviders.length > 0)
    throw new Error(`BENCH_VOICE_PROVIDERS must name ${VOICE_PROVIDERS.join(' and/or ')}, got "${providers.join(',')}"\n\n${USAGE}`);
  const arrivals = (values['voice-arrivals'] ?? env.BENCH_VOICE_ARRIVALS ?? VOICE_ARRIVALS.join(','))
    .split(',')
    .map((name) => name.trim())
    .filter(Boolean);
  const unknownArrivals = arrivals.filter((name) => !(VOICE_ARRIVALS as readonly string[]).includes(name));
  if (arrivals.length === 0 || unknownArrivals.length > 0)
    throw new Error(`BENCH_VOICE_ARRIVALS must name ${VOICE_ARRIVALS.join(' and/or ')}, got "${arrivals.join(',')}"\n\n${USAGE}`);
  const voiceProviders = VOICE_PROVIDERS.filter((name) => providers.includes(name));
  const voiceArrivals = VOICE_ARRIVALS.filter((name) => arrivals.includes(name));
  // Telnyx and web calls are measured at the streaming provider only: without Twilio or streaming, nothing would be called.
  if (!voiceArrivals.includes('twilio') && !voiceProviders.includes('streaming'))
    throw new Error(`--voice-arrivals=${voiceArrivals.join(',')} is measured at the streaming provider only: add streaming to --voice-providers\n\n${USAGE}`);
  return {
    databaseUrl: env.DATABASE_URL || undefined,
    keepDatabase: env.BENCH_KEEP_DATABASE === '1',
    duration: positive('BENCH_DURATION', values.duration ?? env.BENCH_DURATION, 5, false),
    rounds: positive('BENCH_ROUNDS', values.rounds ?? env.BENCH_ROUNDS, 3, true),
    connections: positive('BENCH_CONNECTIONS', values.connections ?? env.BENCH_CONNECTIONS, 10, true),
    kinds: only.length > 0 ? KINDS.filter((kind) => only.includes(kind)) : [...KINDS],
    runner: only.length === 0 || only.includes('runner'),
    voice: only.length === 0 || only.includes('voice'),
    scale: only.includes('scale'),
    voiceSteps,
    voiceProviders,
    voiceArrivals,
    pglite: values.pglite ?? false,
    scaleRows: positive('BENCH_SCALE_ROWS', values['scale-rows'] ?? env.BENCH_SCALE_ROWS, 1_000_000, true),
    scaleRequests: positive('BENCH_SCALE_REQUESTS', values['scale-requests'] ?? env.BENCH_SCALE_REQUESTS, 50, true),
    scaleImportRows: positive('BENCH_SCALE_IMPORT_ROWS', values['scale-import-rows'] ?? env.BENCH_SCALE_IMPORT_ROWS, 100_000, true),
    scaleDatabases: scaleDatabases(values['scale-databases'] ?? env.BENCH_SCALE_DATABASES),
    warmup: positive('BENCH_WARMUP', values.warmup ?? env.BENCH_WARMUP, 2, false, true),
  };
}

function scaleDatabases(text: string | undefined): ('postgresql' | 'pglite')[] {
  const names = (text ?? 'postgresql,pglite')
    .split(',')
    .map((name) => name.trim())
    .filter(Boolean);
  const wrong = names.filter((name) => name !== 'postgresql' && name !== 'pglite');
  if (names.length === 0 || wrong.length > 0) throw new Error(`--scale-databases must name postgresql and/or pglite, got "${text}"\n\n${USAGE}`);
  return (['postgresql', 'pglite'] as const).filter((name) => names.includes(name));
}
