import './node-version.js';
import 'reflect-metadata';
import { createServer, type Server } from 'node:http';
import { ConfigError, loadConfig } from './config.js';
import { chooseLogFormat, createLogger } from './common/logger.js';
import { DatabaseInUseError } from './db/errors.js';
import { eventRetentionHook } from './modules/events/event-retention.js';
import { recordingRetentionHook } from './modules/recordings/recording-retention.js';
import { secureDataDir, storeFirstApiKey } from './platform/data-dir.js';
import { listenOperatorSocket, operatorSocketPath, writeOperatorFile } from './operator/operator-file.js';

const SHUTDOWN_GRACE_MS = 10_000;

async function start(): Promise<void> {
  const config = loadConfig();
  secureDataDir(config.dataDir);
  const logger = createLogger(config.logLevel, undefined, chooseLogFormat(process.stdout.isTTY, config.nodeEnv));
  // A rejection nobody handled is one piece of work gone wrong, its work already lost: it is logged
  // with its stack, and every other request and tenant goes on being served (docs/operating.md).
  process.on('unhandledRejection', (reason) => {
    logger.error({ err: reason, event: 'unhandledRejection' }, 'a promise was rejected and nothing handled it; the server goes on serving');
  });
  // An exception nothing caught may have left state half-changed: the server stops, but through the
  // same drain as SIGTERM (requests in flight finish), and exits 1.
  let stopFor: ((reason: string, code: number) => Promise<void>) | null = null;
  process.on('uncaughtException', (error) => {
    logger.fatal({ err: error, event: 'uncaughtException' }, 'an exception was not caught; the server stops after draining');
    if (stopFor) void stopFor('uncaughtException', 1);
    else process.exit(1);
  });
  // Loaded after the configuration is known good, so a bad value fails at once.
  const { openDatabase } = await import('./db/orm.js');
  const { createGateway } = await import('./app.js');
  const { CampaignRunner } = await import('./modules/programs/runner/campaign-runner.js');
  const { gatewayRunnerOptions } = await import('./modules/programs/runner/gateway-runner.js');
  const { SimulatedDialer } = await import('./modules/programs/runner/simulated-dialer.js');
  const { FIRE_BATCH } = await import('./modules/programs/triggers/trigger-fire.js');
  const { importRecoveryHook } = await import('./modules/contacts/organization-imports.js');
  const database = await openDatabase({
    databaseUrl: config.databaseUrl,
    dataDir: config.dataDir,
    migrate: config.migrateOnStart,
    logger,
    pool: { max: config.db.poolMax, acquireTimeoutMs: config.db.poolAcquireTimeoutMs, statementTimeoutMs: config.db.statementTimeoutMs },
    preparedReads: config.db.preparedStatements,
  });
  const { assertCredentialsKeyFor } = await import('./modules/sealed-secrets/credentials-check.js');
  await assertCredentialsKeyFor(database.em, config.telephony.credentialsKey).catch(async (error: unknown) => {
    await database.close();
    throw error;
  });
  const gateway = await createGateway(config, database, logger);
  // An import cut off by the last stop is undone (organization-imports.ts): on the embedded database
  // every one still held, its one process being this one; on PostgreSQL those whose lease ran out.
  const undone = await gateway.services.imports.recover({ all: database.kind === 'pglite' });
  if (undone > 0) logger.warn({ imports: undone }, 'undid imports that a stopped process left unfinished');
  // CSV imports (contact-import-worker.ts): on the embedded database every running one was this process's,
  // so it resumes at once; on PostgreSQL when its lease runs out. Every replica polls for them.
  if (database.kind === 'pglite') await gateway.services.contactImports.releaseAll();
  gateway.services.contactImportWorker.start();

  // Listen before the first organization is made, so a port in use stops the start before a key is
  // printed; /readyz answers 503 until that is done.
  gateway.setReady(false);
  const server: Server = gateway.app.listen(config.port, config.host);
  gateway.attach(server);
  // Node cuts a request that takes longer than this to arrive; the app answers 503 past it.
  server.requestTimeout = config.requestTimeoutMs;
  server.headersTimeout = Math.min(60_000, config.requestTimeoutMs);
  await new Promise<void>((resolve, reject) => {
    server.once('listening', resolve);
    server.once('error', (error: NodeJS.ErrnoException) =>
      reject(error.code === 'EADDRINUSE' ? new Error(`PORT ${config.port} is already in use on ${config.host}; stop what listens there or set PORT`) : error),
    );
  });
  const metricsServer = gateway.metricsApp && config.metricsPort !== undefined ? gateway.metricsApp.listen(config.metricsPort, config.host) : undefined;
  if (metricsServer) {
    await new Promise<void>((resolve, reject) => {
      metricsServer.once('listening', resolve);
      metricsServer.once('error', reject);
    });
    logger.info({ metricsPort: config.metricsPort }, `metrics on http://localhost:${config.metricsPort}/metrics`);
  }
  // On the embedded database this process is the only one that can open it: the operator CLI finds
  // here where to send its commands instead, on a Unix socket of their own (src/operator/operator-file.ts).
  let closeOperatorDoor = async () => {};
  let removeOperatorFile = () => {};
  if (database.kind === 'pglite' && !config.dataDir.startsWith('memory:')) {
    const socket = operatorSocketPath(config.dataDir);
    closeOperatorDoor = await listenOperatorSocket(createServer(gateway.operatorApp), socket, config.dataDir);
    removeOperatorFile = writeOperatorFile(config.dataDir, { pid: process.pid, socket, token: gateway.operatorToken });
  }
  await gateway.services.provisioning.bootstrap(
    config.bootstrapApiKey,
    logger,
    (line) => console.log(line),
    (apiKey) => storeFirstApiKey(config.dataDir, apiKey),
  );
  gateway.setReady(true);
  const where = database.kind === 'pglite' ? `embedded PGlite in ${config.dataDir}` : 'PostgreSQL';
  logger.info({ port: config.port, database: database.kind }, `listening on http://localhost:${config.port} (${where})`);

  const runner = config.runner.enabled
    ? new CampaignRunner({
        em: database.em,
        dialer: new SimulatedDialer({ seed: config.runner.dialerSeed, speedMs: config.runner.dialerSpeedMs }),
        logger,
        ...gatewayRunnerOptions(gateway.services, { publicUrl: config.telephony.publicUrl, talkSimulatedCalls: config.runner.dialerVoice }),
        intervalMs: config.runner.intervalMs,
        leaseMs: config.runner.leaseMs,
      })
    : null;
  // Live programs: each tick fires the triggers that are due, a batch at a time.
  runner?.onTick.push(async (now) => {
    for (;;) {
      const { triggered, cancelled } = await gateway.services.triggers.fireDue(now);
      if (triggered + cancelled < FIRE_BATCH) break;
    }
  });
  // The events outbox keeps EVENTS_RETENTION_DAYS days.
  runner?.onTick.push(eventRetentionHook(gateway.services.events, config.eventsRetentionDays));
  // Imports another replica left unfinished are undone once their lease has run out.
  runner?.onTick.push(importRecoveryHook(gateway.services.imports));
  // Call recordings are kept each organization's recordingRetentionDays, then deleted at the carrier too.
  runner?.onTick.push(recordingRetentionHook(gateway.services.recordings));
  runner?.start();
  // A single call (POST /api/calls) is placed by this process's runner at once, else at the next tick of any.
  if (runner) gateway.services.directCalls.onQueued = () => runner.wake();
  // Every replica sends due webhook deliveries; claims with SKIP LOCKED and a lease keep them apart.
  const { WebhookWorker } = await import('./modules/webhooks/webhook-worker.js');
  const webhooks = new WebhookWorker({
    em: database.em,
    credentialsKey: () => config.telephony.credentialsKey,
    allowPrivate: config.webhooks.allowPrivate,
    timeoutMs: config.webhooks.timeoutMs,
    logger,
  });
  webhooks.start();
  // Analyses run as calls end; the tick picks up those a restart (or a dead replica's claim) left due.
  gateway.services.analyses.start();

  let stopping = false;
  const shutdown = async (signal: string, code = 0) => {
    if (stopping) return;
    stopping = true;
    // /readyz answers 503 at once, but the listener stays open for SHUTDOWN_DRAIN_MS: a load balancer
    // polling it stops sending here before connections are refused; then requests in flight finish.
    gateway.setReady(false);
    logger.info({ signal, drainMs: config.shutdownDrainMs }, 'shutting down: not ready, draining, then finishing requests in flight');
    await Promise.all([runner?.stop(), webhooks.stop(), new Promise((resolve) => setTimeout(resolve, config.shutdownDrainMs))]);
    // SSE streams and subscriptions would hold their connections open until the grace period ends.
    gateway.closeLive();
    const force = setTimeout(() => {
      gateway.closeStreams();
      server.closeAllConnections();
    }, SHUTDOWN_GRACE_MS);
    await new Promise<void>((resolve) => server.close(() => resolve()));
    clearTimeout(force);
    metricsServer?.closeAllConnections();
    await new Promise<void>((resolve) => (metricsServer ? metricsServer.close(() => resolve()) : resolve()));
    removeOperatorFile();
    await closeOperatorDoor();
    await gateway.stop();
    await database.close();
    logger.info('stopped');
    process.exit(code);
  };
  stopFor = shutdown;
  // The embedded database's thread stopped on its own (PGlite crashed): every request would answer 503
  // from now on, so the process ends through the same drain, with exit code 1, for its supervisor to restart.
  void database.embedded?.lost?.then((error) => {
    logger.fatal({ err: error }, 'the embedded database stopped; shutting down');
    void shutdown('embedded database lost', 1);
  });
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));
}

start().catch((error: unknown) => {
  if (error instanceof ConfigError || error instanceof DatabaseInUseError) {
    console.error(`Cannot start: ${error.message}`);
  } else {
    console.error(`Cannot start: ${error instanceof Error ? error.message : String(error)}`);
  }
  process.exit(1);
});
