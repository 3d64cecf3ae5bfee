import { useState } from 'react';
import { Link } from 'wouter';
import { ProgramsDocument } from '../../api/generated';
import { useQuery } from '../../api/hooks';
import { useSession } from '../../api/session';
import { Badge, formatDate, Loading, Pager, QueryError, Table } from '../../components/common';
import { Page } from '../../components/page';
import { SearchBox } from '../contacts/search-box';

export function ProgramList() {
  const { can } = useSession();
  const [search, setSearch] = useState('');
  const [page, setPage] = useState(1);
  const programs = useQuery(ProgramsDocument, { search: search.trim() || undefined, page });
  return (
    <Page
      title="Campaigns"
      actions={
        can('programs.manage') ? (
          <Link href="/campaigns/new" className="button primary">
            New program
          </Link>
        ) : null
      }
    >
      <SearchBox id="program-search" label="Search programs" value={search} onChange={(value) => (setSearch(value), setPage(1))} />
      {programs.error ? <QueryError error={programs.error} what="Programs" /> : null}
      {programs.data ? (
        <>
          <Table label="Programs">
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Kind</th>
                <th scope="col">Status</th>
                <th scope="col">Carrier</th>
                <th scope="col">Audience</th>
                <th scope="col">Agent</th>
                <th scope="col">Updated</th>
              </tr>
            </thead>
            <tbody>
              {programs.data.programs.data.map((program) => (
                <tr key={program.id}>
                  <td>
                    <Link href={`/campaigns/${program.id}`}>{program.name}</Link>
                  </td>
                  <td>{program.kind}</td>
                  <td>
                    <Badge value={program.status} />
                  </td>
                  <td>{program.carrier}</td>
                  <td>{program.audience ? <Link href={`/audiences/${program.audience.id}`}>{program.audience.name}</Link> : '—'}</td>
                  <td>{program.agent ? <Link href={`/agents/${program.agent.id}`}>{program.agent.name}</Link> : '—'}</td>
                  <td>{formatDate(program.updatedAt)}</td>
                </tr>
              ))}
            </tbody>
          </Table>
          <Pager meta={programs.data.programs.meta} onPage={setPage} />
        </>
      ) : programs.loading ? (
        <Loading what="programs" />
      ) : null}
    </Page>
  );
}
