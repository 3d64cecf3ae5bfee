import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { seedMigratedDataDir, TEST_DATABASE_URL } from '../helpers/database.js';
import { freePort, withClient, withDatabase } from './pg-cluster.js';

// The built entry points as an operator runs them (pretest builds dist/), each test on data of its own.
export const ROOT = new URL('../../', import.meta.url).pathname;
export const CLI = 'dist/src/cli.js';
export const MAIN = 'dist/src/main.js';

/**
 * Node options of every process these tests start. `--liftoff-only`: V8 compiles PGlite's
 * WebAssembly with its baseline compiler only. A process here lives for seconds, and optimizing
 * the Postgres functions hot at start-up cost more than it saved: a server start took about 2.5
 * CPU s with it, 1.7 s without. Nothing but the compiler tier differs (docs/development/testing.md, The test suite).
 */
export const NODE_ARGS = ['--liftoff-only'];

export interface Exit {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs a built script to its exit with the test environment plus `env`. */
export function runScript(script: string, args: string[], env: Record<string, string>): Promise<Exit> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [...NODE_ARGS, script, ...args], { cwd: ROOT, env: { ...process.env, ...env } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.on('exit', (code) => resolve({ code, stdout, stderr }));
  });
}

export interface OperatorEnvironment {
  dataDir: string;
  /** DATA_DIR, an empty JWT_SECRET (generated), NODE_COMPILE_CACHE, and DATABASE_URL to a fresh database when TEST_DATABASE_URL is set. */
  env: Record<string, string>;
  drop(): Promise<void>;
}

/**
 * A fresh DATA_DIR in /tmp, and on PostgreSQL a fresh database of its own. On PGlite the DATA_DIR
 * holds a fresh, fully migrated embedded database (a copy of a template), unless `empty` asks for
 * the very first start, where the process creates the cluster and runs every migration itself.
 */
export async function operatorEnvironment(prefix: string, { empty = false }: { empty?: boolean } = {}): Promise<OperatorEnvironment> {
  const dataDir = mkdtempSync(join(tmpdir(), `gateway-${prefix}-`));
  if (!TEST_DATABASE_URL && !empty) await seedMigratedDataDir(dataDir);
  // NODE_COMPILE_CACHE: Node keeps the compiled JavaScript of dist/ between the many short processes
  // these tests start (a CLI command or a server each), instead of compiling it again in every one.
  const env: Record<string, string> = { DATA_DIR: dataDir, JWT_SECRET: '', NODE_COMPILE_CACHE: join(tmpdir(), 'gateway-test-compile-cache') };
  let databaseName: string | undefined;
  if (TEST_DATABASE_URL) {
    databaseName = `gateway_${prefix.replaceAll('-', '_')}_${randomUUID().replaceAll('-', '')}`;
    await withClient(TEST_DATABASE_URL, (client) => client.query(`create database ${databaseName}`));
    env.DATABASE_URL = withDatabase(TEST_DATABASE_URL, databaseName);
  }
  return {
    dataDir,
    env,
    async drop() {
      rmSync(dataDir, { recursive: true, force: true });
      if (TEST_DATABASE_URL && databaseName) {
        await withClient(TEST_DATABASE_URL, (client) => client.query(`drop database if exists ${databaseName} with (force)`));
      }
    },
  };
}

/** A built server started by startServer: its process, address, everything it printed, and its exit. */
export interface ServerProcess {
  child: ChildProcess;
  url: string;
  output: () => string;
  /**
   * The output once it has a line matching `pattern` (within `timeoutMs`, else what it has): the
   * server writes its JSON log lines in batches, up to 100 ms after they were logged.
   */
  outputWith(pattern: RegExp | string, timeoutMs?: number): Promise<string>;
  exited: Promise<number | null>;
}

/**
 * Starts the built server on a loopback port (`port`, else a free one) with the test environment
 * plus `env`; resolves once /readyz answers.
 */
export async function startServer(env: Record<string, string>, { logLevel = 'warn', port }: { logLevel?: string; port?: number } = {}): Promise<ServerProcess> {
  port ??= await freePort();
  const child = spawn(process.execPath, [...NODE_ARGS, MAIN], {
    cwd: ROOT,
    env: { ...process.env, ...env, PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: logLevel },
  });
  let output = '';
  child.stdout!.on('data', (chunk) => (output += chunk));
  child.stderr!.on('data', (chunk) => (output += chunk));
  // 'close': the process has ended and its output has all been read.
  const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  const outputWith = async (pattern: RegExp | string, timeoutMs = 10_000) => {
    const has = () => (typeof pattern === 'string' ? output.includes(pattern) : pattern.test(output));
    for (const until = Date.now() + timeoutMs; !has() && Date.now() < until;) await new Promise((resolve) => setTimeout(resolve, 20));
    return output;
  };
  const url = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 600; i++) {
    if (child.exitCode !== null) throw new Error(`server exited: ${output}`);
    try {
      if ((await fetch(`${url}/readyz`)).ok) return { child, url, output: () => output, outputWith, exited };
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  child.kill('SIGKILL');
  throw new Error(`server did not become ready: ${output}`);
}
