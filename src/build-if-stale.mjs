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
  if (!existsSync(dir)) return 0;
  let latest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    latest = Math.max(latest, entry.isDirectory() ? newest(path) : statSync(path).mtimeMs);
  }
  return latest;
}

const marker = 'dist/.tsbuildinfo';
const tsc = 'node_modules/typescript/bin/tsc';
// A deployment that carries only dist/ (the Docker image) has no sources to compare with.
const sources = existsSync('src') ? Math.max(newest('src'), newest('migrations'), existsSync('tsconfig.json') ? statSync('tsconfig.json').mtimeMs : 0) : 0;
if (sources > 0 && (!existsSync(marker) || statSync(marker).mtimeMs < sources)) {
  if (!existsSync(tsc)) {
    // npm install --omit=dev leaves TypeScript out: say what to do in one line rather than fail with a stack.
    console.error(
      `Cannot start: dist/ is ${existsSync(marker) ? 'older than src/' : 'not built'} and TypeScript is not installed (npm install --omit=dev); run \`npm install && npm run build\` first (then \`npm prune --omit=dev\` if you like), or use the Docker image.`,
    );
    process.exit(1);
  }
  console.error(`Building dist/ from src/ with TypeScript (${existsSync(marker) ? 'sources changed' : 'first start'})…`);
  execFileSync(process.execPath, [tsc, '-p', 'src/tsconfig.build.json'], { stdio: 'inherit' });
}
