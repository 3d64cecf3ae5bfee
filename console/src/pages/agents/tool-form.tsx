import { useState, type FormEvent } from 'react';
import { ApiError } from '../../api/client';
import type { ToolRowFragment, ToolMethod } from '../../api/generated';
import {
  FormError,
  NO_SECRET_HEADER,
  SecretHeaderField,
  secretHeaderFields,
  secretHeaderToSend,
  SelectField,
  TextArea,
  TextField,
} from '../../components/forms';

const METHODS = [
  { value: 'POST', label: 'POST' },
  { value: 'PUT', label: 'PUT' },
  { value: 'PATCH', label: 'PATCH' },
];
const EXAMPLE_PARAMETERS = '{\n  "type": "object",\n  "properties": {\n    "orderId": { "type": "string" }\n  },\n  "required": ["orderId"]\n}';
const SHOWN = ['name', 'description', 'method', 'url', 'parameters', 'timeoutMs'];

export interface ToolInput {
  name: string;
  description: string;
  method: ToolMethod;
  url: string;
  parameters: Record<string, unknown>;
  timeoutMs?: number;
  headers?: { name: string; value: string }[];
}

interface Props {
  /** The tool to change; null for a new one. */
  tool: ToolRowFragment | null;
  /** The API's refusal of the last submit, shown beside the fields it names. */
  error: ApiError | null;
  pending: boolean;
  onSubmit: (input: ToolInput) => void;
  onCancel: () => void;
}

/**
 * An HTTP tool's fields. The parameters are JSON typed by hand: text that does not parse is refused here,
 * beside the field, before anything is sent; everything else is the API's to judge. A header's value is
 * write-only: the form never has it back, and sending one replaces the tool's headers.
 */
export function ToolForm({ tool, error, pending, onSubmit, onCancel }: Props) {
  const [name, setName] = useState(tool?.name ?? '');
  const [description, setDescription] = useState(tool?.description ?? '');
  const [method, setMethod] = useState<string>(tool?.method ?? 'POST');
  const [url, setUrl] = useState(tool?.url ?? '');
  const [parameters, setParameters] = useState(tool ? JSON.stringify(tool.parameters, null, 2) : EXAMPLE_PARAMETERS);
  const [timeout, setTimeoutMs] = useState(tool ? String(tool.timeoutMs) : '');
  const [header, setHeader] = useState(NO_SECRET_HEADER);
  const [local, setLocal] = useState<ApiError | null>(null);
  const shownError = local ?? error;

  const submit = (event: FormEvent) => {
    event.preventDefault();
    let parsed: unknown;
    try {
      parsed = JSON.parse(parameters);
    } catch (caught) {
      const reason = caught instanceof Error ? caught.message : String(caught);
      setLocal(new ApiError('The parameters are not JSON.', 'BAD_USER_INPUT', [{ field: 'parameters', message: `Not JSON: ${reason}` }]));
      return;
    }
    setLocal(null);
    const typed = secretHeaderToSend(header);
    onSubmit({
      name,
      description,
      method: method as ToolMethod,
      url,
      parameters: parsed as Record<string, unknown>,
      timeoutMs: timeout.trim() === '' ? undefined : Number(timeout),
      headers: typed ? [typed] : undefined,
    });
  };

  const label = tool ? `Change the tool ${tool.name}` : 'Add an HTTP tool';
  return (
    <form className="tool-form" onSubmit={submit} noValidate aria-label={label}>
      <TextField
        label="Tool name"
        field="name"
        value={name}
        onChange={setName}
        error={shownError}
        required
        hint="What the model calls it: letters, digits, _ or -"
      />
      <TextArea label="What it does" field="description" value={description} onChange={setDescription} error={shownError} rows={2} required />
      <SelectField label="Method" field="method" value={method} onChange={setMethod} options={METHODS} error={shownError} />
      <TextField label="Tool URL" field="url" type="url" value={url} onChange={setUrl} error={shownError} required />
      <TextArea
        label="Parameters (JSON Schema)"
        field="parameters"
        value={parameters}
        onChange={setParameters}
        error={shownError}
        rows={7}
        hint="An object schema of the arguments the model sends"
      />
      <TextField
        label="Timeout (ms)"
        field="timeoutMs"
        value={timeout}
        onChange={setTimeoutMs}
        error={shownError}
        inputMode="numeric"
        hint="100 to 30000; empty: 5000"
      />
      <SecretHeaderField
        field="headers.0"
        nameLabel="Header name (optional)"
        valueLabel="Header value"
        header={header}
        onChange={setHeader}
        error={shownError}
        sent={tool?.headerNames ?? []}
        replaces="them"
        emptyHint="A header every request carries, e.g. Authorization"
      />
      <FormError error={shownError} shown={[...SHOWN, ...secretHeaderFields('headers.0')]} />
      <div className="actions">
        <button type="submit" className="primary" disabled={pending}>
          {tool ? 'Save the tool' : 'Add the tool'}
        </button>
        <button type="button" onClick={onCancel}>
          Cancel
        </button>
      </div>
    </form>
  );
}
