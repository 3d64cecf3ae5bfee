/** How long a failed call's stream waits for its failure to be written before it closes anyway. */
export const FAILURE_WRITE_WAIT_MS = 5000;

/**
 * Runs `close` once `written` has settled, or after `waitMs` should it not (a database that does not
 * answer must not hold the caller on a silent line): a failed call's stream closes after its failure
 * is stored, so what the carrier asks next (stream-ended, then the call's completed status) finds it.
 */
export async function closeAfter(written: Promise<unknown>, close: () => void, waitMs = FAILURE_WRITE_WAIT_MS): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const waited = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, waitMs);
  });
  await Promise.race([
    written.then(
      () => undefined,
      () => undefined,
    ),
    waited,
  ]);
  clearTimeout(timer);
  close();
}
