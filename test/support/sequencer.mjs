// Starts the slowest files first, so that no long file starts last and leaves one worker idle at
// the end. jest's own order does that only from the durations cached by an earlier run on the same
// machine; a clean clone (CI) has none and jest falls back to file size, which puts the process
// tests (small files, the longest runs) anywhere. A file's duration comes from durations.json (a
// recorded whole PGlite run; record-durations.mjs refreshes it) first: jest's cache keeps a file's
// duration by path, so after files were merged under an old name it held the old, small file's
// duration and started the merged one last. A file missing from durations.json takes jest's cached
// duration, else counts as a typical file that boots the app.
import { readFileSync } from 'node:fs';
import { relative } from 'node:path';
import sequencerModule from '@jest/test-sequencer';

const TestSequencer = sequencerModule.default ?? sequencerModule;

const RECORDED = JSON.parse(readFileSync(new URL('./durations.json', import.meta.url), 'utf8'));
const TYPICAL_SECONDS = 5;

export default class SlowestFirstSequencer extends TestSequencer {
  sort(tests) {
    const duration = (test) => {
      const recorded = RECORDED[relative(test.context.config.rootDir, test.path).replaceAll('\\', '/')];
      if (recorded != null) return recorded * 1000;
      return this.time(test) ?? TYPICAL_SECONDS * 1000;
    };
    const keyed = tests.map((test) => ({ test, failed: this.hasFailed(test), duration: duration(test) }));
    keyed.sort((a, b) => (a.failed !== b.failed ? (a.failed ? -1 : 1) : b.duration - a.duration));
    return keyed.map(({ test }) => test);
  }
}
