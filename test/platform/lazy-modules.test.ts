import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

// What importing the built app (dist/, as `npm start` runs it) loads, recorded by a resolve hook in
// a process of its own: every module this leaves out is one less to load per process and per test file.
const APP = new URL('../../dist/src/app.js', import.meta.url).href;
const HOOK = `
import { registerHooks } from 'node:module';
const seen = new Set();
registerHooks({ resolve(specifier, context, next) { const resolved = next(specifier, context); seen.add(resolved.url); return resolved; } });
await import(process.argv[2]);
console.log(JSON.stringify([...seen]));
`;

let loaded: string[];
beforeAll(() => {
  const dir = mkdtempSync(join(tmpdir(), 'gateway-lazy-'));
  try {
    writeFileSync(join(dir, 'hook.mjs'), HOOK);
    const result = spawnSync(process.execPath, [join(dir, 'hook.mjs'), APP], { encoding: 'utf8' });
    expect(result.stderr).toBe('');
    loaded = JSON.parse(result.stdout) as string[];
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

const loads = (pattern: RegExp) => loaded.filter((url) => pattern.test(url));

it('the app loads its own modules and the SDK pieces it always needs (signature checks)', () => {
  expect(loads(/\/dist\/src\/app\.js$/)).toHaveLength(1);
  expect(loads(/\/node_modules\/twilio\/lib\/webhooks\/webhooks\.js$/)).toHaveLength(1);
});

it('libphonenumber (awesome-phonenumber) loads on the first number with a 0 after its country code', () => {
  expect(loads(/\/dist\/src\/modules\/contacts\/phone-key\.js$/)).toHaveLength(1);
  expect(loads(/\/node_modules\/awesome-phonenumber\//)).toEqual([]);
});

it("Twilio's TwiML builder (and xmlbuilder) loads on the first TwiML document a call asks for", () => {
  expect(loads(/\/dist\/src\/modules\/telephony\/carriers\/twilio\/voice-response\.js$/)).toHaveLength(1);
  expect(loads(/\/node_modules\/(twilio\/lib\/twiml\/|xmlbuilder\/)/)).toEqual([]);
});

it('markdown-it loads on the first ask for a served guide (/docs/guides)', () => {
  expect(loads(/\/dist\/src\/platform\/guides\.js$/)).toHaveLength(1);
  expect(loads(/\/dist\/src\/platform\/guide-markdown\.js$/)).toEqual([]);
  expect(loads(/\/node_modules\/(markdown-it|github-slugger|linkify-it|mdurl)\//)).toEqual([]);
});

it('Redis (ioredis, rate-limiter-flexible) loads only when REDIS_URL is set', () => {
  expect(loads(/\/node_modules\/(ioredis|rate-limiter-flexible)\//)).toEqual([]);
  expect(loads(/\/dist\/src\/platform\/rate-limit-redis\.js$/)).toEqual([]);
});

it("Twilio's REST client and its HTTP stack load on the first request to Twilio", () => {
  expect(loads(/\/node_modules\/twilio\/lib\/(index\.js|rest\/|base\/RequestClient\.js)/)).toEqual([]);
  expect(loads(/\/node_modules\/axios\//)).toEqual([]);
});

it('the OpenAPI document is built on its first ask (GET /api/openapi.json), with the schema converters of class-validator-jsonschema', () => {
  expect(loads(/\/dist\/src\/rest\/openapi(-docs|-examples)?\.js$/)).toEqual([]);
  // The contacts' inputs take the decorator alone; the package's index (converters, lodash) is the document's.
  expect(loads(/\/node_modules\/class-validator-jsonschema\/build\/decorators\.js$/)).toHaveLength(1);
  expect(loads(/\/node_modules\/class-validator-jsonschema\/build\/(index|defaultConverters)\.js$/)).toEqual([]);
});

it('the streaming pipeline’s OpenAI synthesizer loads the openai SDK only when an agent first speaks through it', () => {
  expect(loads(/\/dist\/src\/modules\/voice\/streaming\/openai-speech\.js$/)).toHaveLength(1);
  expect(loads(/\/node_modules\/openai\//)).toEqual([]);
});
