import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The project root: the nearest folder above this file with a package.json (works from src/ and dist/src/). */
export const PROJECT_ROOT = (() => {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, 'package.json')) && dirname(dir) !== dir) dir = dirname(dir);
  return dir;
})();

const PACKAGE = JSON.parse(readFileSync(join(PROJECT_ROOT, 'package.json'), 'utf8')) as { version: string; license?: string };

export const PACKAGE_VERSION = PACKAGE.version;

/** package.json's `license`: an SPDX expression, or UNLICENSED (npm's word for "no licence is granted"). */
export const PACKAGE_LICENSE = PACKAGE.license ?? 'UNLICENSED';
