// The AudioWorklet of the talk page and the widget (served as /talk/worklet.js): the microphone
// low-passed and resampled to 8 kHz and encoded as G.711 μ-law in 20 ms frames, and the agent's μ-law decoded and
// resampled to the context's rate for the speakers, with the marks echoed as the audio before them
// has played (or at once on a clear), as a carrier does. Plain browser JavaScript, kept as a string.
export const TALK_WORKLET_JS = `'use strict';
const RATE = 8000;
const FRAME = 160;
const BIAS = 0x84;
const CLIP = 32635;
function encode(pcm) {
  const sign = (pcm >> 8) & 0x80;
  if (sign) pcm = -pcm;
  if (pcm > CLIP) pcm = CLIP;
  pcm += BIAS;
  let exponent = 7;
  for (let mask = 0x4000; (pcm & mask) === 0 && exponent > 0; exponent--, mask >>= 1);
  const mantissa = (pcm >> (exponent + 3)) & 0x0f;
  return ~(sign | (exponent << 4) | mantissa) & 0xff;
}
function decode(value) {
  const u = ~value & 0xff;
  const exponent = (u >> 4) & 7;
  const sample = ((((u & 0x0f) << 3) + BIAS) << exponent) - BIAS;
  return ((u & 0x80) ? -sample : sample) / 32768;
}
/** A windowed-sinc low-pass (Blackman) at 3.6 kHz for the context's rate: the resampler's anti-aliasing filter. */
function lowPass(rate) {
  const length = 2 * Math.ceil((rate / RATE) * 4) + 1;
  const cutoff = 3600 / rate;
  const middle = (length - 1) / 2;
  const taps = new Float32Array(length);
  let sum = 0;
  for (let n = 0; n < length; n++) {
    const x = n - middle;
    const sinc = x === 0 ? 2 * cutoff : Math.sin(2 * Math.PI * cutoff * x) / (Math.PI * x);
    const window = 0.42 - 0.5 * Math.cos((2 * Math.PI * n) / (length - 1)) + 0.08 * Math.cos((4 * Math.PI * n) / (length - 1));
    taps[n] = sinc * window;
    sum += taps[n];
  }
  for (let n = 0; n < length; n++) taps[n] /= sum;
  return taps;
}
class TalkCapture extends AudioWorkletProcessor {
  constructor() {
    super();
    this.step = sampleRate / RATE;
    this.taps = lowPass(sampleRate);
    this.history = new Float32Array(this.taps.length);
    this.head = 0;
    this.position = 0;
    this.previous = 0;
    this.frame = new Uint8Array(FRAME);
    this.length = 0;
  }
  /** The next input sample, filtered. */
  filter(sample) {
    const { taps, history } = this;
    history[this.head] = sample;
    this.head = (this.head + 1) % history.length;
    let value = 0;
    for (let k = 0, i = this.head; k < taps.length; k++, i = (i + 1) % history.length) value += taps[k] * history[i];
    return value;
  }
  process(inputs) {
    const input = inputs[0] && inputs[0][0];
    if (!input) return true;
    for (let i = 0; i < input.length; i++) {
      const current = this.filter(input[i]);
      this.position += 1;
      // Each 8 kHz sample lies between the last two filtered input samples: interpolated there.
      if (this.position >= this.step) {
        this.position -= this.step;
        const value = Math.max(-1, Math.min(1, current - (current - this.previous) * this.position));
        this.frame[this.length++] = encode(Math.round(value * 32767));
        if (this.length === FRAME) {
          this.port.postMessage(this.frame.buffer, [this.frame.buffer]);
          this.frame = new Uint8Array(FRAME);
          this.length = 0;
        }
      }
      this.previous = current;
    }
    return true;
  }
}
class TalkPlayback extends AudioWorkletProcessor {
  constructor() {
    super();
    this.queue = [];
    this.current = null;
    this.offset = 0;
    this.step = RATE / sampleRate;
    this.port.onmessage = (event) => {
      const message = event.data;
      if (message.clear) {
        const marks = this.queue.filter((item) => item.mark !== undefined);
        this.queue = [];
        this.current = null;
        for (const item of marks) this.port.postMessage({ mark: item.mark });
      } else if (message.mark !== undefined) this.queue.push({ mark: message.mark });
      else if (message.audio) this.queue.push({ audio: Float32Array.from(message.audio, decode) });
    };
  }
  process(_inputs, outputs) {
    const channels = outputs[0];
    const out = channels[0];
    for (let i = 0; i < out.length; i++) {
      while (!this.current && this.queue.length > 0) {
        const item = this.queue.shift();
        if (item.mark !== undefined) this.port.postMessage({ mark: item.mark });
        else {
          this.current = item.audio;
          this.offset = 0;
        }
      }
      if (!this.current) {
        out[i] = 0;
        continue;
      }
      const index = this.offset | 0;
      const a = this.current[index];
      const b = index + 1 < this.current.length ? this.current[index + 1] : a;
      out[i] = a + (b - a) * (this.offset - index);
      this.offset += this.step;
      if (this.offset >= this.current.length) {
        this.port.postMessage({ played: this.current.length / RATE * 1000 });
        this.current = null;
      }
    }
    for (let c = 1; c < channels.length; c++) channels[c].set(out);
    return true;
  }
}
registerProcessor('talk-capture', TalkCapture);
registerProcessor('talk-playback', TalkPlayback);
`;
