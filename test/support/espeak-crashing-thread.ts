// The builtin voice's thread with a fault on demand (test/voice/builtin-voice.test.ts): it dies on
// an utterance holding CRASH-ONCE when it is the first thread started, and on one holding POISON
// always; anything else it hands to the real thread's code, loaded after this listener.
import { parentPort, workerData } from 'node:worker_threads';

const start = (workerData as { start: number }).start;
parentPort!.on('message', (request: { text: string }) => {
  if (request.text.includes('POISON') || (request.text.includes('CRASH-ONCE') && start === 1)) process.exit(3);
});
await import(new URL('../../src/modules/voice/streaming/espeak-thread.ts', import.meta.url).href);
