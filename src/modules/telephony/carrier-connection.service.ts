import type { EntityManager } from '@mikro-orm/postgresql';
import { sortedPage } from '../../db/keyset.js';
import type { Actor } from '../../common/actor.js';
import { AppError } from '../../common/errors.js';
import { containsPattern, sortField, type Page, type PageArgs, type JsonPage } from '../../common/pagination.js';
import { isUuid } from '../../db/base.entity.js';
import { Organization } from '../organizations/organization.entity.js';
import { authorize } from '../organizations/roles.js';
import { CarrierConnection } from './carrier-connection.entity.js';
import { CarrierError, type CarrierAccount } from './carrier.js';
import { open, seal } from '../../platform/credentials.js';
import type { CreateCarrierConnectionInput, UpdateCarrierConnectionInput } from './telephony.inputs.js';
import { carrierFieldErrors, connectionFieldErrors, connectionFieldsOf } from './carrier-credentials.js';
import type { Carrier } from './carrier-kinds.types.js';
import { carrierModuleOf, type CarrierModules } from './carriers/index.js';
import type { CarrierModule } from './carriers/carrier-module.js';
import { type ListRead, readJsonList, readList, type RowJson } from '../../db/read-model.js';
import { query } from '../../db/sql.js';

export const CARRIER_CONNECTION_SORT_FIELDS = ['createdAt', 'updatedAt', 'name'] as const;
/** Calls named in the 409 of a connection delete that would strand recordings. */
const KEPT_NAMED = 5;

export interface CarrierConnectionOptions {
  /** The gateway's carrier modules: the kinds a connection can be made to, their credentials' formats and REST sides. */
  modules: CarrierModules;
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

  /** The carriers a connection can be made to: each of the gateway's modules, its label and its connection's fields, by kind. */
  carriers(): Carrier[] {
    return Object.values(this.options.modules)
      .map((module) => ({ kind: module.kind, label: module.label, connectionFields: connectionFieldsOf(module.credentials) }))
      .sort((a, b) => a.kind.localeCompare(b.kind));
  }

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
      options: sortedPage(args, field),
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
    // The kind names a module of the gateway's, whose formats the fields are checked against (GraphQL's enum refuses another kind in the same words).
    const module = this.moduleOf(input.carrier ?? 'twilio');
    const errors = connectionFieldErrors(module, input);
    if (errors.length > 0) throw AppError.badInput(errors);
    const key = this.requireKey();
    const carrier = module.kind;
    const taken = await this.em.count(CarrierConnection, { organization: actor.organizationId, carrier, accountSid: input.accountSid });
    if (taken > 0) throw new AppError('CONFLICT', `A ${carrier} connection for account ${input.accountSid} already exists`);
    await this.verify(module, { connectionId: null, accountSid: input.accountSid, authToken: input.authToken, applicationId: input.applicationId ?? null });
    const connection = this.em.create(CarrierConnection, {
      organization: this.em.getReference(Organization, actor.organizationId),
      name: input.name,
      carrier,
      accountSid: input.accountSid,
      authTokenEncrypted: seal(input.authToken, key),
      authTokenLast4: input.authToken.slice(-4),
      callsPerSecond: input.callsPerSecond ?? 1,
      publicKey: input.publicKey ?? null,
      applicationId: input.applicationId ?? null,
      ...(input.webhookKey ? { webhookKeyEncrypted: seal(input.webhookKey, key), webhookKeyLast4: input.webhookKey.slice(-4) } : {}),
    });
    await this.em.flush();
    return connection;
  }

  /** Changes the fields sent; a new authToken is checked with the carrier before it replaces the old one. */
  async update(actor: Actor, id: string, input: UpdateCarrierConnectionInput): Promise<CarrierConnection> {
    authorize(actor, 'telephony.manage');
    const connection = await this.get(actor, id);
    // The fields of another carrier's form are refused as the create input refuses them.
    const module = this.moduleOf(connection.carrier, 'connection');
    const errors = carrierFieldErrors(module, {
      authToken: input.authToken,
      publicKey: input.publicKey,
      applicationId: input.applicationId,
      webhookKey: input.webhookKey,
    });
    if (errors.length > 0) throw AppError.badInput(errors);
    if (input.authToken !== undefined) {
      const key = this.requireKey();
      await this.verify(module, { connectionId: connection.id, accountSid: connection.accountSid, authToken: input.authToken });
      connection.authTokenEncrypted = seal(input.authToken, key);
      connection.authTokenLast4 = input.authToken.slice(-4);
    }
    if (input.webhookKey !== undefined) {
      // null: webhooks are signed with the auth token again.
      connection.webhookKeyEncrypted = input.webhookKey === null ? null : seal(input.webhookKey, this.requireKey());
      connection.webhookKeyLast4 = input.webhookKey === null ? null : input.webhookKey.slice(-4);
    }
    if (input.publicKey !== undefined) connection.publicKey = input.publicKey;
    if (input.applicationId !== undefined) connection.applicationId = input.applicationId;
    if (input.name !== undefined) connection.name = input.name;
    if (input.callsPerSecond !== undefined) connection.callsPerSecond = input.callsPerSecond;
    connection.updatedAt = new Date();
    await this.em.flush();
    return connection;
  }

  /**
   * Deletes the connection; its numbers stay, without a connection. Recordings made through it that
   * the carrier still keeps (completed and not deleted, or still in progress) could then be neither
   * downloaded nor deleted, by a user or by retention: so the delete is 409 naming them, unless
   * `keepRecordings` says to leave them at the carrier.
   */
  async delete(actor: Actor, id: string, options: { keepRecordings?: boolean | null } = {}): Promise<void> {
    authorize(actor, 'telephony.manage');
    const connection = await this.get(actor, id);
    if (!options.keepRecordings) {
      const kept = await query<{ call_id: string; total: number | string }>(
        this.em,
        `select call_id, count(*) over () as total from call_recordings
          where organization_id = ? and carrier_connection_id = ? and deleted_at is null and status in ('completed', 'in_progress')
          order by created_at, id limit ?`,
        [actor.organizationId, connection.id, KEPT_NAMED],
      );
      if (kept.length > 0) {
        const total = Number(kept[0]!.total);
        const calls = kept.map((row) => row.call_id).join(', ');
        const message =
          `The connection still has ${total} recording${total === 1 ? '' : 's'} kept at ${connection.carrier} (calls ${calls}${total > kept.length ? ', …' : ''}): ` +
          'delete them first (DELETE /api/calls/{id}/recording), or delete the connection with keepRecordings=true to leave them at the carrier, where only its console can delete them; nothing changed';
        throw new AppError('CONFLICT', message, [{ field: 'keepRecordings', message }]);
      }
    }
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
    const connection = await em.findOne(
      CarrierConnection,
      { id: connectionId, organization: organizationId },
      { populate: ['authTokenEncrypted', 'webhookKeyEncrypted'] },
    );
    if (!connection) throw AppError.notFound('Carrier connection');
    return this.opened(connection);
  }

  /**
   * A connection's account by its id alone, or null when there is none: for what a carrier sends
   * (its webhooks name the connection in their path) and for the runner, whose execution names it.
   */
  async accountById(connectionId: string): Promise<CarrierAccount | null> {
    const connection = await this.em.fork().findOne(CarrierConnection, { id: connectionId }, { populate: ['authTokenEncrypted', 'webhookKeyEncrypted'] });
    return connection && this.opened(connection);
  }

  /** The connection's secrets, opened for this use only. */
  private opened(connection: CarrierConnection): CarrierAccount {
    const key = this.requireKey();
    return {
      connectionId: connection.id,
      kind: connection.carrier,
      accountSid: connection.accountSid,
      authToken: open(connection.authTokenEncrypted, key),
      webhookKey: connection.webhookKeyEncrypted ? open(connection.webhookKeyEncrypted, key) : null,
      // Telnyx's: the key its webhooks are signed with, the TeXML Application its calls are placed with.
      ...(connection.publicKey ? { publicKey: connection.publicKey } : {}),
      ...(connection.applicationId ? { applicationId: connection.applicationId } : {}),
    };
  }

  private requireKey(): Buffer {
    const key = this.options.credentialsKey();
    if (!key) {
      throw new AppError(
        'CONFLICT',
        'Carrier connections need CREDENTIALS_KEY: the operator sets it (32 bytes, e.g. `openssl rand -base64 32`) to seal auth tokens',
      );
    }
    return key;
  }

  /**
   * The module of a kind: a connection's kind (`input`, 400 naming the kinds the gateway has) or a
   * stored connection's (`connection`: a kind whose module the gateway no longer has, 409).
   */
  private moduleOf(kind: string, of: 'input' | 'connection' = 'input'): CarrierModule {
    const module = carrierModuleOf(this.options.modules, kind);
    if (module) return module;
    if (of === 'connection') throw new AppError('CONFLICT', `The connection is at ${kind}, a carrier this gateway does not serve; nothing changed`);
    const kinds = Object.keys(this.options.modules).join(', ');
    throw AppError.badInput([{ field: 'carrier', message: `carrier must be one of the following values: ${kinds}` }]);
  }

  private async verify(module: CarrierModule, account: CarrierAccount): Promise<void> {
    const carrier = module.kind;
    try {
      await module.adapter.verifyAccount(account);
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
