import { randomUUID } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import { sortedPage } from '../../db/keyset.js';
import type { Actor } from '../../common/actor.js';
import { mapInTurns } from '../../common/in-turns.js';
import { AppError } from '../../common/errors.js';
import { containsPattern, sortField, type Page, type PageArgs, type JsonPage } from '../../common/pagination.js';
import { isUuid } from '../../db/base.entity.js';
import { EventWriter } from '../events/event-writer.js';
import { authorize } from '../organizations/roles.js';
import { E164 } from './contact.inputs.js';
import { parseDoNotCallCsv } from './do-not-call-csv.js';
import { phoneKey } from './phone-key.js';
import { DoNotCallEntry, DoNotCallSource } from './do-not-call.entity.js';
import { DO_NOT_CALL_IMPORT_MAX_ROWS, type AddDoNotCallInput, type ImportDoNotCallInput } from './do-not-call.inputs.js';
import type { DoNotCallImportResult, DoNotCallSkippedRow } from './do-not-call.types.js';
import { type ListRead, readJsonList, readList, type RowJson } from '../../db/read-model.js';
import { at, query } from '../../db/sql.js';
import { IMPORT_CHUNK, OrganizationImports } from './organization-imports.js';

export const DO_NOT_CALL_SORT_FIELDS = ['createdAt', 'phone'] as const;

/** Who opted out on a call: the call (its number and contact are read from it), or a contact, or a bare number. */
export interface OptOutTarget {
  callId?: string | null;
  contactId?: string | null;
  phone?: string | null;
}

/**
 * The organization's do-not-call list. Reading is open to every role; changing it takes
 * `contacts.manage`, like the contacts it protects. The runner reads the list itself, by number,
 * in the statement that claims calls (work-queue.ts), so nothing here has to reach it.
 */
export class DoNotCallService {
  constructor(
    private readonly em: EntityManager,
    private readonly imports = new OrganizationImports(em),
  ) {}

  /** A page of entries; `search` matches the number or the note, case-insensitively. */
  async list(actor: Actor, args: PageArgs): Promise<Page<DoNotCallEntry>> {
    return readList(this.em, this.listRead(actor, args));
  }

  /** The same page as `list`, each row as the JSON text `row` builds (the REST door's answer, src/rest/present-sql.ts). */
  async listJson(actor: Actor, args: PageArgs, row: RowJson): Promise<JsonPage> {
    return readJsonList(this.em, this.listRead(actor, args), row);
  }

  /** What a page of `list` reads. */
  private listRead(actor: Actor, args: PageArgs): ListRead<DoNotCallEntry> {
    const field = sortField(args.sortBy, DO_NOT_CALL_SORT_FIELDS);
    const pattern = args.search ? containsPattern(args.search) : undefined;
    return {
      entity: DoNotCallEntry,
      where: {
        organization: actor.organizationId,
        ...(pattern ? { $or: [{ phone: { $ilike: pattern } }, { note: { $ilike: pattern } }] } : {}),
      },
      options: sortedPage(args, field),
      page: args.page,
      limit: args.limit,
    };
  }

  /** An entry by its id or by its number (E.164); one not on the caller's list (or neither an id nor a number) → 404. */
  async get(actor: Actor, idOrPhone: string): Promise<DoNotCallEntry> {
    const key = isUuid(idOrPhone) ? { id: idOrPhone } : E164.test(idOrPhone) ? { phone: phoneKey(idOrPhone) } : null;
    const entry = key ? await this.em.findOne(DoNotCallEntry, { organization: actor.organizationId, ...key }) : null;
    if (!entry) throw AppError.notFound('Do-not-call entry');
    return entry;
  }

  /** A number already on the list → 409 naming when and how it was added. */
  async add(actor: Actor, input: AddDoNotCallInput): Promise<DoNotCallEntry> {
    authorize(actor, 'contacts.manage');
    const phone = phoneKey(input.phone);
    const existing = await this.em.findOne(DoNotCallEntry, { organization: actor.organizationId, phone });
    if (existing) throw alreadyListed(existing);
    const entry = this.em.create(DoNotCallEntry, {
      organization: actor.organizationId,
      phone,
      source: DoNotCallSource.manual,
      note: input.note ?? null,
    });
    await this.em.flush();
    return entry;
  }

  /** Takes the number off the list: it may be called again. A contact marked opted out stays so (see README). */
  async remove(actor: Actor, idOrPhone: string): Promise<DoNotCallEntry> {
    authorize(actor, 'contacts.manage');
    const entry = await this.get(actor, idOrPhone);
    await this.em.remove(entry).flush();
    return entry;
  }

  /**
   * Adds the good rows of a CSV and reports the others: a bad row (not a number, no number, a
   * quote left open) by its line and reason; a number repeated in the file or already on the list
   * is merged into the entry that is there, and reported as skipped. A file of more than
   * DO_NOT_CALL_IMPORT_MAX_ROWS rows is refused whole (400 naming `csv`). One import per organization
   * at a time (a second answers 409 naming the running one), written IMPORT_CHUNK rows per transaction.
   */
  async import(actor: Actor, input: ImportDoNotCallInput): Promise<DoNotCallImportResult> {
    authorize(actor, 'contacts.manage');
    const parsed = parseDoNotCallCsv(input.csv);
    const rejected = parsed.rejected;
    // Each number in the one form the list compares (phone-key.ts): two spellings of one number are one entry.
    const rows = await mapInTurns(parsed.rows, (row) => ({ ...row, phone: phoneKey(row.phone) }));
    if (rows.length + rejected.length > DO_NOT_CALL_IMPORT_MAX_ROWS) {
      throw AppError.badInput([
        { field: 'csv', message: `csv must have at most ${DO_NOT_CALL_IMPORT_MAX_ROWS} rows; it has ${rows.length + rejected.length}` },
      ]);
    }
    const skipped: DoNotCallSkippedRow[] = [];
    const now = at(new Date());
    const firstLine = new Map<string, number>();
    const fresh = rows.filter((row) => {
      const first = firstLine.get(row.phone);
      if (first === undefined) {
        firstLine.set(row.phone, row.line);
        return true;
      }
      skipped.push({ line: row.line, phone: row.phone, reason: `repeats line ${first}` });
      return false;
    });
    let added = 0;
    // A chunk per transaction: other statements run between two (organization-imports.ts). The list is
    // merged into, not replaced, so the chunks written before a failure stay: sent again, they are skipped.
    await this.imports.run(actor.organizationId, 'do-not-call', null, async (slot) => {
      for (let start = 0; start < fresh.length; start += IMPORT_CHUNK) {
        const chunk = fresh.slice(start, start + IMPORT_CHUNK);
        const chunkSkipped: DoNotCallSkippedRow[] = [];
        const chunkAdded = await this.em.transactional(async (em) => {
          const existing = await em.find(DoNotCallEntry, { organization: actor.organizationId, phone: { $in: chunk.map((row) => row.phone) } });
          const listed = new Map(existing.map((entry) => [entry.phone, entry]));
          const toAdd = chunk.filter((row) => {
            const entry = listed.get(row.phone);
            if (entry) chunkSkipped.push({ line: row.line, phone: row.phone, reason: alreadyListed(entry).message });
            return !entry;
          });
          // A number another request added meanwhile is left as it is (on conflict), and counted as skipped.
          const inserted = toAdd.length
            ? await query<{ phone: string }>(
                em,
                `insert into do_not_call_entries (id, created_at, updated_at, organization_id, phone, source, note)
                 select gen_random_uuid(), ?::timestamptz, ?::timestamptz, ?, r.phone, 'import', r.note
                   from jsonb_to_recordset(?::jsonb) as r(phone text, note text)
                 on conflict (organization_id, phone) do nothing returning phone`,
                [now, now, actor.organizationId, JSON.stringify(toAdd.map((row) => ({ phone: row.phone, note: row.note })))],
              )
            : [];
          const done = new Set(inserted.map((row) => row.phone));
          for (const row of toAdd)
            if (!done.has(row.phone)) chunkSkipped.push({ line: row.line, phone: row.phone, reason: 'added by another request meanwhile' });
          await slot.heartbeat(em, start + IMPORT_CHUNK >= fresh.length);
          return done.size;
        });
        slot.committed(chunk.length);
        added += chunkAdded;
        skipped.push(...chunkSkipped);
      }
    });
    skipped.sort((a, b) => a.line - b.line);
    return { added, skipped, rejected };
  }

  /**
   * The person on a call asked not to be called again: their number goes on the list (source
   * `call`, unless it is there already), the contact with that number is marked opted out, and a
   * `contact.opted_out` event is written, all in one transaction. For the voice pipelines (the
   * batch flow's `opt_out` node, the speech-to-speech and streaming agents' `opt_out` tool): they
   * act for the call's organization, not for a user. Given a call, its number is the one dialed
   * (outbound) or the caller's (inbound), and its contact the call's. Answers the entry.
   */
  async optOut(organizationId: string, target: OptOutTarget): Promise<DoNotCallEntry> {
    const entryId = await this.em.transactional(async (em) => {
      let phone = target.phone ?? null;
      let contactId = target.contactId ?? null;
      const callId = target.callId && isUuid(target.callId) ? target.callId : null;
      if (callId) {
        const [call] = await em.execute<{ direction: string; to_number: string; from_number: string | null; contact_id: string | null }[]>(
          'select direction, to_number, from_number, contact_id from calls where id = ? and organization_id = ?',
          [callId, organizationId],
        );
        if (!call) throw AppError.notFound('Call');
        phone ??= call.direction === 'inbound' ? call.from_number : call.to_number;
        contactId ??= call.contact_id;
      }
      if (!phone && contactId && isUuid(contactId)) {
        const [contact] = await em.execute<{ phone: string }[]>('select phone from contacts where id = ? and organization_id = ?', [contactId, organizationId]);
        phone = contact?.phone ?? null;
      }
      if (!phone || !E164.test(phone))
        throw AppError.badInput([{ field: 'phone', message: 'the number to opt out must be an E.164 number such as +14155550100' }]);
      phone = phoneKey(phone);
      const [entry] = await em.execute<{ id: string }[]>(
        `with added as (
           insert into do_not_call_entries (id, created_at, updated_at, organization_id, phone, source, call_id, contact_id)
           values (?, now(), now(), ?, ?, 'call', ?, ?) on conflict (organization_id, phone) do nothing returning id)
         select id from added union all select id from do_not_call_entries where organization_id = ? and phone = ? limit 1`,
        [randomUUID(), organizationId, phone, callId, contactId && isUuid(contactId) ? contactId : null, organizationId, phone],
      );
      // Contacts are unique by number in an organization: the one with this number is the one who asked.
      const contacts = await em.execute<{ id: string }[]>(
        `update contacts set opted_out = true, updated_at = now() where organization_id = ? and (phone = ?${contactId && isUuid(contactId) ? ' or id = ?' : ''}) returning id`,
        [organizationId, phone, ...(contactId && isUuid(contactId) ? [contactId] : [])],
      );
      await EventWriter.write(em, {
        organizationId,
        type: 'contact.opted_out',
        payload: {
          phone,
          contactId: contacts[0]?.id ?? null,
          contactIds: contacts.map((row) => row.id),
          callId,
          source: DoNotCallSource.call,
          doNotCallEntryId: entry!.id,
        },
      });
      return entry!.id;
    });
    return this.em.fork().findOneOrFail(DoNotCallEntry, entryId);
  }
}

function alreadyListed(entry: DoNotCallEntry): AppError {
  return new AppError('CONFLICT', `${entry.phone} is already on the do-not-call list (${entry.source}, since ${entry.createdAt.toISOString()})`);
}
