import type { Readable } from 'node:stream';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Actor } from '../../common/actor.js';
import { AppError } from '../../common/errors.js';
import { type Page, type PageArgs, sortField } from '../../common/pagination.js';
import { isUuid } from '../../db/base.entity.js';
import { sortedPage } from '../../db/keyset.js';
import { readList } from '../../db/read-model.js';
import { query } from '../../db/sql.js';
import { EventWriter } from '../events/event-writer.js';
import { Organization } from '../organizations/organization.entity.js';
import { authorize } from '../organizations/roles.js';
import { Audience, AudienceKind } from './audience.entity.js';
import { csvCell, type ImportFileLimits } from './contact-import-rows.js';
import { ContactImport, ContactImportKey, ContactImportMode, ContactImportStatus } from './contact-import.entity.js';
import type { CreateContactImportInput } from './contact-import.inputs.js';
import { COUNTS_SQL } from './contact-import-chunk.js';
import type { ContactImportWorker } from './contact-import-worker.js';

export const CONTACT_IMPORT_SORT_FIELDS = ['createdAt'] as const;
/** Bytes per stored part of an uploaded file. */
const PART_BYTES = 1024 * 1024;
/** An upload holds its import this long at most without a part written; then another may send the file. */
const UPLOAD_LEASE_MS = 60_000;

/**
 * CSV imports of contacts (docs/campaigns.md#csv-import-jobs): created on either door, their file sent
 * over HTTP and kept in parts, run by the ContactImportWorker off the request.
 */
export class ContactImportService {
  constructor(
    private readonly em: EntityManager,
    private readonly worker: ContactImportWorker,
    private readonly limits: ImportFileLimits,
  ) {}

  /** A new import awaiting its file; an audience that is not the organization's → 404, a dynamic one → 409. */
  async create(actor: Actor, input: CreateContactImportInput): Promise<ContactImport> {
    authorize(actor, 'contacts.manage');
    if (input.audienceId) {
      const audience = await this.em.findOne(Audience, { id: input.audienceId, organization: actor.organizationId });
      if (!audience) throw AppError.notFound('Audience');
      if (audience.kind === AudienceKind.dynamic)
        throw new AppError('CONFLICT', 'A dynamic audience is its filter: contacts cannot be added to it; name a static audience');
    }
    const job = this.em.create(ContactImport, {
      organization: this.em.getReference(Organization, actor.organizationId),
      mode: input.mode ?? ContactImportMode.upsert,
      key: input.key ?? ContactImportKey.phone,
      audienceId: input.audienceId ?? null,
    });
    await this.em.flush();
    return job;
  }

  /** REST's one request: the import and its file; if the file is refused (413, 400, a body cut off) the import is deleted too. */
  async createWithFile(actor: Actor, input: CreateContactImportInput, body: Readable & { discard?: () => void }): Promise<ContactImport> {
    const job = await this.create(actor, input);
    try {
      return await this.upload(actor, job.id, body);
    } catch (error) {
      await query(this.em, 'delete from contact_imports where id = ?', [job.id]).catch(() => undefined);
      throw error;
    }
  }

  async get(actor: Actor, id: string): Promise<ContactImport> {
    const job = isUuid(id) ? await this.em.findOne(ContactImport, { id, organization: actor.organizationId }, { refresh: true }) : null;
    if (!job) throw AppError.notFound('Import');
    return job;
  }

  /** The organization's imports, newest first by default, by keyset (cursor) or page. */
  async list(actor: Actor, args: PageArgs): Promise<Page<ContactImport>> {
    const field = sortField(args.sortBy, CONTACT_IMPORT_SORT_FIELDS);
    return readList(this.em, {
      entity: ContactImport,
      where: { organization: actor.organizationId },
      options: sortedPage(args, field),
      page: args.page,
      limit: args.limit,
    });
  }

  /**
   * Stores the CSV `body` (streamed, in parts of 1 MiB) and queues the import. Over IMPORT_LIMITS.maxBytes
   * → 413 and nothing kept; an import that already has its file → 409; a body cut off → nothing kept.
   */
  async upload(actor: Actor, id: string, body: Readable & { discard?: () => void }): Promise<ContactImport> {
    authorize(actor, 'contacts.manage');
    await this.get(actor, id);
    const taken = await query(
      this.em,
      `update contact_imports set lease_until = now() + ? * interval '1 millisecond', updated_at = now()
        where id = ? and organization_id = ? and status = 'awaiting_file' and (lease_until is null or lease_until < now()) returning id`,
      [UPLOAD_LEASE_MS, id, actor.organizationId],
    );
    if (taken.length === 0)
      throw new AppError('CONFLICT', 'This import already has its file (or one is being sent): create another import to send another file');
    let bytes = 0;
    let seq = 0;
    let pending: Buffer[] = [];
    let pendingBytes = 0;
    const flush = async () => {
      if (pendingBytes === 0) return;
      const data = Buffer.concat(pending, pendingBytes);
      pending = [];
      pendingBytes = 0;
      await query(this.em, 'insert into contact_import_parts (import_id, seq, data) values (?, ?, ?)', [id, seq++, data]);
      await query(this.em, `update contact_imports set lease_until = now() + ? * interval '1 millisecond' where id = ?`, [UPLOAD_LEASE_MS, id]);
    };
    try {
      // Not destroyed when the loop ends early: the rest is read and dropped, so the refusal can be answered.
      for await (const chunk of body.iterator({ destroyOnReturn: false }) as AsyncIterable<Buffer>) {
        bytes += chunk.length;
        if (bytes > this.limits.maxBytes) {
          throw new AppError('PAYLOAD_TOO_LARGE', `The file is larger than ${this.limits.maxBytes} bytes (IMPORT_MAX_BYTES); split it into several imports`);
        }
        pending.push(chunk);
        pendingBytes += chunk.length;
        if (pendingBytes >= PART_BYTES) await flush();
      }
      await flush();
      if (bytes === 0) throw AppError.badInput([{ field: 'body', message: 'The file is empty: send the CSV as the body' }]);
    } catch (error) {
      // The rest of a refused body is read and dropped (not decoded), so the answer can be sent.
      if (body.discard) body.discard();
      else body.resume();
      await query(this.em, 'delete from contact_import_parts where import_id = ?', [id]).catch(() => undefined);
      await query(this.em, 'update contact_imports set lease_until = null where id = ?', [id]).catch(() => undefined);
      throw error;
    }
    await query(this.em, `update contact_imports set status = 'queued', file_bytes = ?, lease_until = null, updated_at = now() where id = ?`, [bytes, id]);
    const queued = await this.get(actor, id);
    this.worker.wake();
    return queued;
  }

  /**
   * Stops a waiting or running import; what it wrote stays and is counted. A create import that wrote
   * contacts (all or nothing) answers `cancelling` at once: the worker deletes them a chunk at a time,
   * then it is `cancelled`. Ended, or already cancelling → 409.
   */
  async cancel(actor: Actor, id: string): Promise<ContactImport> {
    authorize(actor, 'contacts.manage');
    const job = await this.get(actor, id);
    // The status is decided on the row as it is when the update takes it (a chunk in flight commits first).
    const [ended] = await this.em.fork().transactional(async (em) => {
      const rows = await query<Record<string, unknown>>(
        em,
        `update contact_imports set status = case when mode = 'create' and imported > 0 then 'cancelling' else 'cancelled' end,
           finished_at = case when mode = 'create' and imported > 0 then null else now() end, lease_until = null, updated_at = now()
          where id = ? and organization_id = ? and status in ('awaiting_file', 'queued', 'running')
          returning ${COUNTS_SQL}`,
        [id, actor.organizationId],
      );
      const type = rows[0]?.status === 'cancelling' ? 'import.progress' : 'import.cancelled';
      if (rows[0]) await EventWriter.write(em, { organizationId: actor.organizationId, type, payload: rows[0] });
      return rows;
    });
    if (!ended) {
      if (job.status === ContactImportStatus.cancelling)
        throw new AppError('CONFLICT', 'The import is being cancelled: the contacts it created are being deleted');
      throw new AppError('CONFLICT', `The import has ended (${job.status}); only a waiting or running import can be cancelled`);
    }
    if (ended.status === 'cancelling') this.worker.wake();
    return this.get(actor, id);
  }

  /** Continues a cancelled or failed import from the first row it did not count (not a create import's: it was undone). */
  async resume(actor: Actor, id: string): Promise<ContactImport> {
    authorize(actor, 'contacts.manage');
    const job = await this.get(actor, id);
    if (job.mode === ContactImportMode.create)
      throw new AppError('CONFLICT', 'A create import that ended was undone (all or nothing): create a new import to send the file again');
    const resumed = await query(
      this.em,
      `update contact_imports set status = 'queued', finished_at = null, error = null, updated_at = now()
        where id = ? and organization_id = ? and status in ('cancelled', 'failed')
          and exists (select 1 from contact_import_parts where import_id = contact_imports.id) returning id`,
      [id, actor.organizationId],
    );
    if (resumed.length === 0) throw new AppError('CONFLICT', `Only a cancelled or failed import with its file can be resumed; this one is ${job.status}`);
    const queued = await this.get(actor, id);
    this.worker.wake();
    return queued;
  }

  /** The refused rows as CSV, by row number, a page of them per read: row, reason, then the header's columns. */
  async *refusedCsv(actor: Actor, id: string): AsyncGenerator<string> {
    const job = await this.get(actor, id);
    yield `${['row', 'reason', ...(job.columns ?? [])].map(csvCell).join(',')}\r\n`;
    let after = 0;
    for (;;) {
      const rows = await query<{ row_number: number; reason: string; cells: string[] | string }>(
        this.em,
        'select row_number, reason, cells from contact_import_refusals where import_id = ? and row_number > ? order by row_number limit 1000',
        [id, after],
      );
      if (rows.length === 0) return;
      yield rows
        .map((row) => {
          const cells = typeof row.cells === 'string' ? (JSON.parse(row.cells) as string[]) : row.cells;
          return `${[String(row.row_number), row.reason, ...cells].map(csvCell).join(',')}\r\n`;
        })
        .join('');
      after = rows.at(-1)!.row_number;
    }
  }

  /** On the embedded database's start: every running (or cancelling) import was this process's, so it is claimed again at once. */
  async releaseAll(): Promise<void> {
    await query(this.em, `update contact_imports set lease_until = null where status in ('running', 'cancelling', 'awaiting_file')`);
  }
}
