import { useState, type FormEvent } from 'react';
import { Link } from 'wouter';
import { ContactsDocument, CreateContactDocument, DeleteContactDocument } from '../../api/generated';
import { useMutation, useQuery } from '../../api/hooks';
import { useSession } from '../../api/session';
import { formatDate, Loading, Pager, QueryError, Table } from '../../components/common';
import { FormError, TextField } from '../../components/forms';
import { Page, Section } from '../../components/page';
import { ContactImport } from './contact-import';
import { SearchBox } from './search-box';

const CONTACT_FIELDS = ['phone', 'name', 'timeZone'];

export function ContactList() {
  const { can } = useSession();
  const [search, setSearch] = useState('');
  const [page, setPage] = useState(1);
  const contacts = useQuery(ContactsDocument, { search: search.trim() || undefined, page });
  const remove = useMutation(DeleteContactDocument);
  const mayManage = can('contacts.manage');
  return (
    <Page title="Contacts">
      {mayManage ? <NewContact onCreated={contacts.refetch} /> : null}
      {mayManage ? <ContactImport onImported={contacts.refetch} /> : null}
      <p>
        <Link href="/contacts/imports">Past imports</Link>: their state and counts{mayManage ? ', to cancel or resume' : ''}.
      </p>
      <SearchBox id="contact-search" label="Search by name or phone" value={search} onChange={(value) => (setSearch(value), setPage(1))} />
      {contacts.error ? <QueryError error={contacts.error} what="Contacts" /> : null}
      <FormError error={remove.error} />
      {contacts.data ? (
        <>
          <Table label="Contacts">
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Phone</th>
                <th scope="col">Time zone</th>
                <th scope="col">Opted out</th>
                <th scope="col">Added</th>
                {mayManage ? <th scope="col">Actions</th> : null}
              </tr>
            </thead>
            <tbody>
              {contacts.data.contacts.data.map((contact) => (
                <tr key={contact.id}>
                  <td>{contact.name ?? '—'}</td>
                  <td>{contact.phone}</td>
                  <td>{contact.timeZone ?? '—'}</td>
                  <td>{contact.optedOut ? 'Yes' : 'No'}</td>
                  <td>{formatDate(contact.createdAt)}</td>
                  {mayManage ? (
                    <td>
                      <button
                        type="button"
                        className="danger small"
                        onClick={() => void remove.run({ id: contact.id }).then((done) => done && contacts.refetch())}
                      >
                        Delete <span className="visually-hidden">{contact.name ?? contact.phone}</span>
                      </button>
                    </td>
                  ) : null}
                </tr>
              ))}
            </tbody>
          </Table>
          <Pager meta={contacts.data.contacts.meta} onPage={setPage} />
        </>
      ) : contacts.loading ? (
        <Loading what="contacts" />
      ) : null}
    </Page>
  );
}

function NewContact({ onCreated }: { onCreated: () => void }) {
  const [phone, setPhone] = useState('');
  const [name, setName] = useState('');
  const [timeZone, setTimeZone] = useState('');
  const create = useMutation(CreateContactDocument);
  const submit = async (event: FormEvent) => {
    event.preventDefault();
    const done = await create.run({ input: { phone, name: name || undefined, timeZone: timeZone || undefined } });
    if (done) {
      setPhone('');
      setName('');
      setTimeZone('');
      onCreated();
    }
  };
  return (
    <Section title="Add a contact">
      <form className="inline-form" onSubmit={(event) => void submit(event)} noValidate aria-label="Add a contact">
        <TextField
          label="Phone"
          field="phone"
          type="tel"
          inputMode="tel"
          value={phone}
          onChange={setPhone}
          error={create.error}
          hint="E.164, e.g. +14155550100"
          required
        />
        <TextField label="Name" field="name" value={name} onChange={setName} error={create.error} />
        <TextField label="Time zone" field="timeZone" value={timeZone} onChange={setTimeZone} error={create.error} hint="IANA, e.g. America/New_York" />
        <FormError error={create.error} shown={CONTACT_FIELDS} />
        <button type="submit" className="primary" disabled={create.pending}>
          Add contact
        </button>
      </form>
    </Section>
  );
}
