import { ConnectionLine, REQUESTS_IN_A_ROW } from './connection-line.js';

/** Queues `kinds` behind a holder, then releases turn by turn: the order the waiters got the connection in. */
async function order(kinds: ('request' | 'background')[]): Promise<string[]> {
  const line = new ConnectionLine();
  await line.acquire(false); // held by someone
  const served: string[] = [];
  const waiting = kinds.map((kind, index) => line.acquire(kind === 'request').then(() => served.push(`${kind[0]}${index}`)));
  for (let turn = 0; turn < kinds.length; turn++) {
    const before = served.length;
    line.release();
    await Promise.resolve();
    await Promise.resolve();
    expect(served.length).toBe(before + 1);
  }
  await Promise.all(waiting);
  return served;
}

describe('ConnectionLine', () => {
  it('serves a free connection at once, and frees it when nobody waits', async () => {
    const line = new ConnectionLine();
    await line.acquire(false);
    line.release();
    await line.acquire(true); // free again: resolves without a release
    expect(line.waiting).toEqual({ requests: 0, background: 0 });
  });

  it('serves requests before background work that queued earlier, each kind in its own order', async () => {
    expect(await order(['background', 'background', 'request', 'request'])).toEqual(['r2', 'r3', 'b0', 'b1']);
  });

  it(`gives background work a turn after ${REQUESTS_IN_A_ROW} requests in a row while it waits`, async () => {
    const kinds = ['background', ...Array.from({ length: REQUESTS_IN_A_ROW + 2 }, () => 'request' as const), 'background'] as ('request' | 'background')[];
    const served = await order(kinds);
    expect(served.slice(0, REQUESTS_IN_A_ROW + 1)).toEqual([...Array.from({ length: REQUESTS_IN_A_ROW }, (_, i) => `r${i + 1}`), 'b0']);
    expect(served.slice(REQUESTS_IN_A_ROW + 1)).toEqual([`r${REQUESTS_IN_A_ROW + 1}`, `r${REQUESTS_IN_A_ROW + 2}`, `b${REQUESTS_IN_A_ROW + 3}`]);
  });

  it('counts what waits, by kind', async () => {
    const line = new ConnectionLine();
    await line.acquire(true);
    void line.acquire(true);
    void line.acquire(false);
    void line.acquire(false);
    expect(line.waiting).toEqual({ requests: 1, background: 2 });
  });
});
