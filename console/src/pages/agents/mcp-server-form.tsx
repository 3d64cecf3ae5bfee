import { useState, type FormEvent } from 'react';
import type { ApiError } from '../../api/client';
import type { McpServerRowFragment } from '../../api/generated';
import { FormError, NO_SECRET_HEADER, SecretHeaderField, secretHeaderFields, secretHeaderToSend, TextField } from '../../components/forms';

export interface McpServerInput {
  name: string;
  url: string;
  auth?: { name: string; value: string };
}

interface Props {
  server: McpServerRowFragment | null;
  error: ApiError | null;
  pending: boolean;
  onSubmit: (input: McpServerInput) => void;
  onCancel: () => void;
}

/** An MCP server's fields; the header that authenticates the gateway is write-only (its value is never answered back). */
export function McpServerForm({ server, error, pending, onSubmit, onCancel }: Props) {
  const [name, setName] = useState(server?.name ?? '');
  const [url, setUrl] = useState(server?.url ?? '');
  const [auth, setAuth] = useState(NO_SECRET_HEADER);
  const submit = (event: FormEvent) => {
    event.preventDefault();
    onSubmit({ name, url, auth: secretHeaderToSend(auth) });
  };
  return (
    <form className="tool-form" onSubmit={submit} noValidate aria-label={server ? `Change the MCP server ${server.name}` : 'Add an MCP server'}>
      <TextField label="Server name" field="name" value={name} onChange={setName} error={error} required />
      <TextField label="Server URL" field="url" type="url" value={url} onChange={setUrl} error={error} required hint="Its Streamable HTTP endpoint" />
      <SecretHeaderField
        field="auth"
        nameLabel="Auth header name (optional)"
        valueLabel="Auth header value"
        header={auth}
        onChange={setAuth}
        error={error}
        sent={server?.authHeaderName ? [server.authHeaderName] : []}
        replaces="it"
        emptyHint="e.g. Authorization"
      />
      <FormError error={error} shown={['name', 'url', ...secretHeaderFields('auth')]} />
      <div className="actions">
        <button type="submit" className="primary" disabled={pending}>
          {server ? 'Save the server' : 'Add the server'}
        </button>
        <button type="button" onClick={onCancel}>
          Cancel
        </button>
      </div>
    </form>
  );
}
