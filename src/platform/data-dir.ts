import { chmodSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * DATA_DIR holds the embedded database, the JWT secret and the first API key: only the gateway's
 * own user may enter it. Files the process creates from here on are 0600 and directories 0700
 * (PGlite writes its files with the process umask).
 */
export function secureDataDir(dir: string): void {
  process.umask(0o077);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  try {
    chmodSync(dir, 0o700);
  } catch {
    // Not ours to change (a mounted volume owned by another user): leave it as the operator set it.
  }
}

export const FIRST_API_KEY_FILE = 'first-api-key';

/** Writes the Default organization's generated key to DATA_DIR/first-api-key (0600) and answers where it is. */
export function storeFirstApiKey(dir: string, apiKey: string): string {
  const file = join(dir, FIRST_API_KEY_FILE);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  rmSync(file, { force: true }); // a left-over file of an earlier database: the mode applies only to a new file
  writeFileSync(file, `${apiKey}\n`, { mode: 0o600, flag: 'wx' });
  return file;
}
