import { useState, type ChangeEvent, type FormEvent } from 'react';
import { ImportDoNotCallDocument, type ImportDoNotCallMutation } from '../../api/generated';
import { useMutation } from '../../api/hooks';
import { Table } from '../../components/common';
import { FormError, TextArea } from '../../components/forms';
import { Section } from '../../components/page';

/** Lines of the file shown before it is sent: numbered as the API numbers them (the header is line 1). */
const PREVIEW_LINES = 10;

/**
 * A CSV of numbers added to the list (importDoNotCall): a preview of its first lines, then what the
 * API did — the numbers added, the rows it refused with their line and reason, the repeats it merged.
 */
export function DoNotCallImport({ onImported }: { onImported: () => void }) {
  const [csv, setCsv] = useState('');
  const [result, setResult] = useState<ImportDoNotCallMutation['importDoNotCall'] | null>(null);
  const run = useMutation(ImportDoNotCallDocument);
  const lines = csv.split(/\r?\n/);
  if (lines.at(-1) === '') lines.pop();
  const pick = async (event: ChangeEvent<HTMLInputElement>) => {
    const file = event.target.files?.[0];
    setResult(null);
    setCsv(file ? await file.text() : '');
  };
  const submit = async (event: FormEvent) => {
    event.preventDefault();
    const done = await run.run({ input: { csv } });
    setResult(done?.importDoNotCall ?? null);
    if (done) onImported();
  };
  return (
    <Section title="Import a CSV" id="dnc-import">
      <form onSubmit={(event) => void submit(event)} noValidate aria-label="Import numbers to the do-not-call list">
        <div className="field">
          <label htmlFor="dnc-import-file">CSV file</label>
          <input id="dnc-import-file" type="file" accept=".csv,text/csv,text/plain" aria-describedby="dnc-import-hint" onChange={(event) => void pick(event)} />
          <p className="hint" id="dnc-import-hint">
            One number per line; a first line naming a <code>phone</code> (or <code>number</code>) column is a header, and a <code>note</code> column is kept.
          </p>
        </div>
        <TextArea label="Or paste the CSV" field="csv" value={csv} onChange={(value) => (setCsv(value), setResult(null))} error={run.error} rows={4} />
        {lines.length > 0 ? (
          <div data-testid="import-preview">
            <Table label="Preview of the CSV">
              <thead>
                <tr>
                  <th scope="col">Line</th>
                  <th scope="col">Text</th>
                </tr>
              </thead>
              <tbody>
                {lines.slice(0, PREVIEW_LINES).map((line, index) => (
                  <tr key={index}>
                    <td>{index + 1}</td>
                    <td>
                      <code>{line}</code>
                    </td>
                  </tr>
                ))}
              </tbody>
            </Table>
            <p className="hint">
              {lines.length > PREVIEW_LINES ? `The first ${PREVIEW_LINES} of ${lines.length} lines.` : `${lines.length} line${lines.length === 1 ? '' : 's'}.`}
            </p>
          </div>
        ) : null}
        <FormError error={run.error} shown={['csv']} />
        <button type="submit" className="primary" disabled={run.pending || csv.trim() === ''}>
          Import numbers
        </button>
      </form>
      {result ? <ImportResult result={result} /> : null}
    </Section>
  );
}

function ImportResult({ result }: { result: ImportDoNotCallMutation['importDoNotCall'] }) {
  return (
    <div data-testid="import-result" role="status">
      <p className="notice">
        {result.added} number{result.added === 1 ? '' : 's'} added; {result.rejected.length} row{result.rejected.length === 1 ? '' : 's'} refused;{' '}
        {result.skipped.length} already on the list.
      </p>
      {result.rejected.length > 0 ? (
        <Table label="Rows refused">
          <thead>
            <tr>
              <th scope="col">Line</th>
              <th scope="col">Why it was refused</th>
            </tr>
          </thead>
          <tbody>
            {result.rejected.map((row) => (
              <tr key={row.line}>
                <td>{row.line}</td>
                <td>{row.reason}</td>
              </tr>
            ))}
          </tbody>
        </Table>
      ) : null}
      {result.skipped.length > 0 ? (
        <Table label="Rows already on the list">
          <thead>
            <tr>
              <th scope="col">Line</th>
              <th scope="col">Number</th>
              <th scope="col">Why it added nothing</th>
            </tr>
          </thead>
          <tbody>
            {result.skipped.map((row) => (
              <tr key={row.line}>
                <td>{row.line}</td>
                <td>{row.phone}</td>
                <td>{row.reason}</td>
              </tr>
            ))}
          </tbody>
        </Table>
      ) : null}
    </div>
  );
}
