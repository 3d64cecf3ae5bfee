import { parseNote } from '../event-bus.js';
import { LiveStream } from './live-feed.js';

describe('LiveStream', () => {
  it('hands what was pushed in order, queued or awaited', async () => {
    const stream = new LiveStream<number>(() => undefined);
    stream.push(1);
    stream.push(2);
    expect(await stream.next()).toEqual({ value: 1, done: false });
    expect(await stream.next()).toEqual({ value: 2, done: false });
    const waiting = stream.next();
    stream.push(3);
    expect(await waiting).toEqual({ value: 3, done: false });
  });

  it('return() ends a consumer that is waiting at once, and tells its owner once', async () => {
    let closed = 0;
    const stream = new LiveStream<number>(() => (closed += 1));
    const waiting = stream.next();
    await stream.return();
    expect(await waiting).toEqual({ value: undefined, done: true });
    await stream.return();
    stream.push(4);
    expect(await stream.next()).toEqual({ value: undefined, done: true });
    expect(closed).toBe(1);
  });

  it('cuts off a consumer that falls more than its bound behind, after what it queued', async () => {
    let closed = 0;
    const stream = new LiveStream<number>(() => (closed += 1), 2);
    stream.push(1);
    stream.push(2);
    stream.push(3);
    expect(closed).toBe(1);
    expect(await stream.next()).toEqual({ value: 1, done: false });
    expect(await stream.next()).toEqual({ value: 2, done: false });
    await expect(stream.next()).rejects.toMatchObject({ code: 'UNAVAILABLE' });
    expect(await stream.next()).toEqual({ value: undefined, done: true });
  });

  it('fail() rejects a consumer that is waiting', async () => {
    const stream = new LiveStream<number>(() => undefined);
    const waiting = stream.next();
    stream.fail(new Error('gone'));
    await expect(waiting).rejects.toThrow('gone');
  });
});

describe('parseNote', () => {
  it('reads what the events_notify trigger sends and nothing else', () => {
    const note = { id: 'a', organizationId: 'o', type: 'call.ended', createdAt: '2026-11-22T20:00:00.123456+00:00' };
    expect(parseNote(JSON.stringify(note))).toEqual(note);
    expect(parseNote(JSON.stringify({ ...note, payload: { secret: 1 } }))).toEqual(note);
    expect(parseNote(JSON.stringify({ id: 'a', type: 'x' }))).toBeNull();
    expect(parseNote('not json')).toBeNull();
    expect(parseNote('')).toBeNull();
    expect(parseNote(undefined)).toBeNull();
  });
});
