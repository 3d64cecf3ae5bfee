import { useEffect, useState } from 'react';
import { Link } from 'wouter';
import {
  CancelContactImportDocument,
  ContactImportsDocument,
  ImportEventsDocument,
  LatestEventDocument,
  ResumeContactImportDocument,
  type ImportJobFieldsFragment,
} from '../../api/generated';
import { useMutation, useQuery, useSubscription } from '../../api/hooks';
import { useSession } from '../../api/session';
import { Badge, formatDate, Loading, Pager, QueryError, Table } from '../../components/common';
import { FormError } from '../../components/forms';
import { Page } from '../../components/page';

/** What the API lets a user do with an import: cancel one waiting or running; resume a cancelled or failed one that kept its file (not a create import: it was undone). */
const CANCELLABLE = new Set(['awaiting_file', 'queued', 'running']);
function resumable(job: ImportJobFieldsFragment): boolean {
  return (job.status === 'cancelled' || job.status === 'failed') && job.mode !== 'create' && job.fileBytes > 0;
}

/**
 * The organization's contact imports, newest first, with their state and counts, kept current by the
 * import.* events (subscribed from the newest event when the page opened, so none is missed), and
 * **Cancel** / **Resume** where the API allows them.
 */
export function ImportList() {
  const { can } = useSession();
  const [page, setPage] = useState(1);
  const imports = useQuery(ContactImportsDocument, { page });
  const latest = useQuery(LatestEventDocument, {});
  const cancel = useMutation(CancelContactImportDocument);
  const resume = useMutation(ResumeContactImportDocument);
  const [changed, setChanged] = useState<Record<string, ImportJobFieldsFragment>>({});
  const live = useSubscription(ImportEventsDocument, { after: latest.data?.events.data[0]?.id ?? null }, () => imports.refetch(), {
    skip: !latest.data && !latest.error,
  });
  // A fresh read of the list holds what the buttons' answers did, and more.
  useEffect(() => setChanged({}), [imports.data]);
  const mayManage = can('contacts.manage');
  const act = async (job: ImportJobFieldsFragment, action: 'cancel' | 'resume') => {
    const done = action === 'cancel' ? await cancel.run({ id: job.id }) : await resume.run({ id: job.id });
    if (!done) return;
    const next = 'cancelContactImport' in done ? done.cancelContactImport : done.resumeContactImport;
    setChanged((previous) => ({ ...previous, [next.id]: next }));
  };
  const rows = imports.data?.contactImports.data.map((job) => changed[job.id] ?? job) ?? [];

  return (
    <Page title="Contact imports">
      <p>
        <Link href="/contacts">Back to the contacts</Link>
      </p>
      {imports.error ? <QueryError error={imports.error} what="Imports" /> : null}
      {live.error ? <QueryError error={live.error} what="Live updates" /> : null}
      <FormError error={cancel.error ?? resume.error} />
      {imports.data ? (
        <>
          {rows.length === 0 ? <p>No import yet.</p> : null}
          <Table label="Contact imports">
            <thead>
              <tr>
                <th scope="col">When</th>
                <th scope="col">Status</th>
                <th scope="col">Existing contacts</th>
                <th scope="col">Rows read</th>
                <th scope="col">Created</th>
                <th scope="col">Updated</th>
                <th scope="col">Skipped</th>
                <th scope="col">Refused</th>
                <th scope="col">Do not call</th>
                <th scope="col">Ended</th>
                {mayManage ? <th scope="col">Actions</th> : null}
              </tr>
            </thead>
            <tbody>
              {rows.map((job) => (
                <tr key={job.id} data-import={job.id} data-status={job.status}>
                  <td>{formatDate(job.createdAt)}</td>
                  <td>
                    <Badge value={job.status} />
                    {job.error ? <p className="hint">{job.error}</p> : null}
                  </td>
                  <td>
                    {job.mode} by {job.key}
                  </td>
                  <td>{job.rowsRead}</td>
                  <td>{job.imported}</td>
                  <td>{job.updated}</td>
                  <td>{job.skipped}</td>
                  <td>{job.refused}</td>
                  <td>{job.doNotCall}</td>
                  <td>{formatDate(job.finishedAt)}</td>
                  {mayManage ? (
                    <td className="row-actions">
                      {CANCELLABLE.has(job.status) ? (
                        <button type="button" className="small danger" disabled={cancel.pending} onClick={() => void act(job, 'cancel')}>
                          Cancel <span className="visually-hidden">the import of {formatDate(job.createdAt)}</span>
                        </button>
                      ) : null}
                      {resumable(job) ? (
                        <button type="button" className="small" disabled={resume.pending} onClick={() => void act(job, 'resume')}>
                          Resume <span className="visually-hidden">the import of {formatDate(job.createdAt)}</span>
                        </button>
                      ) : null}
                    </td>
                  ) : null}
                </tr>
              ))}
            </tbody>
          </Table>
          <Pager meta={imports.data.contactImports.meta} onPage={setPage} />
        </>
      ) : imports.loading ? (
        <Loading what="the imports" />
      ) : null}
    </Page>
  );
}
