import type { EntityManager } from '@mikro-orm/postgresql';
import type { Actor } from '../../common/actor.js';
import { AppError } from '../../common/errors.js';
import { containsPattern, sortField, type Page, type PageArgs, type JsonPage } from '../../common/pagination.js';
import { isUuid } from '../../db/base.entity.js';
import { Organization } from '../organizations/organization.entity.js';
import { authorize } from '../organizations/roles.js';
import { CarrierConnection } from './carrier-connection.entity.js';
import { CarrierError, type CarrierAccount, type CarrierAdapter } from './carrier.js';
import { open, seal } from '../../platform/credentials.js';
import { CarrierKind } from './telephony.enums.js';
import type { CreateCarrierConnectionInput, UpdateCarrierConnectionInput } from './telephony.inputs.js';
import { type ListRead, readJsonList, readList, type RowJson } from '../../db/read-model.js';

export const CARRIER_CONNECTION_SORT_FIELDS = ['createdAt', 'updatedAt', 'name'] as const;

export interface CarrierConnectionOptions {
  /** The adapter of each carrier a connection can be made to. */
  adapters: Record<CarrierKind, CarrierAdapter>;
  /** CREDENTIALS_KEY, read when needed (unset: no connection can be stored or opened). */
  credentialsKey: () => Buffer | undefined;
}

/**
 * An organization's accounts at its carriers. The auth token is write-only: checked with the carrier
 * (verifyAccount), sealed under CREDENTIALS_KEY, and only its last 4 characters are shown.
 */
export class CarrierConnectionService {
  constructor(
    private readonly em: EntityManager,
    private readonly options: CarrierConnectionOptions,
  ) {}

  /** A page of connections; `search` matches the name. */
  async list(actor: Actor, args: PageArgs): Promise<Page<CarrierConnection>> {
    return readList(this.em, this.listRead(actor, args));
  }

  /** The same page as `list`, each row as the JSON text `row` builds (the REST door's answer, src/rest/present-sql.ts). */
  async listJson(actor: Actor, args: PageArgs, row: RowJson): Promise<JsonPage> {
    return readJsonList(this.em, this.listRead(actor, args), row);
  }

  /** What a page of `list` reads. */
  private listRead(actor: Actor, args: PageArgs): ListRead<CarrierConnection> {
    const field = sortField(args.sortBy, CARRIER_CONNECTION_SORT_FIELDS);
    return {
      entity: CarrierConnection,
      where: { organization: actor.organizationId, ...(args.search ? { name: { $ilike: containsPattern(args.search) } } : {}) },
      options: { orderBy: [{ [field]: args.sortOrder }, { id: 'asc' }], limit: args.limit, offset: (args.page - 1) * args.limit },
      page: args.page,
      limit: args.limit,
    };
  }

  async get(actor: Actor, id: string): Promise<CarrierConnection> {
    const connection = isUuid(id) ? await this.em.findOne(CarrierConnection, { id, organization: actor.organizationId }) : null;
    if (!connection) throw AppError.notFound('Carrier connection');
    return connection;
  }

  /** Checks the credentials with the carrier, then stores the token sealed. 400 when the carrier refuses them, 503 when it cannot be reached. */
  async create(actor: Actor, input: CreateCarrierConnectionInput): Promise<CarrierConnection> {
    authorize(actor, 'telephony.manage');
    const key = this.requireKey();
    const carrier = input.carrier ?? CarrierKind.twilio;
    const taken = await this.em.count(CarrierConnection, { organization: actor.organizationId, carrier, accountSid: input.accountSid });
    if (taken > 0) throw new AppError('CONFLICT', `A ${carrier} connection for account ${input.accountSid} already exists`);
    await this.verify(carrier, { connectionId: null, accountSid: input.accountSid, authToken: input.authToken });
    const connection = this.em.create(CarrierConnection, {
      organization: this.em.getReference(Organization, actor.organizationId),
      name: input.name,
      carrier,
      accountSid: input.accountSid,
      authTokenEncrypted: seal(input.authToken, key),
      authTokenLast4: input.authToken.slice(-4),
      callsPerSecond: input.callsPerSecond ?? 1,
    });
    await this.em.flush();
    return connection;
  }

  /** Changes the fields sent; a new authToken is checked with the carrier before it replaces the old one. */
  async update(actor: Actor, id: string, input: UpdateCarrierConnectionInput): Promise<CarrierConnection> {
    authorize(actor, 'telephony.manage');
    const connection = await this.get(actor, id);
    if (input.authToken !== undefined) {
      const key = this.requireKey();
      await this.verify(connection.carrier, { connectionId: connection.id, accountSid: connection.accountSid, authToken: input.authToken });
      connection.authTokenEncrypted = seal(input.authToken, key);
      connection.authTokenLast4 = input.authToken.slice(-4);
    }
    if (input.name !== undefined) connection.name = input.name;
    if (input.callsPerSecond !== undefined) connection.callsPerSecond = input.callsPerSecond;
    connection.updatedAt = new Date();
    await this.em.flush();
    return connection;
  }

  /** Deletes the connection; its numbers stay, without a connection. */
  async delete(actor: Actor, id: string): Promise<void> {
    authorize(actor, 'telephony.manage');
    const connection = await this.get(actor, id);
    await this.em.remove(connection).flush();
  }

  /** The organization's connections by id, in one statement; ids of other organizations are left out. */
  async connectionsFor(actor: Actor, ids: readonly string[]): Promise<Map<string, CarrierConnection>> {
    const wanted = ids.filter(isUuid);
    if (wanted.length === 0) return new Map();
    const found = await this.em.find(CarrierConnection, { organization: actor.organizationId, id: { $in: wanted } });
    return new Map(found.map((connection) => [connection.id, connection]));
  }

  /** The account to place calls with: the token opened for this use only. For the runner; never shown. */
  async account(organizationId: string, connectionId: string, em: EntityManager = this.em): Promise<CarrierAccount> {
    const connection = await em.findOne(CarrierConnection, { id: connectionId, organization: organizationId }, { populate: ['authTokenEncrypted'] });
    if (!connection) throw AppError.notFound('Carrier connection');
    return { connectionId: connection.id, accountSid: connection.accountSid, authToken: open(connection.authTokenEncrypted, this.requireKey()) };
  }

  /**
   * A connection's account by its id alone, or null when there is none: for what a carrier sends
   * (its webhooks name the connection in their path) and for the runner, whose execution names it.
   */
  async accountById(connectionId: string): Promise<CarrierAccount | null> {
    const connection = await this.em.fork().findOne(CarrierConnection, { id: connectionId }, { populate: ['authTokenEncrypted'] });
    return connection && { connectionId: connection.id, accountSid: connection.accountSid, authToken: open(connection.authTokenEncrypted, this.requireKey()) };
  }

  private requireKey(): Buffer {
    const key = this.options.credentialsKey();
    if (!key) {
      throw new AppError('CONFLICT', 'Carrier connections need CREDENTIALS_KEY: the operator sets it (32 bytes, e.g. `openssl rand -base64 32`) to seal auth tokens');
    }
    return key;
  }

  private async verify(carrier: CarrierKind, account: CarrierAccount): Promise<void> {
    try {
      await this.options.adapters[carrier].verifyAccount(account);
    } catch (error) {
      if (!(error instanceof CarrierError)) throw error;
      if (error.kind === 'credentials') {
        const message = `The carrier rejected the credentials: ${carrier} answered 401 for this accountSid and authToken`;
        throw new AppError('BAD_USER_INPUT', message, [{ field: 'authToken', message }]);
      }
      if (error.kind === 'rejected') {
        const message = `The carrier refused the account: ${error.message}`;
        throw new AppError('BAD_USER_INPUT', message, [{ field: 'accountSid', message }]);
      }
      throw new AppError('UNAVAILABLE', `The carrier could not be reached to check the credentials (${error.message}); nothing was stored, try again`);
    }
  }
}
