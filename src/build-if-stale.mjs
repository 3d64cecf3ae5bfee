// Builds dist/ when it is missing or older than any source file, so `npm start` works on a fresh clone.
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

const [major, minor] = process.versions.node.split('.').map(Number);
if (major < 22 || (major === 22 && minor < 17)) {
  console.error(`Node.js 22.17 or newer is required (24 LTS recommended); this is ${process.version}.`);
  process.exit(1);
}

function newest(dir) {
  let latest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    latest = Math.max(latest, entry.isDirectory() ? newest(path) : statSync(path).mtimeMs);
  }
  return latest;
}

const marker = 'dist/.tsbuildinfo';
const sources = Math.max(newest('src'), newest('migrations'), statSync('tsconfig.json').mtimeMs);
if (!existsSync(marker) || statSync(marker).mtimeMs < sources) {
  execFileSync(process.execPath, ['node_modules/typescript/bin/tsc', '-p', 'src/tsconfig.build.json'], { stdio: 'inherit' });
}
