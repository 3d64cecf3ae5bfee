// The end-to-end tier: files that start the built server or CLI as processes, drive a browser, fuzz
// every route, or play whole calls through the loopback provider doubles. Together about half the
// suite's time (252 of 541 s in test/support/durations.json) for a tenth of its files. `npm test`
// leaves them out (jest.core.config.mjs); `npm run test:all`, `npm run test:suite` and CI run them.
// Each area keeps in-process tests in `npm test`: the built server is still started there
// (test/voice/voice.test.ts), tenant isolation is still fuzzed (test/fuzz/cross-organization.test.ts).
export const END_TO_END = [
  'test/cli/cli.test.ts',
  'test/cli/cli-running-server.test.ts',
  'test/organizations/credits-cli.test.ts',
  'test/platform/process.test.ts',
  'test/telephony/restart.test.ts',
  'test/telephony/start-without-key.test.ts',
  'test/platform/explorer.test.ts',
  'test/console/console.test.ts',
  'test/web-calls/talk-page.test.ts',
  'test/sdk/sdk.test.ts',
  'test/fuzz/graphql-mutations.test.ts',
  'test/fuzz/rest-routes-1.test.ts',
  'test/fuzz/rest-routes-2.test.ts',
  'test/voice/streaming.test.ts',
  'test/voice/sts-google.test.ts',
  'test/voice/twilio-voice.test.ts',
  'test/telephony/twilio-campaign.test.ts',
];

// What the PostgreSQL pass of CI leaves out (jest.postgresql.config.mjs): files whose subject does not
// touch the database's dialect, so a second run on PostgreSQL tests nothing the first did not. The unit
// tests beside the code (src/**, no database at all), and the browser pages, which read through the doors
// whose every query runs on PostgreSQL in the integration tests. Together about 260 of the 2,290 s the
// PGlite run summed in CI (at load 14); the rest of the suite, the route fuzzers and the process tests
// included, runs on both.
export const DATABASE_NEUTRAL = ['src/', 'test/console/console.test.ts', 'test/platform/explorer.test.ts', 'test/web-calls/talk-page.test.ts'];
