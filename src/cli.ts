import './node-version.js';
import 'reflect-metadata';
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { RequestContext } from '@mikro-orm/core';
import { ConfigError, loadConfig } from './config.js';
import { secureDataDir } from './platform/data-dir.js';
import { createLogger } from './common/logger.js';
import { AppError } from './common/errors.js';
import { DatabaseInUseError } from './db/errors.js';
import type { Services } from './services.js';

type Options = NonNullable<ParseArgsConfig['options']>;
type Values = Record<string, string | boolean | undefined>;

/**
 * One operator command: its usage, what it does, its options, and what it runs against the services.
 * `prepare` checks the options before the database is opened (a usage error answers at once, and
 * does not wait for the embedded database's lock) and returns the work to run against the services.
 */
interface Command {
  usage: string;
  description: string;
  options: Options;
  prepare(values: Values): (services: Services) => Promise<void>;
}

class UsageError extends Error {}

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

function print(value: unknown): void {
  process.stdout.write(JSON.stringify(value) + '\n');
}

function text(values: Values, name: string): string | undefined {
  const value = values[name];
  return typeof value === 'string' ? value.trim() : undefined;
}

/** The operator commands; adding one is one more entry here. */
const COMMANDS: Record<string, Command> = {
  'org:create': {
    usage: 'org:create --name <organization> --email <admin email> [--user-name <name>]',
    description:
      'Creates an organization, its owner and a first API key; prints {"organizationId", "userId", "apiKey"}\n' +
      'as one JSON line. The key is shown only once (keys:create makes another).',
    options: { name: { type: 'string' }, email: { type: 'string' }, 'user-name': { type: 'string' } },
    prepare(values) {
      const name = text(values, 'name');
      const email = text(values, 'email');
      if (!name || name.length > 255) throw new UsageError('--name is required (1 to 255 characters)');
      if (!email || !EMAIL.test(email) || email.length > 320) throw new UsageError('--email is required and must be an email address');
      return async (services) => print(await services.provisioning.createOrganization({ name, email, userName: text(values, 'user-name') }));
    },
  },
  'keys:create': {
    usage: 'keys:create (--org <organization id> | --email <user email> | both) [--name <key name>]',
    description:
      'Creates a new API key for an existing organization: owned by the user with --email, or by the\n' +
      'organization\'s first owner; prints {"organizationId", "userId", "apiKeyId", "apiKey"} as one JSON line.\n' +
      'The key is shown only once. An email used in several organizations needs --org too.',
    options: { org: { type: 'string' }, email: { type: 'string' }, name: { type: 'string' } },
    prepare(values) {
      const organizationId = text(values, 'org');
      const email = text(values, 'email');
      const name = text(values, 'name');
      if (!organizationId && !email) throw new UsageError('--org or --email is required');
      if (email !== undefined && !EMAIL.test(email)) throw new UsageError('--email must be an email address');
      if (name !== undefined && (name.length === 0 || name.length > 255)) throw new UsageError('--name must be 1 to 255 characters');
      return async (services) => print(await services.provisioning.issueKey({ organizationId, email, name }));
    },
  },
  'credits:add': {
    usage: 'credits:add --org <organization id> --amount <1..1000000000> [--reason <text>]',
    description:
      'Grants credits to an organization and writes the grant to its credit ledger; prints\n' +
      '{"organizationId", "amount", "creditBalance", "ledgerEntryId"} as one JSON line.',
    options: { org: { type: 'string' }, amount: { type: 'string' }, reason: { type: 'string' } },
    prepare(values) {
      const organizationId = text(values, 'org');
      const amount = text(values, 'amount');
      const reason = typeof values.reason === 'string' ? values.reason : undefined;
      if (!organizationId) throw new UsageError('--org is required (an organization id)');
      if (!amount || !/^\d+$/.test(amount) || Number(amount) < 1 || Number(amount) > 1_000_000_000) {
        throw new UsageError('--amount is required (a whole number from 1 to 1000000000)');
      }
      if (reason !== undefined && reason.length > 500) throw new UsageError('--reason is at most 500 characters');
      return async (services) => {
        try {
          print(await services.credits.grant({ organizationId, amount: Number(amount), reason }));
        } catch (error) {
          if (error instanceof AppError && error.code === 'NOT_FOUND') throw new Error(`no organization with the id ${organizationId}`);
          throw error;
        }
      };
    },
  },
  'org:list': {
    usage: 'org:list',
    description: 'Lists the organizations, oldest first: one JSON line each, {"id", "name", "createdAt", "users"}.',
    options: {},
    prepare() {
      return async (services) => {
        for (const organization of await services.provisioning.listOrganizations()) print(organization);
      };
    },
  },
};

const FOOTER = `The CLI uses DATABASE_URL and DATA_DIR exactly as the server does. On the embedded
database, stop the server first: only one process can hold it.`;

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

async function withServices(run: (services: Services) => Promise<void>): Promise<void> {
  const config = loadConfig();
  secureDataDir(config.dataDir);
  const { openDatabase } = await import('./db/orm.js');
  const { createServices } = await import('./services.js');
  const database = await openDatabase({
    databaseUrl: config.databaseUrl,
    dataDir: config.dataDir,
    migrate: true,
    logger: createLogger('silent'),
  });
  try {
    const services = createServices(database.em, config);
    await RequestContext.create(database.orm.em, () => run(services));
  } finally {
    await database.close();
  }
}

let current: string | undefined;

async function main(argv: string[]): Promise<void> {
  const [name, ...rest] = argv;
  if (name === undefined || name === 'help' || name === '--help' || name === '-h') {
    const topic = rest[0];
    if (topic !== undefined && !COMMANDS[topic]) throw new UsageError(`unknown command "${topic}"`);
    console.log(topic ? commandUsage(topic) : usage());
    return;
  }
  const command = COMMANDS[name];
  if (!command) throw new UsageError(`unknown command "${name}"`);
  current = name;
  const { values } = parseArgs({ args: rest, options: { ...command.options, help: { type: 'boolean', short: 'h' } }, strict: true });
  if (values.help) {
    console.log(commandUsage(name));
    return;
  }
  await withServices(command.prepare(values));
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
