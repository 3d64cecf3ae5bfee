// Preloaded into a server under test (NODE_OPTIONS=--import): on SIGHUP a promise is rejected and
// nothing handles it, on SIGUSR2 an exception is thrown that nothing catches, as a bug would.
process.on('SIGHUP', () => {
  void Promise.reject(new Error('a stray rejection the test made'));
});
process.on('SIGUSR2', () => {
  setImmediate(() => {
    throw new Error('an uncaught exception the test made');
  });
});
