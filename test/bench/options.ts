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
  /** The voice section's ramp: concurrent calls per step. */
  voiceSteps: number[];
  /** The voice section's providers, each measured through its doubles (`--voice-providers`, default all three). */
  voiceProviders: VoiceProvider[];
  /** The voice section on the embedded PGlite rather than PostgreSQL (`--pglite`; also when no PostgreSQL can be had). */
  pglite: boolean;
}

const SECTIONS = ['runner', 'voice'];
/** The speech-to-speech bridge to OpenAI Realtime or Gemini Live, or the streaming pipeline (Deepgram → the agent's model → ElevenLabs). */
export const VOICE_PROVIDERS = ['openai', 'google', 'streaming'] as const;
export type VoiceProvider = (typeof VOICE_PROVIDERS)[number];

export const USAGE = `Usage: npm run bench [-- --duration=S --rounds=N --connections=C --only=kind,kind --warmup=S --voice-steps=10,25,50,100 --voice-providers=openai,google,streaming --pglite]

Env (argv wins): DATABASE_URL, BENCH_DURATION (5), BENCH_ROUNDS (3), BENCH_CONNECTIONS (10),
BENCH_ONLY (comma list), BENCH_WARMUP (2), BENCH_KEEP_DATABASE=1 (with DATABASE_URL:
keep gateway_bench at the end), BENCH_VOICE_STEPS (10,25,50,100), BENCH_VOICE_PROVIDERS (openai,google,streaming). Kinds: ${KINDS.join(', ')},
runner (the campaign runner section), voice (voice calls through the media stream: --duration is each
step's measured seconds, --voice-steps the concurrent calls of each step, --voice-providers the doubles
called (openai: OpenAI Realtime, google: Gemini Live, streaming: the streaming pipeline with Deepgram and
ElevenLabs), --pglite the embedded database).`;

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
      pglite: { type: 'boolean' },
      help: { type: 'boolean' },
    },
    strict: true,
  });
  if (values.help) {
    console.log(USAGE);
    process.exit(0);
  }
  const only = (values.only ?? env.BENCH_ONLY ?? '').split(',').map((kind) => kind.trim()).filter(Boolean);
  const unknown = only.filter((kind) => !SECTIONS.includes(kind) && !(KINDS as readonly string[]).includes(kind));
  if (unknown.length > 0) throw new Error(`unknown kind(s) ${unknown.join(', ')}: use ${[...KINDS, ...SECTIONS].join(', ')}`);
  const steps = (values['voice-steps'] ?? env.BENCH_VOICE_STEPS ?? '10,25,50,100').split(',').map((step) => step.trim()).filter(Boolean);
  const voiceSteps = steps.map((step) => positive('BENCH_VOICE_STEPS', step, 0, true));
  if (voiceSteps.length === 0) throw new Error(`BENCH_VOICE_STEPS names no step\n\n${USAGE}`);
  const providers = (values['voice-providers'] ?? env.BENCH_VOICE_PROVIDERS ?? VOICE_PROVIDERS.join(',')).split(',').map((name) => name.trim()).filter(Boolean);
  const unknownProviders = providers.filter((name) => !(VOICE_PROVIDERS as readonly string[]).includes(name));
  if (providers.length === 0 || unknownProviders.length > 0) throw new Error(`BENCH_VOICE_PROVIDERS must name ${VOICE_PROVIDERS.join(' and/or ')}, got "${providers.join(',')}"\n\n${USAGE}`);
  return {
    databaseUrl: env.DATABASE_URL || undefined,
    keepDatabase: env.BENCH_KEEP_DATABASE === '1',
    duration: positive('BENCH_DURATION', values.duration ?? env.BENCH_DURATION, 5, false),
    rounds: positive('BENCH_ROUNDS', values.rounds ?? env.BENCH_ROUNDS, 3, true),
    connections: positive('BENCH_CONNECTIONS', values.connections ?? env.BENCH_CONNECTIONS, 10, true),
    kinds: only.length > 0 ? KINDS.filter((kind) => only.includes(kind)) : [...KINDS],
    runner: only.length === 0 || only.includes('runner'),
    voice: only.length === 0 || only.includes('voice'),
    voiceSteps,
    voiceProviders: VOICE_PROVIDERS.filter((name) => providers.includes(name)),
    pglite: values.pglite ?? false,
    warmup: positive('BENCH_WARMUP', values.warmup ?? env.BENCH_WARMUP, 2, false, true),
  };
}
