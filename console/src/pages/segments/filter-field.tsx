import { ApiError } from '../../api/client';
import { TextArea } from '../../components/forms';

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
