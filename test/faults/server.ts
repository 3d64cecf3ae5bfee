// The real server as an operator runs it (`node dist/src/main.js`), its output in a log file
// that the script prints when an assertion fails.
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, openSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { freePort } from '../support/pg-cluster.js';

const ROOT = new URL('../../', import.meta.url).pathname;

/** The key BOOTSTRAP_API_KEY registers on the first start; the load sends it. */
export const API_KEY = 'faults_' + 'k'.repeat(40);

export interface GatewayProcess {
  url: string;
  child: ChildProcess;
  logFile: string;
  /** Resolves with the exit code (or the signal's name) once the process is gone. */
  exited: Promise<number | string>;
  /** Exit code or signal once exited, else undefined. */
  exit(): number | string | undefined;
  logTail(lines?: number): string;
  /** The log lines that mention any of these strings (request ids), shortened. */
  logLinesWith(needles: string[]): string[];
  /** SIGKILL when still running; used by the cleanup. */
  kill(): void;
}

const running = new Set<GatewayProcess>();

export function killAllGateways(): void {
  for (const gateway of running) gateway.kill();
}

export async function startGateway(name: string, logDir: string, env: Record<string, string>): Promise<GatewayProcess> {
  const port = await freePort();
  const logFile = join(logDir, `${name}.log`);
  const fd = openSync(logFile, 'a');
  const child = spawn(process.execPath, ['dist/src/main.js'], {
    cwd: ROOT,
    stdio: ['ignore', fd, fd],
    env: {
      PATH: process.env.PATH ?? '',
      NODE_ENV: 'production',
      HOST: '127.0.0.1',
      PORT: String(port),
      BOOTSTRAP_API_KEY: API_KEY,
      RATE_LIMIT_PER_MINUTE: '0',
      RATE_LIMIT_ANONYMOUS_PER_MINUTE: '0',
      RUNNER_ENABLED: 'false',
      LOG_LEVEL: 'warn',
      JWT_SECRET: 'faults-jwt-secret-that-is-long-enough-0123456789',
      DATA_DIR: join(logDir, `${name}-data`),
      // For a profile of the gateway (docs/development/testing.md#fault-tests): stopped with SIGTERM then, so it is written.
      ...(process.env.FAULTS_GATEWAY_NODE_OPTIONS ? { NODE_OPTIONS: process.env.FAULTS_GATEWAY_NODE_OPTIONS } : {}),
      ...env,
    },
  });
  closeSync(fd);
  let exitValue: number | string | undefined;
  const exited = new Promise<number | string>((resolve) => {
    child.once('exit', (code, signal) => {
      exitValue = code ?? signal ?? 'unknown';
      running.delete(gateway);
      resolve(exitValue);
    });
  });
  const gateway: GatewayProcess = {
    url: `http://127.0.0.1:${port}`,
    child,
    logFile,
    exited,
    exit: () => exitValue,
    logTail(lines = 40) {
      const text = readFileSync(logFile, 'utf8').trimEnd().split('\n');
      // A line can carry a stack trace; the start of each says enough and keeps the tail readable.
      return text
        .slice(-lines)
        .map((line) => (line.length > 500 ? `${line.slice(0, 500)}…` : line))
        .join('\n');
    },
    logLinesWith(needles) {
      const text = readFileSync(logFile, 'utf8').split('\n');
      return text.filter((line) => needles.some((needle) => line.includes(needle))).map((line) => line.slice(0, 1500));
    },
    kill() {
      if (exitValue === undefined) child.kill(process.env.FAULTS_GATEWAY_NODE_OPTIONS ? 'SIGTERM' : 'SIGKILL');
    },
  };
  running.add(gateway);
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    if (exitValue !== undefined) throw new Error(`the gateway exited (${exitValue}) before it was ready:\n${gateway.logTail()}`);
    try {
      if ((await fetch(`${gateway.url}/readyz`, { signal: AbortSignal.timeout(2000) })).ok) return gateway;
    } catch {
      // not listening yet
    }
    await sleep(100);
  }
  gateway.kill();
  throw new Error(`the gateway was not ready within 60 s:\n${gateway.logTail()}`);
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
