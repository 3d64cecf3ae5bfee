import { MEDIA_LIMITS, MediaRate } from './media-limits.js';

describe('MediaRate', () => {
  const limits = { messagesPerSecond: 50, bytesPerSecond: 1000, burstSeconds: 2 };

  it('takes a burst of burstSeconds at once, then what the rates give back as time passes', () => {
    const rate = new MediaRate(limits, 0);
    for (let i = 0; i < 100; i++) expect(rate.take(1, 0)).toBe(true);
    expect(rate.take(1, 0)).toBe(false);
    // 20 ms gives one message back.
    expect(rate.take(1, 20)).toBe(true);
    expect(rate.take(1, 20)).toBe(false);
    // A stream at the rate is never cut, however long it lasts.
    for (let ms = 40; ms < 60_000; ms += 20) expect(rate.take(10, ms)).toBe(true);
  });

  it('counts bytes too: big messages run out before many small ones would', () => {
    const rate = new MediaRate(limits, 0);
    expect(rate.take(1500, 0)).toBe(true);
    expect(rate.take(600, 0)).toBe(false);
    expect(rate.take(500, 0)).toBe(true);
    expect(rate.take(1, 0)).toBe(false);
    expect(rate.take(1000, 1000)).toBe(true);
  });

  it('fills no more than the burst, and a clock that goes back gives nothing', () => {
    const rate = new MediaRate(limits, 0);
    for (let i = 0; i < 100; i++) rate.take(1, 3_600_000);
    expect(rate.take(1, 3_600_000)).toBe(false);
    expect(rate.take(1, 0)).toBe(false);
  });

  it('allows Twilio’s 50 frames a second with room for its other messages', () => {
    expect(MEDIA_LIMITS.messagesPerSecond).toBeGreaterThan(50);
    expect(MEDIA_LIMITS.bytesPerSecond).toBeGreaterThan(50 * 320);
  });
});
