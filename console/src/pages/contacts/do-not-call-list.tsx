import { useState, type FormEvent } from 'react';
import { AddDoNotCallDocument, DoNotCallDocument, RemoveDoNotCallDocument } from '../../api/generated';
import { useMutation, useQuery } from '../../api/hooks';
import { useSession } from '../../api/session';
import { formatDate, Loading, Pager, QueryError, Table } from '../../components/common';
import { FormError, TextField } from '../../components/forms';
import { Page, Section } from '../../components/page';
import { DoNotCallImport } from './do-not-call-import';
import { SearchBox } from './search-box';

export function DoNotCallList() {
  const { can } = useSession();
  const [search, setSearch] = useState('');
  const [page, setPage] = useState(1);
  const entries = useQuery(DoNotCallDocument, { search: search.trim() || undefined, page });
  const remove = useMutation(RemoveDoNotCallDocument);
  const mayManage = can('contacts.manage');
  return (
    <Page title="Do not call">
      <p>Numbers never called by any campaign, whoever's contact they are.</p>
      {mayManage ? <AddNumber onAdded={entries.refetch} /> : null}
      {mayManage ? <DoNotCallImport onImported={entries.refetch} /> : null}
      <SearchBox id="dnc-search" label="Search by number or note" value={search} onChange={(value) => (setSearch(value), setPage(1))} />
      {entries.error ? <QueryError error={entries.error} what="Do-not-call list" /> : null}
      <FormError error={remove.error} />
      {entries.data ? (
        <>
          <Table label="Do-not-call list">
            <thead>
              <tr>
                <th scope="col">Number</th>
                <th scope="col">Note</th>
                <th scope="col">Source</th>
                <th scope="col">Added</th>
                {mayManage ? <th scope="col">Actions</th> : null}
              </tr>
            </thead>
            <tbody>
              {entries.data.doNotCallEntries.data.map((entry) => (
                <tr key={entry.id}>
                  <td>{entry.phone}</td>
                  <td>{entry.note ?? '—'}</td>
                  <td>{entry.source}</td>
                  <td>{formatDate(entry.createdAt)}</td>
                  {mayManage ? (
                    <td>
                      <button type="button" className="small" onClick={() => void remove.run({ id: entry.id }).then((done) => done && entries.refetch())}>
                        Remove <span className="visually-hidden">{entry.phone}</span>
                      </button>
                    </td>
                  ) : null}
                </tr>
              ))}
            </tbody>
          </Table>
          <Pager meta={entries.data.doNotCallEntries.meta} onPage={setPage} />
        </>
      ) : entries.loading ? (
        <Loading what="the do-not-call list" />
      ) : null}
    </Page>
  );
}

function AddNumber({ onAdded }: { onAdded: () => void }) {
  const [phone, setPhone] = useState('');
  const [note, setNote] = useState('');
  const add = useMutation(AddDoNotCallDocument);
  const submit = async (event: FormEvent) => {
    event.preventDefault();
    if (await add.run({ input: { phone, note: note || undefined } })) {
      setPhone('');
      setNote('');
      onAdded();
    }
  };
  return (
    <Section title="Add a number">
      <form className="inline-form" onSubmit={(event) => void submit(event)} noValidate aria-label="Add a number to the do-not-call list">
        <TextField label="Number" field="phone" type="tel" inputMode="tel" value={phone} onChange={setPhone} error={add.error} required />
        <TextField label="Note" field="note" value={note} onChange={setNote} error={add.error} />
        <FormError error={add.error} shown={['phone', 'note']} />
        <button type="submit" className="primary" disabled={add.pending}>
          Add number
        </button>
      </form>
    </Section>
  );
}
