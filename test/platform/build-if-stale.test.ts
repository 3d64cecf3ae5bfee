import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

// src/build-if-stale.mjs (npm start's prestart) in a throwaway project laid out like a production install.
const SCRIPT = new URL('../../src/build-if-stale.mjs', import.meta.url).pathname;
const ROOT = new URL('../../', import.meta.url).pathname;

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'gateway-build-'));
  mkdirSync(join(dir, 'src'));
  mkdirSync(join(dir, 'migrations'));
  writeFileSync(join(dir, 'src/main.ts'), 'export {};\n');
  writeFileSync(join(dir, 'tsconfig.json'), '{}\n');
  copyFileSync(SCRIPT, join(dir, 'build-if-stale.mjs'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const prestart = () => spawnSync(process.execPath, ['build-if-stale.mjs'], { cwd: dir, encoding: 'utf8' });

it('without swc and TypeScript (npm install --omit=dev) and without dist/, refuses in one line that says what to do', () => {
  const result = prestart();
  expect(result.status).toBe(1);
  expect(result.stderr.trim().split('\n')).toHaveLength(1);
  expect(result.stderr).toMatch(/^Cannot start: dist\/ is not built and neither swc nor TypeScript is installed .*npm run build/);
});

it('without the compilers, a stale dist/ is refused too, rather than old code served', () => {
  mkdirSync(join(dir, 'dist'));
  writeFileSync(join(dir, 'dist/.tsbuildinfo'), '{}');
  utimesSync(join(dir, 'dist/.tsbuildinfo'), new Date(1_000_000), new Date(1_000_000));
  const result = prestart();
  expect(result.status).toBe(1);
  expect(result.stderr).toMatch(/^Cannot start: dist\/ is older than src\//);
});

it('a prebuilt dist/ newer than the sources starts without TypeScript, silently', () => {
  mkdirSync(join(dir, 'dist'));
  writeFileSync(join(dir, 'dist/.tsbuildinfo'), '{}');
  const result = prestart();
  expect([result.status, result.stderr, result.stdout]).toEqual([0, '', '']);
});

it('a deployment with dist/ and no src/ (the Docker image) has nothing to build', () => {
  rmSync(join(dir, 'src'), { recursive: true });
  expect(prestart().status).toBe(0);
});

it('without swc (no native binary for the platform), TypeScript builds, saying so before and after', () => {
  mkdirSync(join(dir, 'node_modules/typescript/bin'), { recursive: true });
  // A stand-in compiler that leaves a file behind: the point is the line printed before it runs.
  writeFileSync(join(dir, 'node_modules/typescript/bin/tsc'), "require('fs').writeFileSync('built', process.argv.slice(2).join(' '));\n");
  writeFileSync(join(dir, 'package.json'), '{"type":"commonjs"}');
  const result = prestart();
  expect(result.status).toBe(0);
  expect(result.stderr).toMatch(/^Building dist\/ from src\/ with TypeScript \(first start\); this takes a minute or more…\nBuilt dist\/ in \d+ s\n$/);
  expect(existsSync(join(dir, 'built'))).toBe(true);
});

it('with swc, builds every source but the tests, keeping decorator metadata, and says how long it took', () => {
  // The project's own swc, reached from the throwaway project as an installed package.
  symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'));
  writeFileSync(join(dir, 'package.json'), '{"type":"module"}');
  mkdirSync(join(dir, 'src/deep'));
  writeFileSync(
    join(dir, 'src/deep/entity.ts'),
    "import 'reflect-metadata';\nconst mark = (): PropertyDecorator => () => {};\nexport class Thing { @mark() when!: Date; }\n",
  );
  writeFileSync(join(dir, 'src/deep/entity.test.ts'), 'export {};\n');
  writeFileSync(join(dir, 'migrations/one.ts'), 'export const one: number = 1;\n');
  const result = prestart();
  expect(result.status).toBe(0);
  expect(result.stderr).toMatch(/^Building dist\/ from src\/ with swc \(first start\): 3 files… done in \d+\.\d s\n$/);
  expect(readdirSync(join(dir, 'dist'), { recursive: true }).sort()).toEqual([
    '.swc-build',
    'migrations',
    'migrations/one.js',
    'migrations/one.js.map',
    'src',
    'src/deep',
    'src/deep/entity.js',
    'src/deep/entity.js.map',
    'src/main.js',
    'src/main.js.map',
  ]);
  const probe = spawnSync(
    process.execPath,
    [
      '--input-type=module',
      '-e',
      "const { Thing } = await import('./dist/src/deep/entity.js'); console.log(Reflect.getMetadata('design:type', Thing.prototype, 'when').name)",
    ],
    { cwd: dir, encoding: 'utf8' },
  );
  expect(probe.stdout).toBe('Date\n');
  // Current now: the next start builds nothing and says nothing.
  expect([prestart().stderr]).toEqual(['']);
});
