import { registerEnumType } from 'type-graphql';

export enum ContactImportStatus {
  awaiting_file = 'awaiting_file',
  queued = 'queued',
  running = 'running',
  cancelling = 'cancelling',
  completed = 'completed',
  failed = 'failed',
  cancelled = 'cancelled',
}
registerEnumType(ContactImportStatus, {
  name: 'ContactImportStatus',
  description: 'Where a CSV import is',
  valuesConfig: {
    awaiting_file: { description: 'Created; its CSV is to be sent to uploadUrl' },
    queued: { description: 'Its file is kept; it waits for the organization’s import before it, or for a worker' },
    running: { description: 'Its rows are being written' },
    cancelling: {
      description: 'A create import cancelled: the worker deletes the contacts it wrote, a chunk at a time (imported counts down); then cancelled',
    },
    completed: { description: 'Every row was read: written, skipped or refused' },
    failed: { description: 'Ended early (a bad header, a file that does not parse, or a create import with refused rows): see error' },
    cancelled: { description: 'Cancelled by a user; resume continues it from rowsRead' },
  },
});

export enum ContactImportMode {
  create = 'create',
  upsert = 'upsert',
  skip = 'skip',
}
registerEnumType(ContactImportMode, {
  name: 'ContactImportMode',
  description: 'What an import does with a row whose key (phone or externalId) a contact already has',
  valuesConfig: {
    create: { description: 'All or nothing: any refused row (an existing contact among them) ends the import failed with nothing kept' },
    upsert: { description: 'Updates that contact with the row’s non-empty cells (name, time zone, attributes merged; the phone when keyed by externalId)' },
    skip: { description: 'Leaves that contact as it is and counts the row skipped' },
  },
});

export enum ContactImportKey {
  phone = 'phone',
  externalId = 'externalId',
}
registerEnumType(ContactImportKey, {
  name: 'ContactImportKey',
  description: 'Which column says that a row is a contact already there',
  valuesConfig: {
    phone: { description: 'The phone number (E.164)' },
    externalId: { description: 'The externalId column: the organization’s own id (a CRM’s)' },
  },
});
