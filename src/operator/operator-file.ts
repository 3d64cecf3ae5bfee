import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * DATA_DIR/operator.json tells the operator CLI that a running server holds the embedded database
 * and where to send its commands instead: `{pid, url, token}`. The token is the secret of the
 * server's /operator door, new at every start; the file is 0600 in a 0700 directory, so only the
 * user who runs the server (and may read its database anyway) can read it. It is never logged.
 */
export const OPERATOR_FILE = 'operator.json';

export interface OperatorEndpoint {
  pid: number;
  url: string;
  token: string;
}

/** A fresh secret for this process's /operator door (256 random bits). */
export function newOperatorToken(): string {
  return randomBytes(32).toString('base64url');
}

/** The loopback address a CLI on this machine reaches a server listening on `host` by. */
export function loopbackUrl(host: string, port: number): string {
  if (host === '0.0.0.0' || host === '') return `http://127.0.0.1:${port}`;
  if (host === '::') return `http://[::1]:${port}`;
  return host.includes(':') ? `http://[${host}]:${port}` : `http://${host}:${port}`;
}

/** Writes DATA_DIR/operator.json (0600); answers a function that removes it, if it is still this process's. */
export function writeOperatorFile(dir: string, endpoint: OperatorEndpoint): () => void {
  const file = join(dir, OPERATOR_FILE);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  rmSync(file, { force: true }); // a left-over of a server that was killed: the mode applies only to a new file
  writeFileSync(file, JSON.stringify(endpoint) + '\n', { mode: 0o600, flag: 'wx' });
  return () => {
    if (readOperatorFile(dir)?.pid === endpoint.pid) rmSync(file, { force: true });
  };
}

/** The endpoint a server wrote, or undefined when there is none (or it cannot be read as one). */
export function readOperatorFile(dir: string): OperatorEndpoint | undefined {
  const file = join(dir, OPERATOR_FILE);
  if (!existsSync(file)) return undefined;
  try {
    const value = JSON.parse(readFileSync(file, 'utf8')) as Partial<OperatorEndpoint>;
    if (Number.isInteger(value.pid) && typeof value.url === 'string' && typeof value.token === 'string') return value as OperatorEndpoint;
  } catch {
    // Half-written or damaged: as if there were none; the CLI then opens the database itself.
  }
  return undefined;
}
