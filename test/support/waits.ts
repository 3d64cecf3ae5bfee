// After each test: a wait (test/helpers/eventually.ts) still running means the test timed out while
// waiting; this says for what, with the last value read, and stops it so it does not outlive the test.
import { abandonWaits } from '../helpers/eventually.js';

afterEach(() => {
  const waits = abandonWaits();
  if (waits.length > 0) throw new Error(waits.join('\n'));
});
