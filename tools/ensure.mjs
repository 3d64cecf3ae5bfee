// `node tools/ensure.mjs <dir>...`: installs the tool packages of the repository that the gateway's own
// install leaves out (tools/: Stryker, Redocly, Spectral, madge; test/bench/: PostGraphile, autocannon)
// when their node_modules is missing or was installed from another lock file. The scripts that need
// them call it first (npm run bench, test:mutation, lint:openapi, lint:cycles), so a newcomer's
// `npm install` stays small and these install on first use, from their own lock files (npm ci).
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));

for (const dir of process.argv.slice(2)) {
  const folder = join(root, dir);
  const lock = readFileSync(join(folder, 'package-lock.json'));
  const digest = createHash('sha256').update(lock).digest('hex');
  const stamp = join(folder, 'node_modules', '.installed-from-lock');
  if (existsSync(stamp) && readFileSync(stamp, 'utf8') === digest) continue;
  console.error(`Installing the tools of ${dir}/package.json (npm ci; again only when its lock file changes)`);
  // Run by npm, npm_execpath is its own CLI; otherwise the npm on PATH.
  const npm = process.env.npm_execpath ? [process.execPath, process.env.npm_execpath] : [process.platform === 'win32' ? 'npm.cmd' : 'npm'];
  const result = spawnSync(npm[0], [...npm.slice(1), 'ci', '--no-audit', '--no-fund', '--loglevel=error'], {
    cwd: folder,
    stdio: 'inherit',
    shell: process.platform === 'win32' && !process.env.npm_execpath,
  });
  if (result.status !== 0) {
    console.error(`npm ci in ${dir} failed (exit ${result.status ?? result.signal})`);
    process.exit(1);
  }
  writeFileSync(stamp, digest);
}
