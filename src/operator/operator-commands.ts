import type { ParseArgsConfig } from 'node:util';
import { AppError } from '../common/errors.js';
import type { Services } from '../services.js';

type Options = NonNullable<ParseArgsConfig['options']>;
export type Values = Record<string, string | boolean | undefined>;

/**
 * One operator command: its usage, what it does, its options, and what it runs against the services.
 * `prepare` checks the options before the database is opened (a usage error answers at once, and
 * does not wait for the embedded database's lock) and returns the work to run against the services,
 * which answers the JSON values to print, one a line. The CLI runs that work itself, or has the
 * running server run it (`/operator`), so both give the same answers and the same errors.
 */
export interface OperatorCommand {
  usage: string;
  description: string;
  options: Options;
  prepare(values: Values): (services: Services) => Promise<unknown[]>;
}

/** A command line the command cannot take; the CLI prints it with the command's usage. */
export class UsageError extends Error {}

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

function text(values: Values, name: string): string | undefined {
  const value = values[name];
  return typeof value === 'string' ? value.trim() : undefined;
}

/**
 * `--org` takes an organization's id or its name (any case), since a new operator knows the name
 * (`Acme`) before the id; a name two organizations share asks for the id.
 */
async function organizationIdOf(services: Services, given: string): Promise<string> {
  if (UUID.test(given)) return given;
  const named = (await services.provisioning.listOrganizations()).filter((organization) => organization.name.toLowerCase() === given.toLowerCase());
  if (named.length === 1) return named[0]!.id;
  if (named.length === 0) {
    throw new AppError('NOT_FOUND', `No organization has the id or name "${given}"; npm run cli -- org:list lists them`);
  }
  throw new AppError('CONFLICT', `${named.length} organizations are named "${given}"; give --org its id (npm run cli -- org:list lists them)`);
}

/** The operator commands; adding one is one more entry here. */
export const OPERATOR_COMMANDS: Record<string, OperatorCommand> = {
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
      return async (services) => [await services.provisioning.createOrganization({ name, email, userName: text(values, 'user-name') })];
    },
  },
  'keys:create': {
    usage: 'keys:create (--org <organization id or name> | --email <user email> | both) [--name <key name>]',
    description:
      'Creates a new API key for an existing organization: owned by the user with --email, or by the\n' +
      'organization\'s first owner; prints {"organizationId", "userId", "apiKeyId", "apiKey"} as one JSON line.\n' +
      'The key is shown only once. An email used in several organizations needs --org too.',
    options: { org: { type: 'string' }, email: { type: 'string' }, name: { type: 'string' } },
    prepare(values) {
      const org = text(values, 'org');
      const email = text(values, 'email');
      const name = text(values, 'name');
      if (!org && !email) throw new UsageError('--org or --email is required');
      if (email !== undefined && !EMAIL.test(email)) throw new UsageError('--email must be an email address');
      if (name !== undefined && (name.length === 0 || name.length > 255)) throw new UsageError('--name must be 1 to 255 characters');
      return async (services) => {
        const organizationId = org ? await organizationIdOf(services, org) : undefined;
        return [await services.provisioning.issueKey({ organizationId, email, name })];
      };
    },
  },
  'credits:add': {
    usage: 'credits:add --org <organization id or name> --amount <1..1000000000> [--reason <text>]',
    description:
      'Grants credits to an organization and writes the grant to its credit ledger; prints\n' +
      '{"organizationId", "amount", "creditBalance", "ledgerEntryId"} as one JSON line.',
    options: { org: { type: 'string' }, amount: { type: 'string' }, reason: { type: 'string' } },
    prepare(values) {
      const org = text(values, 'org');
      const amount = text(values, 'amount');
      const reason = typeof values.reason === 'string' ? values.reason : undefined;
      if (!org) throw new UsageError('--org is required (an organization id or name; npm run cli -- org:list lists them)');
      if (!amount || !/^\d+$/.test(amount) || Number(amount) < 1 || Number(amount) > 1_000_000_000) {
        throw new UsageError('--amount is required (a whole number from 1 to 1000000000)');
      }
      if (reason !== undefined && reason.length > 500) throw new UsageError('--reason is at most 500 characters');
      return async (services) => {
        const organizationId = await organizationIdOf(services, org);
        try {
          return [await services.credits.grant({ organizationId, amount: Number(amount), reason })];
        } catch (error) {
          if (error instanceof AppError && error.code === 'NOT_FOUND') {
            throw new AppError('NOT_FOUND', `No organization with the id ${organizationId}; npm run cli -- org:list lists them`);
          }
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
      return async (services) => services.provisioning.listOrganizations();
    },
  },
  'credentials:check': {
    usage: 'credentials:check [--org <organization id or name>]',
    description:
      "Lists the stored secrets CREDENTIALS_KEY does not open (webhook endpoints' signing secrets, carrier\n" +
      'connections\' auth tokens): one JSON line each, {"kind", "id", "field", "organizationId", "organization",\n' +
      '"label"}, then {"sealed", "unopened"}. Changes nothing; credentials:reset mends what it lists.',
    options: { org: { type: 'string' } },
    prepare(values) {
      const org = text(values, 'org');
      return async (services) => {
        const organizationId = org ? await organizationIdOf(services, org) : undefined;
        const { sealed, unopened } = await services.sealedSecrets.unopened(organizationId);
        return [...unopened, { sealed, unopened: unopened.length }];
      };
    },
  },
  'credentials:reset': {
    usage: 'credentials:reset --yes [--org <organization id or name>]',
    description:
      'For when the key the secrets were sealed with is lost: what CREDENTIALS_KEY (the new key) does not\n' +
      'open is mended, so the server starts again. A webhook endpoint gets a new signing secret, printed\n' +
      'once (give it to the receiver); a carrier connection is removed (connect the account again with its\n' +
      'auth token; its numbers stay). One JSON line per change, {"action", "kind", "id", ..., "secret"?}.\n' +
      'Needs --yes, as it cannot be undone; credentials:check lists what it would change.',
    options: { yes: { type: 'boolean' }, org: { type: 'string' } },
    prepare(values) {
      const org = text(values, 'org');
      if (values.yes !== true) {
        throw new UsageError(
          'credentials:reset replaces or removes every secret CREDENTIALS_KEY does not open, and cannot be undone: run it with --yes (credentials:check lists what it would change)',
        );
      }
      return async (services) => {
        const organizationId = org ? await organizationIdOf(services, org) : undefined;
        return services.sealedSecrets.reset(organizationId);
      };
    },
  },
};
