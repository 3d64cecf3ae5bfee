import { useState, type FormEvent } from 'react';
import type { ApiError } from '../../api/client';
import type { McpServerRowFragment } from '../../api/generated';
import { FormError, TextField } from '../../components/forms';

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
  const [authName, setAuthName] = useState('');
  const [authValue, setAuthValue] = useState('');
  const submit = (event: FormEvent) => {
    event.preventDefault();
    onSubmit({ name, url, auth: authName.trim() === '' && authValue === '' ? undefined : { name: authName, value: authValue } });
  };
  return (
    <form className="tool-form" onSubmit={submit} noValidate aria-label={server ? `Change the MCP server ${server.name}` : 'Add an MCP server'}>
      <TextField label="Server name" field="name" value={name} onChange={setName} error={error} required />
      <TextField label="Server URL" field="url" type="url" value={url} onChange={setUrl} error={error} required hint="Its Streamable HTTP endpoint" />
      <TextField
        label="Auth header name (optional)"
        field="auth.name"
        value={authName}
        onChange={setAuthName}
        error={error}
        hint={server?.authHeaderName ? `It sends ${server.authHeaderName}; a header here replaces it` : 'e.g. Authorization'}
      />
      <TextField
        label="Auth header value"
        field="auth.value"
        type="password"
        value={authValue}
        onChange={setAuthValue}
        error={error}
        hint="Sealed when saved and never shown again"
      />
      <FormError error={error} shown={['name', 'url', 'auth.name', 'auth.value']} />
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
