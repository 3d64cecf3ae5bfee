import { useState, type FormEvent } from 'react';
import { Link, useLocation } from 'wouter';
import type { ApiError } from '../../api/client';
import { CreateSegmentDocument, SegmentsDocument } from '../../api/generated';
import { useMutation, useQuery } from '../../api/hooks';
import { useSession } from '../../api/session';
import { formatDate, Loading, QueryError, Table } from '../../components/common';
import { FormError, TextField } from '../../components/forms';
import { Page, Section } from '../../components/page';
import { EXAMPLE_FILTER, FilterField, FilterPreview, parseFilter } from './filter-field';

/** Segments: the organization's dynamic audiences (a filter over the contacts), each with how many contacts match it now. */
export function SegmentList() {
  const { can } = useSession();
  const audiences = useQuery(SegmentsDocument, {});
  const segments = audiences.data?.audiences.data.filter((audience) => audience.kind === 'dynamic') ?? [];
  return (
    <Page title="Segments">
      <p>A segment's members are every contact its filter matches when it is read; an execution copies them when it is created.</p>
      {can('audiences.manage') ? <NewSegment /> : null}
      {audiences.error ? <QueryError error={audiences.error} what="Segments" /> : null}
      {audiences.data ? (
        <>
          {segments.length === 0 ? <p>No segment yet.</p> : null}
          <Table label="Segments">
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Contacts matching now</th>
                <th scope="col">Filter</th>
                <th scope="col">Changed</th>
              </tr>
            </thead>
            <tbody>
              {segments.map((segment) => (
                <tr key={segment.id}>
                  <td>
                    <Link href={`/segments/${segment.id}`}>{segment.name}</Link>
                    {segment.description ? <div className="muted">{segment.description}</div> : null}
                  </td>
                  <td>{segment.contactCount}</td>
                  <td>
                    <code>{JSON.stringify(segment.filter)}</code>
                  </td>
                  <td>{formatDate(segment.updatedAt)}</td>
                </tr>
              ))}
            </tbody>
          </Table>
          {audiences.data.audiences.meta.total > audiences.data.audiences.data.length ? (
            <p className="hint">The segments among the first {audiences.data.audiences.data.length} audiences by name.</p>
          ) : null}
        </>
      ) : audiences.loading ? (
        <Loading what="segments" />
      ) : null}
    </Page>
  );
}

function NewSegment() {
  const [, navigate] = useLocation();
  const [name, setName] = useState('');
  const [description, setDescription] = useState('');
  const [filter, setFilter] = useState(EXAMPLE_FILTER);
  const [local, setLocal] = useState<ApiError | null>(null);
  const create = useMutation(CreateSegmentDocument);
  const error = local ?? create.error;
  const submit = async (event: FormEvent) => {
    event.preventDefault();
    const parsed = parseFilter(filter);
    if ('error' in parsed) return setLocal(parsed.error);
    setLocal(null);
    const done = await create.run({ input: { name, description: description || undefined, filter: parsed.filter } });
    if (done) navigate(`/segments/${done.createAudience.id}`);
  };
  return (
    <Section title="New segment">
      <form onSubmit={(event) => void submit(event)} noValidate aria-label="New segment">
        <TextField label="Name" field="name" value={name} onChange={setName} error={error} required />
        <TextField label="Description" field="description" value={description} onChange={setDescription} error={error} />
        <FilterField value={filter} onChange={setFilter} error={error} />
        <FilterPreview text={filter} />
        <FormError error={error} shown={['name', 'description', 'filter']} />
        <button type="submit" className="primary" disabled={create.pending}>
          Create segment
        </button>
      </form>
    </Section>
  );
}
