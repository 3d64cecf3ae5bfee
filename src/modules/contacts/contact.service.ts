import { type ListRead, readJsonList, type RowJson } from '../../db/read-model.js';
import { randomUUID } from 'node:crypto';
import { UniqueConstraintViolationException } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Actor } from '../../common/actor.js';
import { AppError, type FieldError } from '../../common/errors.js';
import { containsPattern, sortField, type Page, type PageArgs, type JsonPage } from '../../common/pagination.js';
import { readListWith, WHOLE_ROWS, type PageSelection } from '../../db/nested-relation.js';
import { isUuid } from '../../db/base.entity.js';
import { Organization } from '../organizations/organization.entity.js';
import { Contact } from './contact.entity.js';
import type { CreateContactInput, ImportContactsInput, UpdateContactInput } from './contact.inputs.js';
import { authorize } from '../organizations/roles.js';

export const CONTACT_SORT_FIELDS = ['createdAt', 'updatedAt', 'name', 'phone'] as const;
/** Rows per INSERT statement: 8 columns each stays well under PostgreSQL's 65535 bind parameters. */
const INSERT_CHUNK = 2000;

/** Told after a contact's change is committed (live programs' triggers follow contacts). */
export type ContactChangedHook = (organizationId: string, contactId: string) => Promise<void>;

/** Contacts of the caller's organization. */
export class ContactService {
  constructor(
    private readonly em: EntityManager,
    private readonly onContactChanged?: ContactChangedHook,
  ) {}

  /**
   * A page of contacts; `search` matches name or phone, case-insensitively. `include`: relations of
   * each contact (Contact.calls) read in the same statement (see nestedRelation).
   */
  async list(actor: Actor, args: PageArgs, include: PageSelection = WHOLE_ROWS): Promise<Page<Contact>> {
    return readListWith(this.em, this.listRead(actor, args), { organizationId: actor.organizationId, ...include });
  }

  /** The same page as `list`, each row as the JSON text `row` builds (the REST door's answer, src/rest/present-sql.ts). */
  async listJson(actor: Actor, args: PageArgs, row: RowJson): Promise<JsonPage> {
    return readJsonList(this.em, this.listRead(actor, args), row);
  }

  /** What a page of `list` reads. */
  private listRead(actor: Actor, args: PageArgs): ListRead<Contact> {
    const field = sortField(args.sortBy, CONTACT_SORT_FIELDS);
    const pattern = args.search ? containsPattern(args.search) : undefined;
    return {
      entity: Contact,
      where: {
        organization: actor.organizationId,
        ...(pattern ? { $or: [{ name: { $ilike: pattern } }, { phone: { $ilike: pattern } }] } : {}),
      },
      options: { orderBy: [{ [field]: args.sortOrder }, { id: 'asc' }], limit: args.limit, offset: (args.page - 1) * args.limit },
      page: args.page,
      limit: args.limit,
    };
  }

  async get(actor: Actor, id: string): Promise<Contact> {
    const contact = isUuid(id) ? await this.em.findOne(Contact, { id, organization: actor.organizationId }) : null;
    if (!contact) throw AppError.notFound('Contact');
    return contact;
  }

  /** A phone already used in the organization → 409 CONFLICT naming the field and that contact. */
  async create(actor: Actor, input: CreateContactInput): Promise<Contact> {
    authorize(actor, 'contacts.manage');
    const contact = this.em.create(Contact, { ...this.row(actor, input) });
    await this.flushPhone(actor, contact.phone);
    await this.onContactChanged?.(actor.organizationId, contact.id);
    return contact;
  }

  /** Changes only the fields that were sent; `updatedAt` moves. */
  async update(actor: Actor, id: string, input: UpdateContactInput): Promise<Contact> {
    authorize(actor, 'contacts.manage');
    const contact = await this.get(actor, id);
    if (input.name !== undefined) contact.name = input.name;
    if (input.phone !== undefined) contact.phone = input.phone;
    if (input.timeZone !== undefined) contact.timeZone = input.timeZone;
    if (input.attributes !== undefined) contact.attributes = input.attributes;
    if (input.optedOut !== undefined) contact.optedOut = input.optedOut;
    contact.updatedAt = new Date();
    await this.flushPhone(actor, contact.phone);
    await this.onContactChanged?.(actor.organizationId, contact.id);
    return contact;
  }

  /**
   * Flushes; the (organization, phone) unique index's refusal becomes a 409 that names the field and
   * the contact that has the number, so a client can update that one instead. The database decides
   * (no read before the write), so two requests at once cannot both pass.
   */
  private async flushPhone(actor: Actor, phone: string): Promise<void> {
    try {
      await this.em.flush();
    } catch (error) {
      if (!(error instanceof UniqueConstraintViolationException)) throw error;
      const existing = await this.em.fork().findOne(Contact, { organization: actor.organizationId, phone }, { fields: ['id'] });
      if (!existing) throw error;
      const message = `A contact with phone ${phone} already exists: ${existing.id}`;
      throw new AppError('CONFLICT', message, [{ field: 'phone', message }]);
    }
  }

  /** Deletes the contact; its audience memberships go with it (foreign key cascade). */
  async delete(actor: Actor, id: string): Promise<void> {
    authorize(actor, 'contacts.manage');
    const contact = await this.get(actor, id);
    await this.em.remove(contact).flush();
    await this.onContactChanged?.(actor.organizationId, id);
  }

  /**
   * All or nothing: every row is validated first (the input class names `contacts.<i>.<field>`),
   * then phones repeated within the file (400) or already in the organization (409) name their
   * rows, and only a clean file is written, in one transaction of multi-row INSERTs.
   */
  async import(actor: Actor, input: ImportContactsInput): Promise<{ imported: number }> {
    authorize(actor, 'contacts.manage');
    const firstRow = new Map<string, number>();
    const repeated: FieldError[] = [];
    input.contacts.forEach((contact, index) => {
      const first = firstRow.get(contact.phone);
      if (first === undefined) firstRow.set(contact.phone, index);
      else repeated.push({ field: `contacts.${index}.phone`, message: `phone repeats contacts.${first}.phone` });
    });
    if (repeated.length > 0) throw AppError.badInput(repeated);

    await this.em.transactional(async (em) => {
      const existing = await em.find(
        Contact,
        { organization: actor.organizationId, phone: { $in: [...firstRow.keys()] } },
        { fields: ['phone'] },
      );
      if (existing.length > 0) {
        const errors = existing.map((contact) => ({
          field: `contacts.${firstRow.get(contact.phone)}.phone`,
          message: `a contact with phone ${contact.phone} already exists`,
        }));
        throw new AppError('CONFLICT', `${errors.length} phone numbers already belong to contacts`, errors);
      }
      const now = new Date();
      const rows = input.contacts.map((contact) => ({ id: randomUUID(), ...this.row(actor, contact), createdAt: now, updatedAt: now }));
      for (let start = 0; start < rows.length; start += INSERT_CHUNK) {
        await em.insertMany(Contact, rows.slice(start, start + INSERT_CHUNK));
      }
    });
    return { imported: input.contacts.length };
  }

  private row(actor: Actor, input: CreateContactInput) {
    return {
      organization: this.em.getReference(Organization, actor.organizationId),
      name: input.name ?? null,
      phone: input.phone,
      timeZone: input.timeZone ?? null,
      attributes: input.attributes ?? {},
      optedOut: input.optedOut ?? false,
    };
  }
}
