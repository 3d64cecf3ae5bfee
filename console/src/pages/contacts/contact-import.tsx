import { useEffect, useRef, useState, type ChangeEvent, type FormEvent } from 'react';
import { ApiError } from '../../api/client';
import {
  ContactImportDocument,
  CreateContactImportDocument,
  ImportEventsDocument,
  LatestEventDocument,
  StaticAudiencesDocument,
  type ContactImportKey,
  type ContactImportMode,
  type ImportJobFieldsFragment,
} from '../../api/generated';
import { useMutation, useQuery } from '../../api/hooks';
import { useSession } from '../../api/session';
import { Table } from '../../components/common';
import { FormError, SelectField } from '../../components/forms';
import { Section } from '../../components/page';
import { csvRows } from './csv-rows';

/** Lines of the file shown before it is sent, read from its first 64 KiB only (the file may be hundreds of megabytes). */
const PREVIEW_LINES = 10;
const PREVIEW_BYTES = 65_536;
/** Refused rows named on the page; the download has them all. */
const REFUSED_SHOWN = 100;
const FINAL = new Set(['completed', 'failed', 'cancelled']);
const IMPORT_FIELDS = ['mode', 'key', 'audienceId', 'file'];

interface Refused {
  rows: { row: string; reason: string }[];
  url: string;
}

/**
 * A CSV import job (createContactImport, then the file PUT to the `uploadUrl` it answers): the file's
 * first lines previewed, then the job followed live by the `events` subscription (import.* events,
 * from the organization's newest event on, so none falls before the subscription), read once more
 * after the upload, and at the end its counts and the rows refused, named by row and reason, with
 * their CSV to download.
 */
export function ContactImport({ onImported }: { onImported: () => void }) {
  const { gateway } = useSession();
  const [file, setFile] = useState<File | null>(null);
  const [preview, setPreview] = useState<string[]>([]);
  const [mode, setMode] = useState<ContactImportMode>('upsert');
  const [key, setKey] = useState<ContactImportKey>('phone');
  const [audienceId, setAudienceId] = useState('');
  const [job, setJob] = useState<ImportJobFieldsFragment | null>(null);
  const [uploadError, setUploadError] = useState<ApiError | null>(null);
  const [sending, setSending] = useState(false);
  const [refused, setRefused] = useState<Refused | null>(null);
  const audiences = useQuery(StaticAudiencesDocument, {});
  const create = useMutation(CreateContactImportDocument);
  const stop = useRef<(() => void) | null>(null);
  const reads = useRef({ asked: 0, applied: 0 });
  useEffect(() => () => stop.current?.(), []);
  useEffect(() => () => (refused ? URL.revokeObjectURL(refused.url) : undefined), [refused]);

  const pick = async (event: ChangeEvent<HTMLInputElement>) => {
    const picked = event.target.files?.[0] ?? null;
    setFile(picked);
    setJob(null);
    setUploadError(null);
    setRefused(null);
    const text = picked ? await picked.slice(0, PREVIEW_BYTES).text() : '';
    const lines = text.split(/\r?\n/).slice(0, PREVIEW_LINES + 1);
    if (lines.at(-1) === '' || lines.length > PREVIEW_LINES) lines.pop();
    setPreview(lines);
  };

  /** The job as the API has it now; an answer older than one already shown is dropped. */
  const read = async (id: string) => {
    const asked = ++reads.current.asked;
    const answer = await gateway.request(ContactImportDocument, { id }).catch((error: unknown) => {
      setUploadError(error instanceof ApiError ? error : new ApiError(String(error), 'UNAVAILABLE'));
      return null;
    });
    if (!answer || asked < reads.current.applied) return;
    reads.current.applied = asked;
    const current = answer.contactImport;
    setJob(current);
    if (!FINAL.has(current.status)) return;
    stop.current?.();
    stop.current = null;
    onImported();
    if (current.refused > 0) {
      const blob = await gateway.refusedRows(current.refusedRowsUrl).catch((error: unknown) => (setUploadError(error as ApiError), null));
      if (!blob) return;
      const rows = csvRows(await blob.text(), REFUSED_SHOWN + 1).slice(1);
      setRefused({ rows: rows.map(([row = '', reason = '']) => ({ row, reason })), url: URL.createObjectURL(blob) });
    }
  };

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    if (!file) return;
    setUploadError(null);
    setRefused(null);
    setJob(null);
    setSending(true);
    try {
      // Subscribed from the newest event before the import exists: its events are replayed if they come before the socket is ready.
      const latest = await gateway.request(LatestEventDocument, {}).catch(() => null);
      const created = await create.run({ input: { mode, key, audienceId: audienceId || undefined } });
      if (!created) return;
      const id = created.createContactImport.id;
      setJob(created.createContactImport);
      const after = latest?.events.data[0]?.id ?? null;
      stop.current?.();
      stop.current = gateway.subscribe(
        ImportEventsDocument,
        { after },
        { next: ({ events }) => void (events.payload.id === id && read(id)), error: setUploadError },
      );
      // No event to replay from (the organization's first): the file waits for the live socket instead.
      if (!after) await gateway.connected();
      try {
        await gateway.uploadImport(created.createContactImport.uploadUrl, file);
      } catch (error) {
        setUploadError(error as ApiError);
        return;
      }
      await read(id);
    } finally {
      setSending(false);
    }
  };

  const staticAudiences = audiences.data?.audiences.data.filter((audience) => audience.kind === 'static') ?? [];
  return (
    <Section title="Import a CSV" id="contact-import">
      <form onSubmit={(event) => void submit(event)} noValidate aria-label="Import contacts from a CSV">
        <div className={`field${uploadError ? ' field-invalid' : ''}`}>
          <label htmlFor="contact-import-file">Contacts CSV</label>
          <input
            id="contact-import-file"
            type="file"
            accept=".csv,text/csv,text/plain"
            aria-describedby={`contact-import-hint${uploadError ? ' contact-import-file-error' : ''}`}
            aria-invalid={uploadError ? true : undefined}
            onChange={(event) => void pick(event)}
          />
          <p className="hint" id="contact-import-hint">
            A header naming its columns: <code>phone</code>, and any of <code>externalId</code>, <code>name</code>, <code>timeZone</code>,{' '}
            <code>attributes.&lt;key&gt;</code>.
          </p>
          {uploadError ? (
            <p className="field-error" id="contact-import-file-error" data-field="file">
              {uploadError.message} <span className="code">({uploadError.code})</span>
            </p>
          ) : null}
        </div>
        {preview.length > 0 ? (
          <div data-testid="contact-import-preview">
            <Table label="The file’s first lines">
              <thead>
                <tr>
                  <th scope="col">Line</th>
                  <th scope="col">Text</th>
                </tr>
              </thead>
              <tbody>
                {preview.map((line, index) => (
                  <tr key={index}>
                    <td>{index + 1}</td>
                    <td>
                      <code>{line}</code>
                    </td>
                  </tr>
                ))}
              </tbody>
            </Table>
          </div>
        ) : null}
        <div className="inline-form">
          <SelectField
            label="A contact already there"
            field="mode"
            value={mode}
            onChange={(value) => setMode(value as ContactImportMode)}
            error={create.error}
            options={[
              { value: 'upsert', label: 'Update it (upsert)' },
              { value: 'skip', label: 'Leave it (skip)' },
              { value: 'create', label: 'Refuse the file (create: all or nothing)' },
            ]}
          />
          <SelectField
            label="Matched by"
            field="key"
            value={key}
            onChange={(value) => setKey(value as ContactImportKey)}
            error={create.error}
            options={[
              { value: 'phone', label: 'Phone' },
              { value: 'externalId', label: 'External id' },
            ]}
          />
          <SelectField
            label="Add them to the audience"
            field="audienceId"
            value={audienceId}
            onChange={setAudienceId}
            error={create.error}
            options={[{ value: '', label: 'None' }, ...staticAudiences.map((audience) => ({ value: audience.id, label: audience.name }))]}
          />
        </div>
        <FormError error={create.error} shown={IMPORT_FIELDS} />
        <button type="submit" className="primary" disabled={sending || !file}>
          Import contacts
        </button>
      </form>
      {job ? <ImportProgress job={job} refused={refused} /> : null}
    </Section>
  );
}

function plural(count: number, word: string): string {
  return `${count} ${word}${count === 1 ? '' : 's'}`;
}

function ImportProgress({ job, refused }: { job: ImportJobFieldsFragment; refused: Refused | null }) {
  const final = FINAL.has(job.status);
  return (
    <div data-testid="contact-import-job" data-status={job.status} role="status">
      <p className="notice">
        {final ? `Import ${job.status}` : job.status === 'awaiting_file' ? 'Sending the file…' : `Import ${job.status}…`}: {plural(job.rowsRead, 'row')} read;{' '}
        {job.imported} created, {job.updated} updated, {job.skipped} skipped, {job.refused} refused
        {job.doNotCall > 0 ? `, ${job.doNotCall} on the do-not-call list (opted out)` : ''}.
      </p>
      {job.error ? <p className="form-error">{job.error}</p> : null}
      {refused && refused.rows.length > 0 ? (
        <>
          <Table label="Rows refused">
            <thead>
              <tr>
                <th scope="col">Row</th>
                <th scope="col">Why it was refused</th>
              </tr>
            </thead>
            <tbody>
              {refused.rows.map((row) => (
                <tr key={row.row}>
                  <td>{row.row}</td>
                  <td>{row.reason}</td>
                </tr>
              ))}
            </tbody>
          </Table>
          <p>
            {job.refused > refused.rows.length ? `The first ${refused.rows.length} of ${job.refused} refused rows. ` : null}
            <a href={refused.url} download={`import-${job.id}-refused.csv`}>
              Download the refused rows (CSV)
            </a>
          </p>
        </>
      ) : null}
    </div>
  );
}
