import './node-version.js';
import 'reflect-metadata';
import { existsSync, readFileSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { RequestContext } from '@mikro-orm/core';
import { ConfigError, loadConfig } from './config.js';
import { secureDataDir } from './platform/data-dir.js';
import { createLogger } from './common/logger.js';
import { AppError } from './common/errors.js';
import { DatabaseInUseError } from './db/errors.js';
import type { Services } from './services.js';
import { OPERATOR_COMMANDS as COMMANDS, UsageError } from './operator/operator-commands.js';
import { readOperatorFile, type OperatorEndpoint } from './operator/operator-file.js';
import { own } from './common/own.js';

function print(value: unknown): void {
  process.stdout.write(JSON.stringify(value) + '\n');
}

const FOOTER = `The CLI uses DATABASE_URL and DATA_DIR exactly as the server does. On the embedded
database only one process can hold it: while the server runs, the CLI sends the command to it
(through DATA_DIR/operator.json); otherwise it opens the database itself.`;

function usage(): string {
  const commands = Object.values(COMMANDS).map((command) => `  ${command.usage}\n${indent(command.description)}`);
  return `Usage: npm run cli -- <command> [options]\n\nCommands:\n${commands.join('\n')}\n  help [<command>]\n      Prints this, or one command's usage.\n\n${FOOTER}`;
}

function commandUsage(name: string): string {
  const command = COMMANDS[name]!;
  return `Usage: npm run cli -- ${command.usage}\n\n${indent(command.description)}\n\n${FOOTER}`;
}

function indent(lines: string): string {
  return lines
    .split('\n')
    .map((line) => `      ${line}`)
    .join('\n');
}

async function withServices(run: (services: Services) => Promise<unknown[]>): Promise<void> {
  const config = loadConfig();
  secureDataDir(config.dataDir);
  const { openDatabase } = await import('./db/orm.js');
  const { createServices } = await import('./services.js');
  const database = await openDatabase({
    databaseUrl: config.databaseUrl,
    dataDir: config.dataDir,
    migrate: true,
    logger: createLogger('silent'),
    preparedReads: config.db.preparedStatements,
  });
  try {
    const services = createServices(database.em, config, undefined, { databaseKind: database.kind });
    for (const line of await RequestContext.create(database.orm.em, () => run(services))) print(line);
  } finally {
    await database.close();
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * The running server that holds the embedded database, when there is one: its pid is the lock's
 * (DATA_DIR/pglite.pid) and it wrote where its /operator door is. On PostgreSQL every process may
 * open the database, so the CLI always does.
 */
function runningServer(): OperatorEndpoint | undefined {
  const config = loadConfig();
  if (config.databaseUrl) return undefined;
  const endpoint = readOperatorFile(config.dataDir);
  const lock = join(config.dataDir, 'pglite.pid');
  if (!endpoint || !existsSync(lock) || Number(readFileSync(lock, 'utf8')) !== endpoint.pid || !isAlive(endpoint.pid)) return undefined;
  return endpoint;
}

/** One POST to the door's socket: its status and body (a server that holds the database but does not answer throws). */
function postToSocket(socketPath: string, path: string, token: string, body: string): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        socketPath,
        path,
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (text += chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/** Has the running server run the command: the same checks and answers as running it here. */
async function viaServer(endpoint: OperatorEndpoint, name: string, values: Record<string, unknown>): Promise<void> {
  let res: { status: number; text: string };
  try {
    res = await postToSocket(endpoint.socket, `/operator/commands/${name}`, endpoint.token, JSON.stringify(values));
  } catch (error) {
    throw new Error(
      `the server (process ${endpoint.pid}) holds the embedded database but does not answer on ${endpoint.socket} ` +
        `(${error instanceof Error ? error.message : String(error)}); wait until it has started, or stop it`,
      { cause: error },
    );
  }
  let body: { lines?: unknown[]; detail?: string; code?: string } | undefined;
  try {
    body = JSON.parse(res.text) as typeof body;
  } catch {
    body = undefined;
  }
  if (res.status >= 200 && res.status < 300 && Array.isArray(body?.lines)) {
    for (const line of body.lines) print(line);
    return;
  }
  if (body?.code === 'BAD_USER_INPUT' && res.status === 400 && body.detail) throw new UsageError(body.detail);
  throw new Error(body?.detail ?? `the server answered ${res.status}`);
}

let current: string | undefined;

async function main(argv: string[]): Promise<void> {
  const [name, ...rest] = argv;
  if (name === undefined || name === 'help' || name === '--help' || name === '-h') {
    const topic = rest[0];
    if (topic !== undefined && !own(COMMANDS, topic)) throw new UsageError(`unknown command "${topic}"`);
    console.log(topic ? commandUsage(topic) : usage());
    return;
  }
  const command = own(COMMANDS, name);
  if (!command) throw new UsageError(`unknown command "${name}"`);
  current = name;
  const { values } = parseArgs({ args: rest, options: { ...command.options, help: { type: 'boolean', short: 'h' } }, strict: true });
  if (values.help) {
    console.log(commandUsage(name));
    return;
  }
  const run = command.prepare(values);
  const server = runningServer();
  if (server) {
    const { help: _help, ...options } = values;
    await viaServer(server, name, options);
  } else {
    await withServices(run);
  }
}

main(process.argv.slice(2)).catch((error: unknown) => {
  const help = current ? commandUsage(current) : usage();
  if (error instanceof UsageError) console.error(`${error.message}\n\n${help}`);
  else if (error instanceof Error && 'code' in error && typeof error.code === 'string' && error.code.startsWith('ERR_PARSE_ARGS_')) {
    console.error(`${error.message}\n\n${help}`);
  } else if (error instanceof ConfigError || error instanceof DatabaseInUseError || error instanceof AppError) console.error(`Error: ${error.message}`);
  else console.error(`Error: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
});
