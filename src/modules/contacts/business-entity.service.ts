import type { EntityManager } from '@mikro-orm/postgresql';
import { sortedPage } from '../../db/keyset.js';
import type { Actor } from '../../common/actor.js';
import { AppError } from '../../common/errors.js';
import { containsPattern, sortField, type Page, type JsonPage } from '../../common/pagination.js';
import { isUuid } from '../../db/base.entity.js';
import { Organization } from '../organizations/organization.entity.js';
import { BusinessEntity } from './business-entity.entity.js';
import type { BusinessEntityListArgs, CreateBusinessEntityInput, UpdateBusinessEntityInput } from './business-entity.inputs.js';
import { Contact } from './contact.entity.js';
import type { ContactChangedHook } from './contact.service.js';
import { authorize } from '../organizations/roles.js';
import { type ListRead, readJsonList, readList, type RowJson } from '../../db/read-model.js';

export const BUSINESS_ENTITY_SORT_FIELDS = ['createdAt', 'updatedAt', 'name', 'type'] as const;

/** Business records ("entities") of the contacts of the caller's organization. */
export class BusinessEntityService {
  constructor(
    private readonly em: EntityManager,
    /** Told, per affected contact, after a record's change is committed (entity-sourced live triggers follow records). */
    private readonly onEntityChanged?: ContactChangedHook,
  ) {}

  /** A page of records; `search` matches name or type; a contactId not of the organization → 404. */
  async list(actor: Actor, args: BusinessEntityListArgs): Promise<Page<BusinessEntity>> {
    return readList(this.em, await this.listRead(actor, args));
  }

  /** The same page as `list`, each row as the JSON text `row` builds (the REST door's answer, src/rest/present-sql.ts). */
  async listJson(actor: Actor, args: BusinessEntityListArgs, row: RowJson): Promise<JsonPage> {
    return readJsonList(this.em, await this.listRead(actor, args), row);
  }

  /** What a page of `list` reads. */
  private async listRead(actor: Actor, args: BusinessEntityListArgs): Promise<ListRead<BusinessEntity>> {
    const field = sortField(args.sortBy, BUSINESS_ENTITY_SORT_FIELDS);
    const contact = args.contactId ? await this.contact(actor, args.contactId) : undefined;
    const pattern = args.search ? containsPattern(args.search) : undefined;
    return {
      entity: BusinessEntity,
      where: {
        organization: actor.organizationId,
        // By id: a managed entity in the criteria would keep the read from reusing its kept statement.
        ...(contact ? { contact: contact.id } : {}),
        ...(args.type ? { type: args.type } : {}),
        ...(pattern ? { $or: [{ name: { $ilike: pattern } }, { type: { $ilike: pattern } }] } : {}),
      },
      options: sortedPage(args, field),
      page: args.page,
      limit: args.limit,
    };
  }

  async get(actor: Actor, id: string): Promise<BusinessEntity> {
    const entity = isUuid(id) ? await this.em.findOne(BusinessEntity, { id, organization: actor.organizationId }) : null;
    if (!entity) throw AppError.notFound('Entity');
    return entity;
  }

  async create(actor: Actor, input: CreateBusinessEntityInput): Promise<BusinessEntity> {
    authorize(actor, 'contacts.manage');
    const entity = this.em.create(BusinessEntity, {
      organization: this.em.getReference(Organization, actor.organizationId),
      contact: await this.contact(actor, input.contactId),
      type: input.type,
      name: input.name,
      attributes: input.attributes ?? {},
    });
    await this.em.flush();
    await this.onEntityChanged?.(actor.organizationId, entity.contact.id);
    return entity;
  }

  /** Changes only the fields that were sent; `updatedAt` moves. */
  async update(actor: Actor, id: string, input: UpdateBusinessEntityInput): Promise<BusinessEntity> {
    authorize(actor, 'contacts.manage');
    const entity = await this.get(actor, id);
    const previousContactId = entity.contact.id;
    if (input.contactId !== undefined) entity.contact = await this.contact(actor, input.contactId);
    if (input.type !== undefined) entity.type = input.type;
    if (input.name !== undefined) entity.name = input.name;
    if (input.attributes !== undefined) entity.attributes = input.attributes;
    entity.updatedAt = new Date();
    await this.em.flush();
    await this.onEntityChanged?.(actor.organizationId, entity.contact.id);
    // Moved to another contact: the one it left loses the record's dates.
    if (previousContactId !== entity.contact.id) await this.onEntityChanged?.(actor.organizationId, previousContactId);
    return entity;
  }

  async delete(actor: Actor, id: string): Promise<void> {
    authorize(actor, 'contacts.manage');
    const entity = await this.get(actor, id);
    const contactId = entity.contact.id;
    await this.em.remove(entity).flush();
    await this.onEntityChanged?.(actor.organizationId, contactId);
  }

  /** The records of each contact (of one type, if given), oldest first, in one statement; the contacts must already be the caller's. */
  async entitiesOf(actor: Actor, contactIds: readonly string[], type?: string): Promise<Map<string, BusinessEntity[]>> {
    const entities = await this.em.find(
      BusinessEntity,
      { organization: actor.organizationId, contact: { $in: [...contactIds] }, ...(type !== undefined ? { type } : {}) },
      { orderBy: { createdAt: 'asc', id: 'asc' } },
    );
    const byContact = new Map<string, BusinessEntity[]>();
    for (const entity of entities) {
      const list = byContact.get(entity.contact.id) ?? [];
      list.push(entity);
      byContact.set(entity.contact.id, list);
    }
    return byContact;
  }

  private async contact(actor: Actor, contactId: string): Promise<Contact> {
    const contact = isUuid(contactId) ? await this.em.findOne(Contact, { id: contactId, organization: actor.organizationId }) : null;
    if (!contact) throw AppError.notFound('Contact');
    return contact;
  }
}
