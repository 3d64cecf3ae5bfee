// The end-to-end tier: files that start the built server or CLI as processes, drive a browser, fuzz
// every route, or play whole calls through the loopback provider doubles. Together 383 of the 774 s
// test/support/durations.json sums, for 25 of its 169 files (and the two batch-tools files it predates). `npm test`
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
  // Calls whose subject is turn-taking in real time or a carrier's own media framing: their audio is
  // played at the speed of speech, so they wait more than they compute.
  'test/voice/interruptions.test.ts',
  'test/voice/deepgram-flux.test.ts',
  'test/voice/telnyx-streaming.test.ts',
  'test/voice/telnyx-transfer.test.ts',
  // The rest of the live calls over a media WebSocket through the provider doubles (issue #41: `npm test`
  // under 8 minutes on a busy 2-core laptop): speech to speech, the agent's hands (transfer, keypad, HTTP
  // and MCP tools on the phone, batch agents' tools). `npm test` keeps one live call of each door in
  // test/voice/voice.test.ts (the built server, inbound calls, the simulated caller) and the offline
  // streaming campaign (test/voice/streaming-simulator.test.ts).
  'test/voice/sts.test.ts',
  'test/voice/transfer.test.ts',
  'test/voice/keypad.test.ts',
  'test/tools/tools-voice.test.ts',
  'test/voice/batch-tools.test.ts',
  'test/voice/telnyx-batch-tools.test.ts',
];

// What the PostgreSQL pass of CI leaves out (jest.postgresql.config.mjs): files whose subject does not
// touch the database's dialect, so a second run on PostgreSQL tests nothing the first did not:
// - the unit tests beside the code (src/**, no database at all);
// - the browser pages but the console (GraphiQL's explorer, the talk page), which read through the doors
//   whose every query runs on PostgreSQL in the integration tests; the console, the product's one
//   screen of every area, runs on both (its issue asks for both databases);
// - the live calls whose subject is a wire protocol or turn-taking in real time (back-channels and
//   barge-in, Deepgram Flux, Gemini Live's framing, Telnyx's media framing and TeXML transfers): what they write (the call,
//   its conversation and messages, its usage) is written by the same statements in the live-call files
//   that do run on both (test/voice/sts.test.ts, streaming.test.ts, twilio-voice.test.ts,
//   transfer.test.ts, tools-voice.test.ts, test/telephony/telnyx-carrier.test.ts), and they spend their time in
//   audio played at the speed of speech, not in the database.
// Together about 140 of the 760 s the PGlite run sums in CI (test/support/durations.json); the rest of
// the suite, the route fuzzers and the process tests included, runs on both. Any file still runs on
// PostgreSQL alone with `TEST_DATABASE_URL=… npm run test:suite -- <file>`.
export const DATABASE_NEUTRAL = [
  'src/',
  'test/platform/explorer.test.ts',
  'test/web-calls/talk-page.test.ts',
  'test/voice/interruptions.test.ts',
  'test/voice/deepgram-flux.test.ts',
  'test/voice/sts-google.test.ts',
  'test/voice/telnyx-streaming.test.ts',
  // The transfer's record, event and return are written by call-transfers.ts's statements, which transfer.test.ts runs on both.
  'test/voice/telnyx-transfer.test.ts',
];
