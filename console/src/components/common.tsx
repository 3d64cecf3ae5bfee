import type { ReactNode } from 'react';
import type { ApiError } from '../api/client';
import type { MetaFragment } from '../api/generated';

export function formatDate(value: string | null | undefined): string {
  if (!value) return '—';
  return new Date(value).toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'medium' });
}

export function Loading({ what }: { what: string }) {
  return (
    <p className="loading" role="status">
      Loading {what}…
    </p>
  );
}

/** A query's error: "not found" for NOT_FOUND (another organization's id looks like none), else the API's words. */
export function QueryError({ error, what }: { error: ApiError; what: string }) {
  if (error.code === 'NOT_FOUND') {
    return (
      <div className="not-found" role="alert">
        <h2>{what} not found</h2>
        <p>{error.message}</p>
      </div>
    );
  }
  return (
    <div className="form-error" role="alert" data-code={error.code}>
      <p>
        <strong>{error.message}</strong> <span className="code">({error.code})</span>
      </p>
    </div>
  );
}

export function Pager({ meta, onPage }: { meta: MetaFragment; onPage: (page: number) => void }) {
  if (meta.totalPages <= 1) return <p className="pager-summary">{meta.total} in all</p>;
  return (
    <nav className="pager" aria-label="Pages">
      <button type="button" disabled={!meta.hasPreviousPage} onClick={() => onPage(meta.page - 1)}>
        Previous
      </button>
      <span>
        Page {meta.page} of {meta.totalPages} ({meta.total} in all)
      </span>
      <button type="button" disabled={!meta.hasNextPage} onClick={() => onPage(meta.page + 1)}>
        Next
      </button>
    </nav>
  );
}

/** A table that scrolls sideways on a narrow screen, reachable by keyboard. */
export function Table({ label, children }: { label: string; children: ReactNode }) {
  return (
    <div className="table-scroll" role="region" aria-label={label} tabIndex={0}>
      <table>{children}</table>
    </div>
  );
}

export function Badge({ value }: { value: string | null | undefined }) {
  if (!value) return <span className="badge">—</span>;
  return <span className={`badge badge-${value.replace(/[^\w-]/g, '_')}`}>{value.replace(/_/g, ' ')}</span>;
}

/** A secret the API shows once: the user copies it now or never. */
export function SecretOnce({ label, secret, onDone }: { label: string; secret: string; onDone: () => void }) {
  return (
    <div className="secret-once" role="status">
      <p>
        <strong>{label}</strong> It is shown this once; copy it now.
      </p>
      <code className="secret" data-secret>
        {secret}
      </code>
      <div className="actions">
        <button type="button" onClick={() => void navigator.clipboard?.writeText(secret)}>
          Copy
        </button>
        <button type="button" onClick={onDone}>
          I have copied it
        </button>
      </div>
    </div>
  );
}
