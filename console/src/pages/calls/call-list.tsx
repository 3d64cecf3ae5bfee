import { useState, type FormEvent } from 'react';
import { Link, useLocation, useSearch } from 'wouter';
import { CallsDocument, ProgramFilterChoicesDocument, type CallStatus, type CallsQueryVariables } from '../../api/generated';
import { useQuery } from '../../api/hooks';
import { Badge, formatDate, Loading, Pager, Table } from '../../components/common';
import { FormError, SelectField, TextField } from '../../components/forms';
import { Page } from '../../components/page';

const STATUSES = ['queued', 'ringing', 'in_progress', 'completed', 'busy', 'no_answer', 'failed', 'canceled'];
const OUTCOMES = ['answered', 'voicemail', 'no_answer', 'busy', 'failed', 'do_not_call'];
const FILTERS = ['status', 'outcome', 'programId', 'executionId', 'from', 'to', 'phone'] as const;
type Filters = Record<(typeof FILTERS)[number], string>;

/** A date typed in a filter (yyyy-mm-dd, the user's day) as the instant it starts; `to` is inclusive, so its next day. */
function dayStart(day: string, plus = 0): string | undefined {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(day)) return undefined;
  const [year, month, date] = day.split('-').map(Number) as [number, number, number];
  return new Date(year, month - 1, date + plus).toISOString();
}

function variablesOf(filters: Filters, page: number): CallsQueryVariables {
  return {
    status: (filters.status || undefined) as CallStatus | undefined,
    outcome: filters.outcome || undefined,
    programId: filters.programId || undefined,
    executionId: filters.executionId || undefined,
    queuedAfter: dayStart(filters.from),
    queuedBefore: dayStart(filters.to, 1),
    search: filters.phone.trim() || undefined,
    page,
  };
}

/** The calls, filtered; the filters live in the address, so a filtered list can be linked to and comes back on reload. */
export function CallList() {
  const search = useSearch();
  const [, navigate] = useLocation();
  const params = new URLSearchParams(search);
  const applied = Object.fromEntries(FILTERS.map((name) => [name, params.get(name) ?? ''])) as Filters;
  const page = Math.max(1, Number(params.get('page') ?? 1) || 1);
  const [draft, setDraft] = useState<Filters>(applied);
  const calls = useQuery(CallsDocument, variablesOf(applied, page));
  const programs = useQuery(ProgramFilterChoicesDocument, {});
  const go = (filters: Filters, toPage: number) => {
    const next = new URLSearchParams(Object.entries(filters).filter(([, value]) => value !== ''));
    if (toPage > 1) next.set('page', String(toPage));
    navigate(next.size > 0 ? `/calls?${next}` : '/calls');
  };
  const submit = (event: FormEvent) => {
    event.preventDefault();
    go(draft, 1);
  };
  const set = (name: keyof Filters) => (value: string) => setDraft((previous) => ({ ...previous, [name]: value }));
  return (
    <Page title="Calls">
      <form className="filters" onSubmit={submit} aria-label="Filter the calls">
        <SelectField
          label="Status"
          field="status"
          value={draft.status}
          onChange={set('status')}
          error={calls.error}
          options={[{ value: '', label: 'Any' }, ...STATUSES.map((value) => ({ value, label: value.replace(/_/g, ' ') }))]}
        />
        <SelectField
          label="Outcome"
          field="outcome"
          value={draft.outcome}
          onChange={set('outcome')}
          error={calls.error}
          options={[{ value: '', label: 'Any' }, ...OUTCOMES.map((value) => ({ value, label: value.replace(/_/g, ' ') }))]}
        />
        <SelectField
          label="Program"
          field="programId"
          value={draft.programId}
          onChange={set('programId')}
          error={calls.error}
          options={[{ value: '', label: 'Any' }, ...(programs.data?.programs.data ?? []).map((program) => ({ value: program.id, label: program.name }))]}
        />
        <TextField label="From (day queued)" field="queuedAfter" type="date" value={draft.from} onChange={set('from')} error={calls.error} />
        <TextField label="To (day queued)" field="queuedBefore" type="date" value={draft.to} onChange={set('to')} error={calls.error} />
        <TextField
          label="Phone"
          field="search"
          type="search"
          value={draft.phone}
          onChange={set('phone')}
          error={calls.error}
          hint="Part of the number called or calling"
        />
        <div className="filter-actions">
          <button type="submit" className="primary">
            Apply
          </button>
          <button
            type="button"
            onClick={() => {
              const empty = Object.fromEntries(FILTERS.map((name) => [name, ''])) as Filters;
              setDraft(empty);
              go(empty, 1);
            }}
          >
            Clear
          </button>
        </div>
      </form>
      {applied.executionId ? (
        <p className="notice">
          Only the calls of <Link href={`/executions/${applied.executionId}`}>one execution</Link>.
        </p>
      ) : null}
      <FormError error={calls.error} shown={['status', 'outcome', 'programId', 'queuedAfter', 'queuedBefore', 'search']} />
      {calls.data ? (
        <>
          <Table label="Calls">
            <thead>
              <tr>
                <th scope="col">Queued</th>
                <th scope="col">Number</th>
                <th scope="col">Contact</th>
                <th scope="col">Status</th>
                <th scope="col">Outcome</th>
                <th scope="col">Duration</th>
                <th scope="col">Program</th>
              </tr>
            </thead>
            <tbody>
              {calls.data.calls.data.map((call) => (
                <tr key={call.id}>
                  <td>
                    <Link href={`/calls/${call.id}`}>{formatDate(call.queuedAt)}</Link>
                  </td>
                  <td>{call.direction === 'inbound' ? `from ${call.from ?? '—'}` : call.to}</td>
                  <td>{call.contact?.name ?? '—'}</td>
                  <td>
                    <Badge value={call.status} />
                  </td>
                  <td>
                    <Badge value={call.outcome} />
                  </td>
                  <td>{call.durationSeconds === null ? '—' : `${call.durationSeconds} s`}</td>
                  <td>{call.program?.name ?? '—'}</td>
                </tr>
              ))}
            </tbody>
          </Table>
          {calls.data.calls.data.length === 0 ? <p>No call matches.</p> : null}
          <Pager meta={calls.data.calls.meta} onPage={(next) => go(applied, next)} />
        </>
      ) : calls.loading ? (
        <Loading what="calls" />
      ) : null}
    </Page>
  );
}
