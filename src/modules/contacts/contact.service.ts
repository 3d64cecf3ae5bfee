import { type ListRead, readJsonList, type RowJson } from '../../db/read-model.js';
import { randomUUID } from 'node:crypto';
import { UniqueConstraintViolationException } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Actor } from '../../common/actor.js';
import { mapInTurns } from '../../common/in-turns.js';
import { AppError, type FieldError } from '../../common/errors.js';
import { containsPattern, sortField, type Page, type PageArgs, type JsonPage } from '../../common/pagination.js';
import { readListWith, WHOLE_ROWS, type PageSelection } from '../../db/nested-relation.js';
import { isUuid } from '../../db/base.entity.js';
import { sortedPage } from '../../db/keyset.js';
import { Organization } from '../organizations/organization.entity.js';
import { Contact } from './contact.entity.js';
import type { CreateContactInput, ImportContactsInput, UpdateContactInput } from './contact.inputs.js';
import { authorize } from '../organizations/roles.js';
import { phoneKey } from './phone-key.js';
import { at, query } from '../../db/sql.js';
import { IMPORT_CHUNK, OrganizationImports } from './organization-imports.js';

export const CONTACT_SORT_FIELDS = ['createdAt', 'updatedAt', 'name', 'phone'] as const;

/** Told after a contact's change is committed (live programs' triggers follow contacts). */
export type ContactChangedHook = (organizationId: string, contactId: string) => Promise<void>;

/** Contacts of the caller's organization. */
export class ContactService {
  constructor(
    private readonly em: EntityManager,
    private readonly onContactChanged?: ContactChangedHook,
    private readonly imports = new OrganizationImports(em),
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
      options: {
        ...sortedPage<Contact>(args, field),
        // Without a search the list is every contact of the organization: its size is kept by triggers, not counted.
        ...(pattern
          ? {}
          : {
              count: {
                key: 'contacts|organization',
                sql: 'select coalesce(max(n.contacts), 0) from organization_contact_counts n where n.organization_id = ?',
                params: [actor.organizationId],
              },
            }),
      },
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
    if (input.phone !== undefined) contact.phone = phoneKey(input.phone);
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
   * rows, and only a clean file is written. It is written IMPORT_CHUNK rows per transaction, so the
   * embedded database serves other statements between two chunks; if a chunk fails (a contact made
   * meanwhile with one of the file's phones: 409, or the database lost), the chunks written before it
   * are deleted before the answer, and if the process dies they are deleted by whoever finds its place
   * stale (organization-imports.ts). One import per organization at a time: a second answers 409.
   */
  async import(actor: Actor, input: ImportContactsInput): Promise<{ imported: number }> {
    authorize(actor, 'contacts.manage');
    const firstRow = new Map<string, number>();
    const repeated: FieldError[] = [];
    // A number is stored in one form (phone-key.ts): two spellings of one number are one contact.
    const phones = await mapInTurns(input.contacts, (contact) => phoneKey(contact.phone));
    phones.forEach((phone, index) => {
      const first = firstRow.get(phone);
      if (first === undefined) firstRow.set(phone, index);
      else repeated.push({ field: `contacts.${index}.phone`, message: `phone repeats contacts.${first}.phone` });
    });
    if (repeated.length > 0) throw AppError.badInput(repeated);

    const rows = input.contacts.map((contact, index) => ({
      id: randomUUID(),
      name: contact.name ?? null,
      phone: phones[index]!,
      time_zone: contact.timeZone ?? null,
      attributes: contact.attributes ?? {},
      opted_out: contact.optedOut ?? false,
    }));
    const ours = new Set(rows.map((row) => row.id));
    return this.imports.run(actor.organizationId, 'contacts', [...ours], async (slot) => {
      const taken = async (em: EntityManager) => {
        const existing = await this.existingPhones(em, actor, [...firstRow.keys()], ours);
        if (existing.length === 0) return null;
        const errors = existing
          .sort((a, b) => firstRow.get(a)! - firstRow.get(b)!)
          .map((phone) => ({ field: `contacts.${firstRow.get(phone)}.phone`, message: `a contact with phone ${phone} already exists` }));
        return new AppError('CONFLICT', `${errors.length} phone numbers already belong to contacts`, errors);
      };
      // A file of one chunk is checked in its own transaction; a longer one before its first chunk.
      const oneChunk = rows.length <= IMPORT_CHUNK;
      if (!oneChunk) {
        const before = await taken(this.em);
        if (before) throw before;
      }
      const now = at(new Date());
      for (let start = 0; start < rows.length; start += IMPORT_CHUNK) {
        const chunk = rows.slice(start, start + IMPORT_CHUNK);
        try {
          await this.em.transactional(async (em) => {
            const clash = oneChunk ? await taken(em) : null;
            if (clash) throw clash;
            await query(
              em,
              `insert into contacts (id, created_at, updated_at, organization_id, name, phone, time_zone, attributes, opted_out)
               select r.id, ?::timestamptz, ?::timestamptz, ?, r.name, r.phone, r.time_zone, r.attributes, r.opted_out
                 from jsonb_to_recordset(?::jsonb) as r(id uuid, name text, phone text, time_zone text, attributes jsonb, opted_out boolean)`,
              [now, now, actor.organizationId, JSON.stringify(chunk)],
            );
            await slot.heartbeat(em, start + IMPORT_CHUNK >= rows.length);
          });
        } catch (error) {
          if (error instanceof UniqueConstraintViolationException) throw (await taken(this.em)) ?? error;
          throw error;
        }
        slot.committed(chunk.length);
      }
      return { imported: rows.length };
    });
  }

  /** The file's phones that contacts of the organization other than `ours` already have, read IMPORT_CHUNK at a time. */
  private async existingPhones(em: EntityManager, actor: Actor, phones: string[], ours: ReadonlySet<string>): Promise<string[]> {
    const found: string[] = [];
    for (let start = 0; start < phones.length; start += IMPORT_CHUNK) {
      const chunk = phones.slice(start, start + IMPORT_CHUNK);
      // One probe of the unique index a phone, whatever the organization's statistics say (contact-import-chunk.ts, MET).
      const rows = await query<{ id: string; phone: string }>(
        em,
        `select c.id, c.phone from jsonb_array_elements_text(?::jsonb) as k(value)
           cross join lateral (select id, phone from contacts where organization_id = ? and phone = k.value limit 1) c`,
        [JSON.stringify(chunk), actor.organizationId],
      );
      for (const row of rows) if (!ours.has(row.id)) found.push(row.phone);
    }
    return found;
  }

  private row(actor: Actor, input: CreateContactInput) {
    return {
      organization: this.em.getReference(Organization, actor.organizationId),
      name: input.name ?? null,
      phone: phoneKey(input.phone),
      timeZone: input.timeZone ?? null,
      attributes: input.attributes ?? {},
      optedOut: input.optedOut ?? false,
    };
  }
}
