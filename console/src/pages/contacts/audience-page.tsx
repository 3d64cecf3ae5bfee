import { useState } from 'react';
import { AddAudienceMembersDocument, AudienceDocument, ContactsDocument, RemoveAudienceMembersDocument } from '../../api/generated';
import { useMutation, useQuery } from '../../api/hooks';
import { useSession } from '../../api/session';
import { Loading, Pager, QueryError, Table } from '../../components/common';
import { FormError } from '../../components/forms';
import { Page, Section } from '../../components/page';
import { SearchBox } from './search-box';

export function AudiencePage({ id }: { id: string }) {
  const { can } = useSession();
  const [page, setPage] = useState(1);
  const audience = useQuery(AudienceDocument, { id, page });
  const remove = useMutation(RemoveAudienceMembersDocument);
  const mayManage = can('audiences.manage');
  if (audience.error && !audience.data) {
    return (
      <Page title="Audience">
        <QueryError error={audience.error} what="Audience" />
      </Page>
    );
  }
  if (!audience.data) return <Loading what="the audience" />;
  const { name, description, contactCount, contacts } = audience.data.audience;
  return (
    <Page title={name}>
      {description ? <p>{description}</p> : null}
      <p>{contactCount} members</p>
      {mayManage ? <AddMembers audienceId={id} onAdded={audience.refetch} /> : null}
      <Section title="Members">
        <FormError error={remove.error} />
        <Table label="Members">
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Phone</th>
              <th scope="col">Opted out</th>
              {mayManage ? <th scope="col">Actions</th> : null}
            </tr>
          </thead>
          <tbody>
            {contacts.data.map((contact) => (
              <tr key={contact.id}>
                <td>{contact.name ?? '—'}</td>
                <td>{contact.phone}</td>
                <td>{contact.optedOut ? 'Yes' : 'No'}</td>
                {mayManage ? (
                  <td>
                    <button
                      type="button"
                      className="small"
                      onClick={() => void remove.run({ audienceId: id, contactIds: [contact.id] }).then((done) => done && audience.refetch())}
                    >
                      Remove <span className="visually-hidden">{contact.name ?? contact.phone}</span>
                    </button>
                  </td>
                ) : null}
              </tr>
            ))}
          </tbody>
        </Table>
        <Pager meta={contacts.meta} onPage={setPage} />
      </Section>
    </Page>
  );
}

function AddMembers({ audienceId, onAdded }: { audienceId: string; onAdded: () => void }) {
  const [search, setSearch] = useState('');
  const found = useQuery(ContactsDocument, { search: search.trim(), page: 1 }, { skip: search.trim() === '' });
  const add = useMutation(AddAudienceMembersDocument);
  return (
    <Section title="Add members">
      <SearchBox id="member-search" label="Find contacts by name or phone" value={search} onChange={setSearch} />
      <FormError error={add.error ?? found.error} />
      {found.data && search.trim() !== '' ? (
        <ul className="choices">
          {found.data.contacts.data.map((contact) => (
            <li key={contact.id}>
              {contact.name ?? '—'} {contact.phone}{' '}
              <button type="button" className="small" onClick={() => void add.run({ audienceId, contactIds: [contact.id] }).then((done) => done && onAdded())}>
                Add <span className="visually-hidden">{contact.name ?? contact.phone}</span>
              </button>
            </li>
          ))}
        </ul>
      ) : null}
    </Section>
  );
}
