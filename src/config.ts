import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { resolve, join } from 'node:path';
import { isIP } from 'node:net';

export type LogLevel = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';

export interface Config {
  port: number;
  host: string;
  databaseUrl?: string;
  dataDir: string;
  jwtSecret: string;
  jwtIssuer: string;
  jwtAudience: string;
  jwtTtlSeconds: number;
  bootstrapApiKey?: string;
  logLevel: LogLevel;
  nodeEnv: string;
  migrateOnStart: boolean;
  bodyLimitBytes: number;
  /** An answer (either door) larger than this is replaced by a 400 naming its size. */
  responseMaxBytes: number;
  /** Per-organization knowledge storage: the sum of document sizes, and the number of documents. */
  knowledge: { maxBytesPerOrg: number; maxDocumentsPerOrg: number };
  /** A CSV import's file size and data rows (docs/campaigns.md#csv-import-jobs). */
  contactImports: { maxBytes: number; maxRows: number };
  graphql: { introspection: boolean; maxDepth: number; maxCost: number; maxAliases: number; maxTokens: number };
  /**
   * Requests per minute per API key, per organization and per client IP without credentials
   * (0 = off); with redisUrl the counters are shared by every replica on that Redis.
   */
  /** Requests of one organization that run at once in this process; the others wait their turn; 0 = no limit. */
  concurrencyPerOrganization: number;
  rateLimit: { perMinute: number; anonymousPerMinute: number; organizationPerMinute: number; redisUrl?: string };
  /** A request not answered within this many ms answers 503. */
  requestTimeoutMs: number;
  /** On SIGTERM, how long /readyz answers 503 while requests are still served, before the listener closes. */
  shutdownDrainMs: number;
  /** PostgreSQL only: statement timeout, pool size and how long a request waits for a connection. */
  db: { statementTimeoutMs: number; poolMax: number; poolAcquireTimeoutMs: number; preparedStatements: boolean };
  metricsEnabled: boolean;
  /** GET /metrics needs `Authorization: Bearer <metricsToken>` when set. */
  metricsToken?: string;
  /** Serve /metrics on this port alone (not on `port`). */
  metricsPort?: number;
  /** Origins a browser may call the doors from (CORS); none is `[]`. */
  corsOrigins: string[];
  /** Express's `trust proxy`: false, true, a hop count, or addresses/subnets of trusted proxies. */
  trustProxy: boolean | number | string;
  /** Active (unexpired) API keys a user may hold at once. */
  apiKeysMaxPerUser: number;
  /** How long an authenticated key is kept before it is looked up again (0: every request); under a second. */
  apiKeyCacheMs: number;
  /** Days an event is kept in the outbox before the runner's tick deletes it. */
  eventsRetentionDays: number;
  /** Webhooks: private addresses allowed (development, tests) and how long a delivery may take. */
  webhooks: { allowPrivate: boolean; timeoutMs: number };
  /** HTTP tools and MCP servers: private addresses allowed (TOOLS_ALLOW_PRIVATE: development, tests) and how often an MCP server's tools are listed again. */
  tools: { allowPrivate: boolean; mcpRefreshMs: number };
  /** Live events: GraphQL subscriptions (graphql-ws) and Server-Sent Events. */
  live: {
    /** Open GraphQL subscriptions one API key may hold at once in a process (a token counts against its key). */
    subscriptionsPerKey: number;
    /** Open live connections (graphql-ws sockets and SSE streams together) one API key may hold in a process. */
    connectionsPerKey: number;
    /** Open live connections all the keys of one organization may hold in a process. */
    connectionsPerOrganization: number;
    /** How often an SSE stream sends a heartbeat comment. */
    sseHeartbeatMs: number;
    /** Bytes an SSE stream may have written and not yet sent before it is cut (the client resumes with Last-Event-ID). */
    sseMaxBufferedBytes: number;
  };
  /** The campaign runner and its simulated dialer. */
  runner: {
    enabled: boolean;
    intervalMs: number;
    leaseMs: number;
    dialerSpeedMs: number;
    dialerSeed: string;
    /** DIALER_VOICE: answered simulated calls of a flow or agent are talked through the voice engine (false: the dialer's seeded walk is recorded). */
    dialerVoice: boolean;
    /** DIRECT_CALLS_MAX: single calls (POST /api/calls) one organization may have live at once. */
    directCallsMax: number;
  };
  /** Carriers: where their webhooks reach us, where their API is, and the key their credentials are sealed with. */
  telephony: {
    /** PUBLIC_URL: this gateway's address as a carrier reaches it (webhooks are signed over it). */
    publicUrl?: string;
    /** TWILIO_API_BASE_URL: Twilio's REST API, or a regional edge, or a Twilio-compatible test double. */
    twilioApiBaseUrl: string;
    /** TELNYX_API_BASE_URL: Telnyx's REST API (API v2), or a Telnyx-compatible test double; always set from the environment (tests may leave it out). */
    telnyxApiBaseUrl?: string;
    /** CREDENTIALS_KEY: 32 bytes (base64 or 64 hex digits) that seal carrier auth tokens (AES-256-GCM). */
    credentialsKey?: Buffer;
  };
  /** MODEL_MAX_OUTPUT_TOKENS: the most output tokens an agent may ask a provider for. */
  modelMaxOutputTokens: number;
  providers: {
    openaiApiKey?: string;
    anthropicApiKey?: string;
    openaiCompatibleBaseUrl?: string;
    openaiCompatibleApiKey?: string;
    /** OPENAI_REALTIME_URL: OpenAI Realtime's WebSocket endpoint (ws/wss), for a proxy or a test double; unset: OpenAI's own. */
    openaiRealtimeUrl?: string;
    /** GEMINI_API_KEY: Google's Gemini API key, for `google/…` text replies and Gemini Live (stsProvider google). */
    geminiApiKey?: string;
    /**
     * GEMINI_BASE_URL: the Gemini API's endpoint without its version (a regional one, a proxy or a test
     * double); unset: https://generativelanguage.googleapis.com. Text replies use `{it}/v1beta`; the Live
     * socket is the SDK's, built on it with a ws/wss scheme.
     */
    geminiBaseUrl?: string;
    /** DEEPGRAM_API_KEY: Deepgram's key, for the streaming pipeline's recognizer (sttProvider deepgram). */
    deepgramApiKey?: string;
    /** DEEPGRAM_BASE_URL: Deepgram's API base (http/https/ws/wss; the SDK builds `{it}/v1/listen`), for a proxy or a test double; unset: Deepgram's own. */
    deepgramBaseUrl?: string;
    /** ELEVENLABS_API_KEY: ElevenLabs' key, for the streaming pipeline's synthesizer (ttsProvider elevenlabs). */
    elevenlabsApiKey?: string;
    /** ELEVENLABS_BASE_URL: ElevenLabs' WebSocket base (ws/wss; `{it}/v1/text-to-speech/{voice_id}/stream-input`), for a proxy or a test double; unset: wss://api.elevenlabs.io. */
    elevenlabsBaseUrl?: string;
    /** OPENAI_BASE_URL: OpenAI's REST API base (speech synthesis for ttsProvider openai), for a proxy or a test double; unset: https://api.openai.com/v1. */
    openaiBaseUrl?: string;
  };
}

/** A bad environment value: main.ts prints its message as one line and exits. */
export class ConfigError extends Error {}

const LOG_LEVELS: LogLevel[] = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

function integer(env: NodeJS.ProcessEnv, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new ConfigError(`${name} must be an integer from ${min} to ${max}, got "${raw}"`);
  }
  return value;
}

function boolean(env: NodeJS.ProcessEnv, name: string, fallback: boolean): boolean {
  const raw = env[name]?.toLowerCase();
  if (raw === undefined || raw === '') return fallback;
  if (['1', 'true', 'yes', 'on'].includes(raw)) return true;
  if (['0', 'false', 'no', 'off'].includes(raw)) return false;
  throw new ConfigError(`${name} must be true or false, got "${env[name]}"`);
}

function url(env: NodeJS.ProcessEnv, name: string, protocols: string[]): string | undefined {
  const raw = env[name];
  if (raw === undefined || raw === '') return undefined;
  let parsed: URL;
  try {
    parsed = new URL(raw);
  } catch {
    throw new ConfigError(`${name} must be a URL (${protocols.join(' or ')}), got an unparseable value`);
  }
  if (!protocols.includes(parsed.protocol)) {
    throw new ConfigError(`${name} must start with ${protocols.join(' or ')}, got "${parsed.protocol}"`);
  }
  return raw;
}

/** The JWT secret is kept under DATA_DIR when not given, so tokens survive restarts. */
function jwtSecret(env: NodeJS.ProcessEnv, dataDir: string): string {
  const given = env.JWT_SECRET;
  if (given !== undefined && given !== '') {
    if (given.length < 32) throw new ConfigError('JWT_SECRET must be at least 32 characters long');
    return given;
  }
  const file = join(dataDir, 'jwt-secret');
  if (existsSync(file)) return readFileSync(file, 'utf8').trim();
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const secret = randomBytes(48).toString('base64url');
  writeFileSync(file, secret + '\n', { mode: 0o600 });
  return secret;
}

/** Apollo Sandbox's origins: its embedded page (the development landing page) and studio.apollographql.com/sandbox. */
export const SANDBOX_ORIGINS = ['https://sandbox.embed.apollographql.com', 'https://studio.apollographql.com'];

/** CORS_ORIGINS: comma-separated origins (`scheme://host[:port]`); unset = Sandbox's in development, none in production. */
function corsOrigins(env: NodeJS.ProcessEnv, production: boolean): string[] {
  const raw = env.CORS_ORIGINS;
  if (raw === undefined) return production ? [] : SANDBOX_ORIGINS;
  const origins = raw
    .split(',')
    .map((item) => item.trim())
    .filter(Boolean);
  for (const origin of origins) {
    let parsed: URL | undefined;
    try {
      parsed = new URL(origin);
    } catch {
      // reported below
    }
    if (!parsed || !['http:', 'https:'].includes(parsed.protocol) || parsed.origin !== origin) {
      throw new ConfigError(`CORS_ORIGINS must be comma-separated origins such as https://app.example.com (no path, no trailing slash), got "${origin}"`);
    }
  }
  return origins;
}

const PROXY_NAMES = new Set(['loopback', 'linklocal', 'uniquelocal']);

/** TRUST_PROXY: off by default; true, a hop count, or comma-separated proxy addresses, subnets or loopback|linklocal|uniquelocal. */
function trustProxy(env: NodeJS.ProcessEnv): boolean | number | string {
  const raw = env.TRUST_PROXY?.trim();
  if (raw === undefined || raw === '' || ['false', '0', 'no', 'off'].includes(raw.toLowerCase())) return false;
  if (['true', 'yes', 'on'].includes(raw.toLowerCase())) return true;
  if (/^\d+$/.test(raw) && Number(raw) <= 100) return Number(raw);
  const items = raw.split(',').map((item) => item.trim());
  const valid = (item: string) => {
    if (PROXY_NAMES.has(item)) return true;
    const [address, bits, extra] = item.split('/');
    const family = isIP(address ?? '');
    return family !== 0 && extra === undefined && (bits === undefined || (/^\d+$/.test(bits) && Number(bits) <= (family === 4 ? 32 : 128)));
  };
  const bad = items.find((item) => !valid(item));
  if (bad !== undefined) {
    throw new ConfigError(`TRUST_PROXY must be true, false, a hop count, or addresses/subnets (or loopback, linklocal, uniquelocal), got "${bad}"`);
  }
  return items.join(',');
}

function metricsToken(env: NodeJS.ProcessEnv): string | undefined {
  const raw = env.METRICS_TOKEN;
  if (raw === undefined || raw === '') return undefined;
  if (raw.length < 16 || /\s/.test(raw)) throw new ConfigError('METRICS_TOKEN must be at least 16 characters, without spaces');
  return raw;
}

/** Seeds the simulated dialer's outcomes: the same seed replays the same campaign. */
function dialerSeed(env: NodeJS.ProcessEnv): string {
  const raw = env.DIALER_SEED;
  if (raw === undefined || raw === '') return 'gateway';
  if (raw.length > 200) throw new ConfigError(`DIALER_SEED must be at most 200 characters, got ${raw.length}`);
  return raw;
}

/** CREDENTIALS_KEY: exactly 32 bytes, as 64 hex digits or base64. */
function credentialsKey(env: NodeJS.ProcessEnv): Buffer | undefined {
  const raw = env.CREDENTIALS_KEY?.trim();
  if (raw === undefined || raw === '') return undefined;
  const key = /^[0-9a-f]{64}$/i.test(raw) ? Buffer.from(raw, 'hex') : Buffer.from(raw, 'base64');
  if (
    key.length !== 32 ||
    (!/^[0-9a-f]{64}$/i.test(raw) && key.toString('base64').replace(/=+$/, '') !== raw.replace(/=+$/, '').replace(/-/g, '+').replace(/_/g, '/'))
  ) {
    throw new ConfigError('CREDENTIALS_KEY must be 32 bytes as 64 hex digits or base64 (e.g. `openssl rand -base64 32`)');
  }
  return key;
}

/** PUBLIC_URL: an http(s) origin with an optional path prefix, kept without a trailing slash. */
function publicUrl(env: NodeJS.ProcessEnv): string | undefined {
  const raw = url(env, 'PUBLIC_URL', ['http:', 'https:']);
  if (raw === undefined) return undefined;
  const parsed = new URL(raw);
  if (parsed.search || parsed.hash || parsed.username)
    throw new ConfigError('PUBLIC_URL must be a plain address such as https://gateway.example.com (no query, fragment or credentials)');
  return raw.replace(/\/+$/, '');
}

/** The organization's default is ten keys' worth: minting keys no longer multiplies the limit. */
function rateLimit(env: NodeJS.ProcessEnv): Config['rateLimit'] {
  const perMinute = integer(env, 'RATE_LIMIT_PER_MINUTE', 600, 0, 1_000_000);
  return {
    perMinute,
    anonymousPerMinute: integer(env, 'RATE_LIMIT_ANONYMOUS_PER_MINUTE', 60, 0, 1_000_000),
    organizationPerMinute: integer(env, 'RATE_LIMIT_ORG_PER_MINUTE', perMinute * 10, 0, 10_000_000),
    redisUrl: url(env, 'REDIS_URL', ['redis:', 'rediss:']),
  };
}

/** Parses the environment once. Throws ConfigError naming the first bad variable. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const dataDir = resolve(env.DATA_DIR || './.data');
  const logLevel = (env.LOG_LEVEL || 'info') as LogLevel;
  if (!LOG_LEVELS.includes(logLevel)) {
    throw new ConfigError(`LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}, got "${env.LOG_LEVEL}"`);
  }
  const bootstrapApiKey = env.BOOTSTRAP_API_KEY || undefined;
  if (bootstrapApiKey !== undefined && !/^[A-Za-z0-9_-]{32,200}$/.test(bootstrapApiKey)) {
    throw new ConfigError('BOOTSTRAP_API_KEY must be 32 to 200 characters of letters, digits, "_" or "-"');
  }
  return {
    port: integer(env, 'PORT', 4000, 0, 65535),
    // Loopback unless told otherwise: a laptop's server is not offered to its network (the image sets 0.0.0.0).
    host: env.HOST || '127.0.0.1',
    databaseUrl: url(env, 'DATABASE_URL', ['postgres:', 'postgresql:']),
    dataDir,
    jwtSecret: jwtSecret(env, dataDir),
    jwtIssuer: env.JWT_ISSUER || 'telephony-agent-gateway',
    jwtAudience: env.JWT_AUDIENCE || 'telephony-agent-gateway',
    jwtTtlSeconds: integer(env, 'JWT_TTL_SECONDS', 3600, 60, 7 * 24 * 3600),
    bootstrapApiKey,
    logLevel,
    nodeEnv: env.NODE_ENV || 'development',
    migrateOnStart: boolean(env, 'MIGRATE_ON_START', true),
    bodyLimitBytes: integer(env, 'BODY_LIMIT_BYTES', 1024 * 1024, 1024, 64 * 1024 * 1024),
    responseMaxBytes: integer(env, 'RESPONSE_MAX_BYTES', 8 * 1024 * 1024, 1024, 1024 * 1024 * 1024),
    contactImports: {
      maxBytes: integer(env, 'IMPORT_MAX_BYTES', 256 * 1024 * 1024, 1024, 2 ** 31 - 1),
      maxRows: integer(env, 'IMPORT_MAX_ROWS', 1_000_000, 1, 10_000_000),
    },
    knowledge: {
      maxBytesPerOrg: integer(env, 'KNOWLEDGE_MAX_BYTES_PER_ORG', 50 * 1024 * 1024, 1, 1024 ** 4),
      maxDocumentsPerOrg: integer(env, 'KNOWLEDGE_MAX_DOCUMENTS_PER_ORG', 1000, 1, 10_000_000),
    },
    graphql: {
      introspection: boolean(env, 'GRAPHQL_INTROSPECTION', (env.NODE_ENV || 'development') !== 'production'),
      maxDepth: integer(env, 'GRAPHQL_MAX_DEPTH', 10, 2, 100),
      maxCost: integer(env, 'GRAPHQL_MAX_COST', 10_000, 100, 1_000_000),
      maxAliases: integer(env, 'GRAPHQL_MAX_ALIASES', 15, 1, 1000),
      maxTokens: integer(env, 'GRAPHQL_MAX_TOKENS', 5000, 100, 1_000_000),
    },
    concurrencyPerOrganization: integer(env, 'CONCURRENCY_PER_ORG', 16, 0, 10_000),
    rateLimit: rateLimit(env),
    requestTimeoutMs: integer(env, 'REQUEST_TIMEOUT_MS', 30_000, 10, 3_600_000),
    // Long enough for a load balancer polling /readyz to stop sending; no wait on a laptop or in tests.
    shutdownDrainMs: integer(env, 'SHUTDOWN_DRAIN_MS', (env.NODE_ENV || 'development') === 'production' ? 5000 : 0, 0, 600_000),
    db: {
      statementTimeoutMs: integer(env, 'DB_STATEMENT_TIMEOUT_MS', 15_000, 0, 3_600_000),
      poolMax: integer(env, 'DB_POOL_MAX', 10, 1, 1000),
      poolAcquireTimeoutMs: integer(env, 'DB_POOL_ACQUIRE_TIMEOUT_MS', 5000, 1, 600_000),
      preparedStatements: boolean(env, 'DB_PREPARED_STATEMENTS', true),
    },
    metricsEnabled: boolean(env, 'METRICS_ENABLED', true),
    metricsToken: metricsToken(env),
    metricsPort: env.METRICS_PORT ? integer(env, 'METRICS_PORT', 0, 1, 65535) : undefined,
    corsOrigins: corsOrigins(env, (env.NODE_ENV || 'development') === 'production'),
    trustProxy: trustProxy(env),
    apiKeysMaxPerUser: integer(env, 'API_KEYS_MAX_PER_USER', 50, 1, 10_000),
    apiKeyCacheMs: integer(env, 'API_KEY_CACHE_MS', 500, 0, 1000),
    eventsRetentionDays: integer(env, 'EVENTS_RETENTION_DAYS', 30, 1, 3650),
    webhooks: {
      allowPrivate: boolean(env, 'WEBHOOK_ALLOW_PRIVATE', false),
      timeoutMs: integer(env, 'WEBHOOK_TIMEOUT_MS', 10_000, 10, 60_000),
    },
    tools: {
      allowPrivate: boolean(env, 'TOOLS_ALLOW_PRIVATE', false),
      mcpRefreshMs: integer(env, 'MCP_TOOLS_REFRESH_MS', 600_000, 1000, 7 * 24 * 3_600_000),
    },
    live: {
      subscriptionsPerKey: integer(env, 'SUBSCRIPTIONS_PER_KEY', 20, 1, 10_000),
      connectionsPerKey: integer(env, 'LIVE_CONNECTIONS_PER_KEY', 10, 1, 10_000),
      connectionsPerOrganization: integer(env, 'LIVE_CONNECTIONS_PER_ORG', 50, 1, 100_000),
      sseHeartbeatMs: integer(env, 'SSE_HEARTBEAT_MS', 15_000, 100, 600_000),
      sseMaxBufferedBytes: integer(env, 'SSE_MAX_BUFFERED_BYTES', 1_048_576, 65_536, 268_435_456),
    },
    runner: {
      enabled: boolean(env, 'RUNNER_ENABLED', true),
      intervalMs: integer(env, 'RUNNER_INTERVAL_MS', 1000, 10, 3_600_000),
      leaseMs: integer(env, 'RUNNER_LEASE_MS', 60_000, 1000, 24 * 3_600_000),
      dialerSpeedMs: integer(env, 'DIALER_SPEED_MS', 200, 0, 600_000),
      dialerSeed: dialerSeed(env),
      dialerVoice: boolean(env, 'DIALER_VOICE', true),
      directCallsMax: integer(env, 'DIRECT_CALLS_MAX', 10, 1, 10_000),
    },
    telephony: {
      publicUrl: publicUrl(env),
      twilioApiBaseUrl: (url(env, 'TWILIO_API_BASE_URL', ['http:', 'https:']) ?? 'https://api.twilio.com').replace(/\/+$/, ''),
      telnyxApiBaseUrl: (url(env, 'TELNYX_API_BASE_URL', ['http:', 'https:']) ?? 'https://api.telnyx.com/v2').replace(/\/+$/, ''),
      credentialsKey: credentialsKey(env),
    },
    modelMaxOutputTokens: integer(env, 'MODEL_MAX_OUTPUT_TOKENS', 16_384, 1, 1_000_000),
    providers: {
      openaiApiKey: env.OPENAI_API_KEY || undefined,
      anthropicApiKey: env.ANTHROPIC_API_KEY || undefined,
      openaiCompatibleBaseUrl: url(env, 'OPENAI_COMPATIBLE_BASE_URL', ['http:', 'https:']),
      openaiCompatibleApiKey: env.OPENAI_COMPATIBLE_API_KEY || undefined,
      openaiRealtimeUrl: url(env, 'OPENAI_REALTIME_URL', ['ws:', 'wss:']),
      geminiApiKey: env.GEMINI_API_KEY || undefined,
      geminiBaseUrl: url(env, 'GEMINI_BASE_URL', ['http:', 'https:'])?.replace(/\/+$/, ''),
      deepgramApiKey: env.DEEPGRAM_API_KEY || undefined,
      deepgramBaseUrl: url(env, 'DEEPGRAM_BASE_URL', ['http:', 'https:', 'ws:', 'wss:'])?.replace(/\/+$/, ''),
      elevenlabsApiKey: env.ELEVENLABS_API_KEY || undefined,
      elevenlabsBaseUrl: url(env, 'ELEVENLABS_BASE_URL', ['ws:', 'wss:'])?.replace(/\/+$/, ''),
      openaiBaseUrl: url(env, 'OPENAI_BASE_URL', ['http:', 'https:'])?.replace(/\/+$/, ''),
    },
  };
}
