import type { Opt } from '@mikro-orm/core';
import { Entity, Enum, ManyToOne, Property } from '@mikro-orm/decorators/legacy';
import { Field, ID, Int, ObjectType } from 'type-graphql';
import { BaseEntity } from '../../db/base.entity.js';
import { Organization } from '../organizations/organization.entity.js';
import { ContactImportKey, ContactImportMode, ContactImportStatus } from './contact-import.enums.js';

export { ContactImportKey, ContactImportMode, ContactImportStatus };

/** A CSV import run in the background: its file is kept until it ends, its counts move chunk by chunk. */
@ObjectType({ description: 'A CSV import of contacts, run in the background' })
@Entity({ tableName: 'contact_imports' })
export class ContactImport extends BaseEntity {
  @ManyToOne(() => Organization, { deleteRule: 'cascade' })
  organization!: Organization;

  @Field(() => ID)
  get organizationId(): string & Opt {
    return this.organization.id;
  }

  @Field(() => ContactImportStatus, { description: 'Where the import is: awaiting_file, queued, running, cancelling, completed, failed or cancelled' })
  @Enum({ items: () => ContactImportStatus })
  status: ContactImportStatus & Opt = ContactImportStatus.awaiting_file;

  @Field(() => ContactImportMode, { description: 'What a row whose key a contact already has does' })
  @Enum({ items: () => ContactImportMode })
  mode!: ContactImportMode;

  @Field(() => ContactImportKey, { description: 'Which column says that a row is a contact already there' })
  @Enum({ items: () => ContactImportKey })
  key!: ContactImportKey;

  @Field(() => ID, { nullable: true, description: 'The static audience that the imported and updated contacts join' })
  @Property({ type: 'uuid', nullable: true })
  audienceId: (string & Opt) | null = null;

  @Field(() => Int, { description: 'The size of the uploaded file in bytes' })
  @Property({ type: 'integer', default: 0 })
  fileBytes: number & Opt = 0;

  @Field(() => Int, { description: 'Data rows read so far (the header not counted); every row before it is written and counted' })
  @Property({ type: 'integer', default: 0 })
  rowsRead: number & Opt = 0;

  @Field(() => Int, { description: 'Contacts created' })
  @Property({ type: 'integer', default: 0 })
  imported: number & Opt = 0;

  @Field(() => Int, { description: 'Contacts updated (upsert)' })
  @Property({ type: 'integer', default: 0 })
  updated: number & Opt = 0;

  @Field(() => Int, { description: 'Rows left as they were: the contact exists (skip)' })
  @Property({ type: 'integer', default: 0 })
  skipped: number & Opt = 0;

  @Field(() => Int, { description: 'Rows refused, each with its row number and reason (refusedRowsUrl)' })
  @Property({ type: 'integer', default: 0 })
  refused: number & Opt = 0;

  @Field(() => Int, { description: 'Rows whose number is on the do-not-call list: written, and marked optedOut' })
  @Property({ type: 'integer', default: 0 })
  doNotCall: number & Opt = 0;

  @Field(() => [String], { nullable: true, description: 'The header’s columns, as read' })
  @Property({ type: 'json', nullable: true })
  columns: (string[] & Opt) | null = null;

  @Field(() => String, { nullable: true, description: 'Why the import failed' })
  @Property({ type: 'text', nullable: true })
  error: (string & Opt) | null = null;

  @Property({ columnType: 'timestamptz', type: 'Date', nullable: true, hidden: true })
  leaseUntil: (Date & Opt) | null = null;

  @Field(() => Date, { nullable: true, description: 'When a worker first took it' })
  @Property({ columnType: 'timestamptz', type: 'Date', nullable: true })
  startedAt: (Date & Opt) | null = null;

  @Field(() => Date, { nullable: true, description: 'When it ended: completed, failed or cancelled' })
  @Property({ columnType: 'timestamptz', type: 'Date', nullable: true })
  finishedAt: (Date & Opt) | null = null;

  @Field(() => String, { description: 'Where its CSV is sent (PUT, text/csv) while it is awaiting_file' })
  get uploadUrl(): string & Opt {
    return `/api/imports/${this.id}/file`;
  }

  @Field(() => String, { description: 'The refused rows as CSV: row, reason, then the row’s cells (GET)' })
  get refusedRowsUrl(): string & Opt {
    return `/api/imports/${this.id}/refused`;
  }
}
