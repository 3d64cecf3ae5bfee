import { useEffect, useState } from 'react';
import { ApiError } from '../../api/client';
import { SegmentPreviewDocument } from '../../api/generated';
import { useQuery } from '../../api/hooks';
import { TextArea } from '../../components/forms';

/** How long the filter's text rests before it is counted: a count per pause in the typing, not per key. */
export const PREVIEW_DELAY_MS = 400;

export const EXAMPLE_FILTER =
  '{\n  "all": [\n    { "field": "attributes.tier", "op": "eq", "value": "gold" },\n    { "field": "timeZone", "op": "prefix", "value": "Europe/" }\n  ]\n}';

/** The filter's text as JSON, or the reason it is not, as a field error beside it (nothing is sent then). */
export function parseFilter(text: string): { filter: Record<string, unknown> } | { error: ApiError } {
  try {
    return { filter: JSON.parse(text) as Record<string, unknown> };
  } catch (caught) {
    const reason = caught instanceof Error ? caught.message : String(caught);
    return { error: new ApiError('The filter is not JSON.', 'BAD_USER_INPUT', [{ field: 'filter', message: `Not JSON: ${reason}` }]) };
  }
}

/** A segment's filter, typed as the API reads it (JSON); its errors, as the API words them, beside it. */
export function FilterField({ value, onChange, error }: { value: string; onChange: (value: string) => void; error: ApiError | null }) {
  return (
    <TextArea
      label="Filter (JSON)"
      field="filter"
      value={value}
      onChange={onChange}
      error={error}
      rows={8}
      hint='{"field", "op", "value"}, or {"all": […]}, {"any": […]}, {"not": …} of them; ops eq, in, prefix, exists, before, after; fields name, phone, timeZone, createdAt, optedOut, attributes.<key>'
    />
  );
}

/** `value`, once it has not changed for `delay` ms. */
function useSettled<T>(value: T, delay: number): T {
  const [settled, setSettled] = useState(value);
  useEffect(() => {
    const timer = window.setTimeout(() => setSettled(value), delay);
    return () => window.clearTimeout(timer);
  }, [value, delay]);
  return settled;
}

/**
 * How many contacts the filter being typed matches now, counted by the API (segmentPreview) before
 * anything is saved, again each time the text rests; text that is not JSON yet, or a filter the API
 * refuses, is said instead (in the API's words), and nothing is saved.
 */
export function FilterPreview({ text }: { text: string }) {
  const settled = useSettled(text, PREVIEW_DELAY_MS);
  const parsed = parseFilter(settled);
  const filter = 'filter' in parsed ? parsed.filter : null;
  const preview = useQuery(SegmentPreviewDocument, { filter: filter ?? {} }, { skip: filter === null });
  const busy = settled !== text || preview.loading;
  let said: string;
  if (filter === null) said = 'Not JSON yet: nothing is counted.';
  else if (preview.error) said = `Not counted: ${preview.error.fieldErrors.map((error) => error.message).join('; ') || preview.error.message}`;
  else if (preview.data) {
    const count = preview.data.segmentPreview.contactCount;
    said = count === 1 ? '1 contact matches' : `${count} contacts match`;
  } else said = 'Counting…';
  return (
    <p className="notice" role="status" data-testid="filter-preview" aria-busy={busy}>
      {said}
      {filter !== null && !preview.error && preview.data ? ' this filter now (not saved yet).' : null}
    </p>
  );
}
