import { useCallback, useEffect, useRef, useState } from 'react';
import { ApiError } from './client';
import type { TypedDocumentString } from './generated';
import { useSession } from './session';

function asApiError(error: unknown): ApiError {
  return error instanceof ApiError ? error : new ApiError(error instanceof Error ? error.message : String(error), 'INTERNAL_SERVER_ERROR');
}

export interface QueryState<Result> {
  data: Result | null;
  error: ApiError | null;
  loading: boolean;
  refetch: () => void;
}

/** Runs the query, again whenever its variables change or `refetch` is called; the last answer wins. */
export function useQuery<Result, Variables>(
  document: TypedDocumentString<Result, Variables>,
  variables: Variables,
  options: { skip?: boolean } = {},
): QueryState<Result> {
  const { gateway } = useSession();
  const [state, setState] = useState<{ data: Result | null; error: ApiError | null; loading: boolean }>({ data: null, error: null, loading: !options.skip });
  const [round, setRound] = useState(0);
  const key = JSON.stringify(variables);
  useEffect(() => {
    if (options.skip) return;
    let current = true;
    setState((previous) => ({ ...previous, loading: true }));
    gateway.request(document, JSON.parse(key) as Variables).then(
      (data) => current && setState({ data, error: null, loading: false }),
      (error: unknown) => current && setState((previous) => ({ data: previous.data, error: asApiError(error), loading: false })),
    );
    return () => {
      current = false;
    };
  }, [gateway, document, key, round, options.skip]);
  const refetch = useCallback(() => setRound((value) => value + 1), []);
  return { ...state, refetch };
}

export interface MutationState<Result, Variables> {
  /** The data, or null when the API refused (then `error` holds its words). */
  run: (variables: Variables) => Promise<Result | null>;
  error: ApiError | null;
  pending: boolean;
  reset: () => void;
}

export function useMutation<Result, Variables>(document: TypedDocumentString<Result, Variables>): MutationState<Result, Variables> {
  const { gateway } = useSession();
  const [error, setError] = useState<ApiError | null>(null);
  const [pending, setPending] = useState(false);
  const run = useCallback(
    async (variables: Variables) => {
      setPending(true);
      setError(null);
      try {
        return await gateway.request(document, variables);
      } catch (caught) {
        setError(asApiError(caught));
        return null;
      } finally {
        setPending(false);
      }
    },
    [gateway, document],
  );
  return { run, error, pending, reset: useCallback(() => setError(null), []) };
}

/** Subscribes while mounted (and again when the variables change); each event is handed to `onData`. */
export function useSubscription<Result, Variables>(
  document: TypedDocumentString<Result, Variables>,
  variables: Variables,
  onData: (data: Result) => void,
  options: { skip?: boolean } = {},
): { error: ApiError | null; completed: boolean } {
  const { gateway } = useSession();
  const handler = useRef(onData);
  handler.current = onData;
  const [error, setError] = useState<ApiError | null>(null);
  const [completed, setCompleted] = useState(false);
  const key = JSON.stringify(variables);
  useEffect(() => {
    if (options.skip) return;
    setError(null);
    setCompleted(false);
    return gateway.subscribe(document, JSON.parse(key) as Variables, {
      next: (data) => handler.current(data),
      error: setError,
      complete: () => setCompleted(true),
    });
  }, [gateway, document, key, options.skip]);
  return { error, completed };
}
