// Builds dist/ when it is missing or older than any source file, so `npm start` works on a fresh clone;
// `--always` builds in any case (npm run build). The console (console/, served at /console) is built
// by Vite into dist/console the same way: when it is missing or older than console/'s files.
//
// swc compiles each file on its own, as the test suite's transform does (package.json, jest), with
// the same decorator settings: legacy decorators and their design-type metadata, which type-graphql
// and MikroORM read. That takes a few seconds where tsc took over a minute on a busy machine, and it
// checks no types: `npm run typecheck` (tsc --noEmit) does that, and `npm test` runs it beside jest.
// Without swc's native binary for this platform, tsc builds dist/ instead, saying so.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative } from 'node:path';

const [major, minor] = process.versions.node.split('.').map(Number);
if (major < 22 || (major === 22 && minor < 18)) {
  console.error(`Node.js 22.18 or newer is required (24 LTS recommended); this is ${process.version}.`);
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

function sources(dir) {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith('.ts') && !entry.name.endsWith('.test.ts') && !entry.name.endsWith('.d.ts'))
    .map((entry) => join(entry.parentPath, entry.name));
}

// The settings of the test suite's transform (package.json, jest), for ES modules with source maps.
const SWC_OPTIONS = {
  jsc: {
    parser: { syntax: 'typescript', decorators: true },
    transform: { legacyDecorator: true, decoratorMetadata: true, useDefineForClassFields: false },
    target: 'es2022',
    keepClassNames: true,
  },
  module: { type: 'es6' },
  sourceMaps: true,
  inlineSourcesContent: false,
  swcrc: false,
  configFile: false,
};

/** swc, when its native binary loads here; undefined otherwise (a platform npm did not install it for). */
function loadSwc() {
  try {
    return createRequire(join(process.cwd(), 'package.json'))('@swc/core');
  } catch {
    return undefined;
  }
}

async function buildWithSwc(swc, why) {
  const files = [...sources('src'), ...sources('migrations')];
  const started = performance.now();
  process.stderr.write(`Building dist/ from src/ with swc (${why}): ${files.length} files…`);
  // Left by an earlier tsc build, it would make the next `tsc -p src/tsconfig.build.json` think dist/ current.
  rmSync(tsMarker, { force: true });
  let done = 0;
  const queue = [...files];
  const worker = async () => {
    for (let file = queue.shift(); file !== undefined; file = queue.shift()) {
      const out = join('dist', file.replace(/\.ts$/, '.js'));
      const { code, map } = await swc.transformFile(file, { ...SWC_OPTIONS, filename: file, sourceFileName: relative(dirname(out), file), outputPath: out });
      mkdirSync(dirname(out), { recursive: true });
      writeFileSync(out, `${code}\n//# sourceMappingURL=${out.split('/').pop()}.map\n`);
      if (map) writeFileSync(`${out}.map`, map);
      done++;
    }
  };
  await Promise.all(Array.from({ length: 8 }, worker));
  writeFileSync(swcMarker, `${new Date().toISOString()}\n`);
  process.stderr.write(` done in ${((performance.now() - started) / 1000).toFixed(1)} s\n`);
  return done;
}

function buildWithTsc(why) {
  console.error(`Building dist/ from src/ with TypeScript (${why}); this takes a minute or more…`);
  const started = performance.now();
  execFileSync(process.execPath, [tsc, '-p', 'src/tsconfig.build.json'], { stdio: 'inherit' });
  rmSync(swcMarker, { force: true });
  console.error(`Built dist/ in ${Math.round((performance.now() - started) / 1000)} s`);
}

// dist/ is current when either marker is newer than every source: swc's, or tsc's own build info.
const swcMarker = 'dist/.swc-build';
const tsMarker = 'dist/.tsbuildinfo';
const tsc = 'node_modules/typescript/bin/tsc';
const built = Math.max(...[swcMarker, tsMarker].map((file) => (existsSync(file) ? statSync(file).mtimeMs : 0)));
const always = process.argv.includes('--always');
// A deployment that carries only dist/ (the Docker image) has no sources to compare with.
const changed = existsSync('src') ? Math.max(newest('src'), newest('migrations'), existsSync('tsconfig.json') ? statSync('tsconfig.json').mtimeMs : 0) : 0;
if (changed > 0 && (always || built < changed)) {
  const why = always ? 'npm run build' : built > 0 ? 'sources changed' : 'first start';
  const swc = loadSwc();
  if (swc) {
    await buildWithSwc(swc, why);
  } else if (existsSync(tsc)) {
    buildWithTsc(why);
  } else {
    // npm install --omit=dev leaves the compilers out: say what to do in one line rather than fail with a stack.
    console.error(
      `Cannot start: dist/ is ${built > 0 ? 'older than src/' : 'not built'} and neither swc nor TypeScript is installed (npm install --omit=dev); run \`npm install && npm run build\` first (then \`npm prune --omit=dev\` if you like), or use the Docker image.`,
    );
    process.exit(1);
  }
}

// The console: a React app built by Vite (a devDependency). Without Vite (npm install --omit=dev) a
// dist/console already built is served as it is; none built leaves /console saying how to build it.
const consoleMarker = 'dist/console/.vite-build';
if (existsSync('console')) {
  const consoleBuilt = existsSync(consoleMarker) ? statSync(consoleMarker).mtimeMs : 0;
  const consoleChanged = Math.max(newest('console'), existsSync('package-lock.json') ? statSync('package-lock.json').mtimeMs : 0);
  if (always || consoleBuilt < consoleChanged) {
    let vite;
    try {
      vite = await import('vite');
    } catch {
      vite = undefined;
    }
    if (vite) {
      const started = performance.now();
      process.stderr.write(
        `Building dist/console/ from console/ with Vite (${always ? 'npm run build' : consoleBuilt > 0 ? 'sources changed' : 'first start'})…`,
      );
      await vite.build({ configFile: 'console/vite.config.ts', logLevel: 'warn' });
      writeFileSync(consoleMarker, `${new Date().toISOString()}\n`);
      process.stderr.write(` done in ${((performance.now() - started) / 1000).toFixed(1)} s\n`);
    } else if (consoleBuilt === 0) {
      console.error(
        'The console is not built and Vite is not installed (npm install --omit=dev): /console will say so; run `npm install && npm run build` to build it.',
      );
    }
  }
}
