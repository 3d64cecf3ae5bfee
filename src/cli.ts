import './node-version.js';
import 'reflect-metadata';
import { parseArgs } from 'node:util';
import { RequestContext } from '@mikro-orm/core';
import { ConfigError, loadConfig } from './config.js';
import { createLogger } from './common/logger.js';
import { DatabaseInUseError } from './db/errors.js';

const USAGE = `Usage: npm run cli -- <command> [options]

Commands:
  org:create --name <organization> --email <admin email> [--user-name <name>]
      Creates an organization, its owner and a first API key; prints
      {"organizationId", "userId", "apiKey"} as one JSON line. The key is shown only once.
  credits:add --org <organization id> --amount <1..1000000000> [--reason <text>]
      Grants credits to an organization and writes the grant to its credit ledger; prints
      {"organizationId", "amount", "creditBalance", "ledgerEntryId"} as one JSON line.

The CLI uses DATABASE_URL and DATA_DIR exactly as the server does. On the embedded
database, stop the server first: only one process can hold it.`;

class UsageError extends Error {}

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

async function orgCreate(args: string[]): Promise<void> {
  const { values } = parseArgs({
    args,
    options: { name: { type: 'string' }, email: { type: 'string' }, 'user-name': { type: 'string' } },
    strict: true,
  });
  const name = values.name?.trim();
  const email = values.email?.trim();
  if (!name || name.length > 255) throw new UsageError('--name is required (1 to 255 characters)');
  if (!email || !EMAIL.test(email) || email.length > 320) throw new UsageError('--email is required and must be an email address');

  const config = loadConfig();
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
    const created = await RequestContext.create(database.orm.em, () =>
      services.provisioning.createOrganization({ name, email, userName: values['user-name'] }),
    );
    process.stdout.write(JSON.stringify(created) + '\n');
  } finally {
    await database.close();
  }
}

async function withServices<T>(run: (services: import('./services.js').Services) => Promise<T>): Promise<T> {
  const config = loadConfig();
  const { openDatabase } = await import('./db/orm.js');
  const { createServices } = await import('./services.js');
  const database = await openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, migrate: true, logger: createLogger('silent') });
  try {
    const services = createServices(database.em, config);
    return await RequestContext.create(database.orm.em, () => run(services));
  } finally {
    await database.close();
  }
}

async function creditsAdd(args: string[]): Promise<void> {
  const { values } = parseArgs({
    args,
    options: { org: { type: 'string' }, amount: { type: 'string' }, reason: { type: 'string' } },
    strict: true,
  });
  const organizationId = values.org?.trim();
  if (!organizationId) throw new UsageError('--org is required (an organization id)');
  const amount = Number(values.amount);
  if (!values.amount || !/^\d+$/.test(values.amount) || amount < 1 || amount > 1_000_000_000) {
    throw new UsageError('--amount is required (a whole number from 1 to 1000000000)');
  }
  if (values.reason !== undefined && values.reason.length > 500) throw new UsageError('--reason is at most 500 characters');
  const { AppError } = await import('./common/errors.js');
  try {
    const grant = await withServices((services) => services.credits.grant({ organizationId, amount, reason: values.reason }));
    process.stdout.write(JSON.stringify(grant) + '\n');
  } catch (error) {
    if (error instanceof AppError) throw new Error(error.code === 'NOT_FOUND' ? `no organization with the id ${organizationId}` : error.message);
    throw error;
  }
}

async function run(argv: string[]): Promise<void> {
  const [command, ...rest] = argv;
  switch (command) {
    case 'org:create':
      return orgCreate(rest);
    case 'credits:add':
      return creditsAdd(rest);
    case undefined:
    case 'help':
    case '--help':
      console.log(USAGE);
      return;
    default:
      throw new UsageError(`unknown command "${command}"`);
  }
}

run(process.argv.slice(2)).catch((error: unknown) => {
  if (error instanceof UsageError) console.error(`${error.message}\n\n${USAGE}`);
  else if (error instanceof ConfigError || error instanceof DatabaseInUseError) console.error(`Error: ${error.message}`);
  else if (error instanceof Error && 'code' in error && error.code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION') console.error(`${error.message}\n\n${USAGE}`);
  else console.error(`Error: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
});
