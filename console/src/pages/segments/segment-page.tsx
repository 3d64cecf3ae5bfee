import { useState, type FormEvent } from 'react';
import { Link, useLocation } from 'wouter';
import type { ApiError } from '../../api/client';
import { DeleteSegmentDocument, SegmentDocument, UpdateSegmentDocument, type SegmentQuery } from '../../api/generated';
import { useMutation, useQuery } from '../../api/hooks';
import { useSession } from '../../api/session';
import { formatDate, Loading, QueryError, Table } from '../../components/common';
import { FormError, TextField } from '../../components/forms';
import { Page, Section } from '../../components/page';
import { FilterField, FilterPreview, parseFilter } from './filter-field';

/** A segment: how many contacts match it now and the first of them, its filter to change (then counted again), and Delete. */
export function SegmentPage({ id }: { id: string }) {
  const segment = useQuery(SegmentDocument, { id });
  if (segment.error && !segment.data) {
    return (
      <Page title="Segment">
        <QueryError error={segment.error} what="Segment" />
      </Page>
    );
  }
  if (!segment.data) return <Loading what="the segment" />;
  const audience = segment.data.audience;
  if (audience.kind !== 'dynamic') {
    return (
      <Page title={audience.name}>
        <p>
          This audience lists its members: it is not a segment. <Link href={`/audiences/${audience.id}`}>Open the audience</Link>
        </p>
      </Page>
    );
  }
  return <SegmentEditor segment={audience} onChanged={segment.refetch} loading={segment.loading} />;
}

function SegmentEditor({ segment, onChanged, loading }: { segment: SegmentQuery['audience']; onChanged: () => void; loading: boolean }) {
  const { can } = useSession();
  const [, navigate] = useLocation();
  const [name, setName] = useState(segment.name);
  const [description, setDescription] = useState(segment.description ?? '');
  const [filter, setFilter] = useState(JSON.stringify(segment.filter, null, 2));
  const [local, setLocal] = useState<ApiError | null>(null);
  const [saved, setSaved] = useState(false);
  const update = useMutation(UpdateSegmentDocument);
  const remove = useMutation(DeleteSegmentDocument);
  const mayManage = can('audiences.manage');
  const error = local ?? update.error;

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setSaved(false);
    const parsed = parseFilter(filter);
    if ('error' in parsed) return setLocal(parsed.error);
    setLocal(null);
    const done = await update.run({ id: segment.id, input: { name, description: description || null, filter: parsed.filter } });
    if (done) {
      setSaved(true);
      onChanged();
    }
  };
  const deleteSegment = async () => {
    if (await remove.run({ id: segment.id })) navigate('/segments');
  };

  return (
    <Page title={segment.name}>
      <p>
        <Link href="/segments">All segments</Link>
      </p>
      {segment.description ? <p>{segment.description}</p> : null}
      <div className="actions">
        <p className="notice" role="status" data-testid="segment-count" aria-busy={loading}>
          {segment.contactCount === 1 ? '1 contact matches' : `${segment.contactCount} contacts match`} now; the segment last changed{' '}
          {formatDate(segment.updatedAt)}.
        </p>
        <button type="button" onClick={onChanged} disabled={loading}>
          Count again
        </button>
      </div>
      {mayManage ? (
        <Section title="Filter">
          <form onSubmit={(event) => void submit(event)} noValidate aria-label="Change the segment">
            <TextField label="Name" field="name" value={name} onChange={setName} error={error} required />
            <TextField label="Description" field="description" value={description} onChange={setDescription} error={error} />
            <FilterField value={filter} onChange={(value) => (setFilter(value), setSaved(false))} error={error} />
            <FilterPreview text={filter} />
            <FormError error={error} shown={['name', 'description', 'filter']} />
            {saved ? (
              <p className="saved" role="status">
                Saved; counted again above.
              </p>
            ) : null}
            <div className="actions">
              <button type="submit" className="primary" disabled={update.pending}>
                Save and count
              </button>
              <button type="button" className="danger" onClick={() => void deleteSegment()} disabled={remove.pending}>
                Delete the segment
              </button>
            </div>
            <FormError error={remove.error} />
          </form>
        </Section>
      ) : (
        <Section title="Filter">
          <pre>
            <code>{JSON.stringify(segment.filter, null, 2)}</code>
          </pre>
        </Section>
      )}
      <Section title="First contacts matching">
        <Table label="First contacts matching">
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Phone</th>
              <th scope="col">Opted out</th>
            </tr>
          </thead>
          <tbody>
            {segment.contacts.data.map((contact) => (
              <tr key={contact.id}>
                <td>{contact.name ?? '—'}</td>
                <td>{contact.phone}</td>
                <td>{contact.optedOut ? 'Yes (never called)' : 'No'}</td>
              </tr>
            ))}
          </tbody>
        </Table>
      </Section>
    </Page>
  );
}
