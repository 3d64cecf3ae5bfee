/** Raised when another process holds the embedded database. */
export class DatabaseInUseError extends Error {}

/** DATABASE_URL points at a server or database that cannot be used; the message names the variable. */
export class DatabaseUrlError extends Error {}

const UNREACHABLE = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ECONNRESET']);

/**
 * Says in one line what is wrong with DATABASE_URL when PostgreSQL cannot be opened, or answers
 * undefined for any other failure. The URL is shown without its password.
 */
export function describeDatabaseUrlFailure(databaseUrl: string, error: unknown): DatabaseUrlError | undefined {
  const { code, message } = (error ?? {}) as { code?: unknown; message?: unknown };
  const text = typeof message === 'string' ? message.split('\n')[0]! : String(error);
  let where = 'the server';
  let database = '';
  try {
    const url = new URL(databaseUrl);
    where = `${url.hostname}:${url.port || 5432}`;
    database = decodeURIComponent(url.pathname.slice(1));
  } catch {
    // config.ts has already checked the scheme; keep the generic words
  }
  const codes = [code, (error as { cause?: { code?: unknown } })?.cause?.code];
  if (
    codes.some((value) => typeof value === 'string' && UNREACHABLE.has(value)) ||
    /timeout exceeded when trying to connect|Connection terminated/i.test(text)
  ) {
    return new DatabaseUrlError(`DATABASE_URL: cannot reach PostgreSQL at ${where} (${text}); is the server running, and are the host and port right?`);
  }
  if (code === '28P01' || code === '28000' || /password authentication failed|no pg_hba.conf entry/i.test(text)) {
    return new DatabaseUrlError(`DATABASE_URL: PostgreSQL at ${where} refused the user or password (${text})`);
  }
  if (code === '3D000' || /permission denied to create database/i.test(text)) {
    return new DatabaseUrlError(
      `DATABASE_URL: the database "${database}" does not exist at ${where} and this user may not create it (${text}); create it (createdb ${database}) or name an existing one`,
    );
  }
  return undefined;
}
