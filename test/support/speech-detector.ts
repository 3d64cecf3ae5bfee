// A small speech detector for 8 kHz recordings, to tell a voice from the builtin modem's tones (and
// from silence) without a recognizer: per 32 ms frame (256 samples), the energy inside the telephone
// band (300–3400 Hz), the pitch (autocorrelation peak between 70 and 400 Hz), and how much of the
// frame's energy sits in its two strongest frequency bins (two steady tones hold nearly all of it;
// speech spreads it over harmonics and formants).

const RATE = 8000;
const FRAME = 256;
/** Two tones (each over its three bins) hold this share of a frame's energy: the modem's symbols do; voiced speech, harmonics under formants, seldom. */
const TONE_SHARE = 0.98;
const COS = Float64Array.from({ length: FRAME }, (_, n) => Math.cos((2 * Math.PI * n) / FRAME));
const SIN = Float64Array.from({ length: FRAME }, (_, n) => Math.sin((2 * Math.PI * n) / FRAME));

function spectrum(frame: Float64Array): Float64Array {
  // A plain DFT of one windowed frame (256 × 128): small and dependency-free.
  const power = new Float64Array(FRAME / 2);
  for (let k = 0; k < FRAME / 2; k++) {
    let re = 0;
    let im = 0;
    for (let n = 0; n < FRAME; n++) {
      const turn = (k * n) % FRAME;
      re += frame[n]! * COS[turn]!;
      im -= frame[n]! * SIN[turn]!;
    }
    power[k] = re * re + im * im;
  }
  return power;
}

function pitchHz(frame: Float64Array): number | null {
  let energy = 0;
  for (const x of frame) energy += x * x;
  if (energy === 0) return null;
  let best = 0;
  let bestLag = 0;
  for (let lag = Math.floor(RATE / 400); lag <= Math.ceil(RATE / 70); lag++) {
    let sum = 0;
    for (let n = 0; n + lag < FRAME; n++) sum += frame[n]! * frame[n + lag]!;
    const normalized = sum / energy;
    if (normalized > best) {
      best = normalized;
      bestLag = lag;
    }
  }
  return best > 0.3 ? RATE / bestLag : null;
}

export interface SpeechReport {
  /** Frames louder than −45 dBFS. */
  loudFrames: number;
  /** Of the loud frames' energy, the share inside 300–3400 Hz. */
  bandShare: number;
  /** Of the loud frames, the share with a pitch between 70 and 400 Hz. */
  voicedShare: number;
  /** The median pitch of the voiced frames (Hz). */
  medianPitchHz: number | null;
  /** Of the loud frames, the share whose two strongest tones hold over 98 % of the energy (steady tones). */
  toneShare: number;
}

export function speechReport(samples: Int16Array): SpeechReport {
  const window = Float64Array.from({ length: FRAME }, (_, n) => 0.5 - 0.5 * Math.cos((2 * Math.PI * n) / (FRAME - 1)));
  const threshold = FRAME * (32768 * 10 ** (-45 / 20)) ** 2;
  let loud = 0;
  let voiced = 0;
  let tones = 0;
  let band = 0;
  let total = 0;
  const pitches: number[] = [];
  for (let start = 0; start + FRAME <= samples.length; start += FRAME) {
    const raw = Float64Array.from(samples.subarray(start, start + FRAME));
    let energy = 0;
    for (const x of raw) energy += x * x;
    if (energy < threshold) continue;
    loud += 1;
    const power = spectrum(raw.map((x, n) => x * window[n]!));
    let frameTotal = 0;
    let first = 0;
    let second = 0;
    power.forEach((p, k) => {
      frameTotal += p;
      const hz = (k * RATE) / FRAME;
      if (hz >= 300 && hz <= 3400) band += p;
      // Neighbouring bins belong to the same tone (the window spreads it over three).
      const around = p + (power[k - 1] ?? 0) + (power[k + 1] ?? 0);
      if (p >= (power[k - 1] ?? 0) && p >= (power[k + 1] ?? 0)) {
        if (around > first) {
          second = first;
          first = around;
        } else if (around > second) second = around;
      }
    });
    total += frameTotal;
    if (first + second > TONE_SHARE * frameTotal) tones += 1;
    const pitch = pitchHz(raw);
    if (pitch !== null) {
      voiced += 1;
      pitches.push(pitch);
    }
  }
  pitches.sort((a, b) => a - b);
  return {
    loudFrames: loud,
    bandShare: total === 0 ? 0 : band / total,
    voicedShare: loud === 0 ? 0 : voiced / loud,
    medianPitchHz: pitches.length === 0 ? null : pitches[Math.floor(pitches.length / 2)]!,
    toneShare: loud === 0 ? 0 : tones / loud,
  };
}

/** Speech, as the check reads it: energy in the telephone band, pitch present, no two steady tones. */
export function isSpeech(report: SpeechReport): boolean {
  return report.loudFrames >= 10 && report.bandShare > 0.6 && report.voicedShare > 0.3 && report.toneShare < 0.2;
}
