/**
 * What one media stream may send and leave unread. Twilio sends the caller's audio as 8 kHz μ-law in
 * 20 ms frames: 50 `media` messages a second of 160 bytes of audio each (about 300 bytes of JSON),
 * besides a few `mark`, `dtmf`, `start` and `stop` messages.
 */
export const MEDIA_LIMITS = {
  /** Messages a second: the 50 frames and 10 for the rest. */
  messagesPerSecond: 60,
  /** Bytes a second: the frames' 15 KiB or so of JSON, twice over. */
  bytesPerSecond: 32 * 1024,
  /** What may arrive at once ahead of those rates: 10 s of them (a network hiccup delivers frames in a bunch). */
  burstSeconds: 10,
  /** Bytes written to a stream and not yet taken by its socket before it is cut, as SSE_MAX_BUFFERED_BYTES cuts an SSE stream. */
  maxBufferedBytes: 1_048_576,
};

export type MediaLimits = typeof MEDIA_LIMITS;

/**
 * Two token buckets, of messages and of bytes, each filled at its rate up to `burstSeconds` of it;
 * a message takes one token and its size in bytes. `take` answers false once a stream sends faster
 * than that for longer than the burst: the stream is then cut.
 */
export class MediaRate {
  private messages: number;
  private bytes: number;
  private at: number;

  constructor(
    private readonly limits: Pick<MediaLimits, 'messagesPerSecond' | 'bytesPerSecond' | 'burstSeconds'>,
    now: number,
  ) {
    this.messages = limits.messagesPerSecond * limits.burstSeconds;
    this.bytes = limits.bytesPerSecond * limits.burstSeconds;
    this.at = now;
  }

  /** Takes one message of `size` bytes at `now` (ms); false when either bucket has not enough left (nothing is taken then). */
  take(size: number, now: number): boolean {
    const seconds = Math.max(0, now - this.at) / 1000;
    this.at = Math.max(this.at, now);
    const { messagesPerSecond, bytesPerSecond, burstSeconds } = this.limits;
    this.messages = Math.min(messagesPerSecond * burstSeconds, this.messages + seconds * messagesPerSecond);
    this.bytes = Math.min(bytesPerSecond * burstSeconds, this.bytes + seconds * bytesPerSecond);
    if (this.messages < 1 || this.bytes < size) return false;
    this.messages -= 1;
    this.bytes -= size;
    return true;
  }
}
