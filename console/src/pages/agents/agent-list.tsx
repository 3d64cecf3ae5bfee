import { useState } from 'react';
import { Link } from 'wouter';
import { AgentsDocument, type AgentStatus } from '../../api/generated';
import { useQuery } from '../../api/hooks';
import { useSession } from '../../api/session';
import { Badge, formatDate, Loading, Pager, QueryError, Table } from '../../components/common';
import { Page } from '../../components/page';

const STATUSES: { value: '' | AgentStatus; label: string }[] = [
  { value: '', label: 'Draft and active' },
  { value: 'draft', label: 'Draft' },
  { value: 'active', label: 'Active' },
  { value: 'archived', label: 'Archived' },
];

export function AgentList() {
  const { can } = useSession();
  const [search, setSearch] = useState('');
  const [status, setStatus] = useState<'' | AgentStatus>('');
  const [page, setPage] = useState(1);
  const agents = useQuery(AgentsDocument, { search: search.trim() || undefined, status: status || undefined, page });
  return (
    <Page
      title="Agents"
      actions={
        can('agents.manage') ? (
          <Link href="/agents/new" className="button primary">
            New agent
          </Link>
        ) : null
      }
    >
      <form className="filters" role="search" onSubmit={(event) => event.preventDefault()}>
        <div className="field">
          <label htmlFor="agent-search">Search</label>
          <input
            id="agent-search"
            type="search"
            value={search}
            onChange={(event) => {
              setSearch(event.target.value);
              setPage(1);
            }}
          />
        </div>
        <div className="field">
          <label htmlFor="agent-status">Status</label>
          <select
            id="agent-status"
            value={status}
            onChange={(event) => {
              setStatus(event.target.value as AgentStatus | '');
              setPage(1);
            }}
          >
            {STATUSES.map((option) => (
              <option key={option.value} value={option.value}>
                {option.label}
              </option>
            ))}
          </select>
        </div>
      </form>
      {agents.error ? <QueryError error={agents.error} what="Agents" /> : null}
      {agents.data ? (
        <>
          <Table label="Agents">
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Status</th>
                <th scope="col">Model</th>
                <th scope="col">Version</th>
                <th scope="col">Updated</th>
              </tr>
            </thead>
            <tbody>
              {agents.data.agents.data.map((agent) => (
                <tr key={agent.id}>
                  <td>
                    <Link href={`/agents/${agent.id}`}>{agent.name}</Link>
                    {agent.description ? <div className="muted">{agent.description}</div> : null}
                  </td>
                  <td>
                    <Badge value={agent.status} />
                  </td>
                  <td>
                    <code>{agent.modelConfig.model}</code>
                  </td>
                  <td>{agent.version}</td>
                  <td>{formatDate(agent.updatedAt)}</td>
                </tr>
              ))}
            </tbody>
          </Table>
          {agents.data.agents.data.length === 0 ? <p>No agent matches.</p> : null}
          <Pager meta={agents.data.agents.meta} onPage={setPage} />
        </>
      ) : agents.loading ? (
        <Loading what="agents" />
      ) : null}
    </Page>
  );
}
