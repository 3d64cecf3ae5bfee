import { closeAfter } from './close-after.js';

describe('closeAfter', () => {
  it('closes once the writes are done, not before', async () => {
    let finish!: () => void;
    const written = new Promise<void>((resolve) => (finish = resolve));
    let closed = false;
    const closing = closeAfter(written, () => (closed = true), 10_000);
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(closed).toBe(false);
    finish();
    await closing;
    expect(closed).toBe(true);
  });

  it('closes after a failed write too', async () => {
    let closed = false;
    await closeAfter(Promise.reject(new Error('lost database')), () => (closed = true), 10_000);
    expect(closed).toBe(true);
  });

  it('closes after the wait when the writes never end', async () => {
    let closed = false;
    const started = Date.now();
    await closeAfter(new Promise(() => {}), () => (closed = true), 50);
    expect(closed).toBe(true);
    expect(Date.now() - started).toBeGreaterThanOrEqual(45);
  });
});
