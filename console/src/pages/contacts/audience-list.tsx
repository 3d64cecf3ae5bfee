import { useState, type FormEvent } from 'react';
import { Link, useLocation } from 'wouter';
import { AudiencesDocument, CreateAudienceDocument } from '../../api/generated';
import { useMutation, useQuery } from '../../api/hooks';
import { useSession } from '../../api/session';
import { formatDate, Loading, Pager, QueryError, Table } from '../../components/common';
import { FormError, TextField } from '../../components/forms';
import { Page, Section } from '../../components/page';
import { SearchBox } from './search-box';

export function AudienceList() {
  const { can } = useSession();
  const [search, setSearch] = useState('');
  const [page, setPage] = useState(1);
  const audiences = useQuery(AudiencesDocument, { search: search.trim() || undefined, page });
  return (
    <Page title="Audiences">
      {can('audiences.manage') ? <NewAudience /> : null}
      <SearchBox id="audience-search" label="Search audiences" value={search} onChange={(value) => (setSearch(value), setPage(1))} />
      {audiences.error ? <QueryError error={audiences.error} what="Audiences" /> : null}
      {audiences.data ? (
        <>
          <Table label="Audiences">
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Members</th>
                <th scope="col">Created</th>
              </tr>
            </thead>
            <tbody>
              {audiences.data.audiences.data.map((audience) => (
                <tr key={audience.id}>
                  <td>
                    <Link href={audience.kind === 'dynamic' ? `/segments/${audience.id}` : `/audiences/${audience.id}`}>{audience.name}</Link>
                    {audience.kind === 'dynamic' ? <span className="muted"> (segment)</span> : null}
                    {audience.description ? <div className="muted">{audience.description}</div> : null}
                  </td>
                  <td>{audience.contactCount}</td>
                  <td>{formatDate(audience.createdAt)}</td>
                </tr>
              ))}
            </tbody>
          </Table>
          <Pager meta={audiences.data.audiences.meta} onPage={setPage} />
        </>
      ) : audiences.loading ? (
        <Loading what="audiences" />
      ) : null}
    </Page>
  );
}

function NewAudience() {
  const [, navigate] = useLocation();
  const [name, setName] = useState('');
  const [description, setDescription] = useState('');
  const create = useMutation(CreateAudienceDocument);
  const submit = async (event: FormEvent) => {
    event.preventDefault();
    const done = await create.run({ input: { name, description: description || undefined } });
    if (done) navigate(`/audiences/${done.createAudience.id}`);
  };
  return (
    <Section title="New audience">
      <form className="inline-form" onSubmit={(event) => void submit(event)} noValidate aria-label="New audience">
        <TextField label="Name" field="name" value={name} onChange={setName} error={create.error} required />
        <TextField label="Description" field="description" value={description} onChange={setDescription} error={create.error} />
        <FormError error={create.error} shown={['name', 'description']} />
        <button type="submit" className="primary" disabled={create.pending}>
          Create audience
        </button>
      </form>
    </Section>
  );
}
