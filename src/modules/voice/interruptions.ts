import { InterruptionMode } from '../agents/agent.enums.js';
import type { VoiceConfig } from '../agents/agent.types.js';

/**
 * The back-channels of each language the gateway knows: what a listener says while the other
 * speaks, to show they follow ("mhm", "yeah", "right"), not to take the turn. Words and short
 * phrases; matched whole, case and punctuation aside ("Mm-hmm." is "mm hmm"). Chosen from the
 * continuers and acknowledgement tokens described for each language in conversation analysis;
 * "multi" takes them all, and a language not listed has none (set `ignore` for it).
 */
export const BACK_CHANNELS: Readonly<Record<string, readonly string[]>> = {
  en: [
    'mhm',
    'mm',
    'mmm',
    'hmm',
    'mm hmm',
    'uh huh',
    'uh',
    'um',
    'ah',
    'oh',
    'yeah',
    'yep',
    'yup',
    'yes',
    'okay',
    'ok',
    'right',
    'alright',
    'all right',
    'sure',
    'i see',
    'got it',
    'cool',
    'oh okay',
    'oh right',
  ],
  fr: ['mhm', 'mm', 'hum', 'euh', 'ah', 'oh', 'oui', 'ouais', 'ok', 'okay', "d'accord", 'voilà', 'je vois', 'ah oui', 'bien sûr', 'exactement', 'entendu'],
  de: ['mhm', 'mm', 'hm', 'äh', 'ah', 'oh', 'ja', 'jaja', 'ok', 'okay', 'genau', 'richtig', 'klar', 'aha', 'ach so', 'stimmt', 'gut', 'alles klar'],
  es: ['mhm', 'mm', 'eh', 'ah', 'oh', 'sí', 'si', 'ajá', 'ok', 'okay', 'vale', 'claro', 'ya', 'bueno', 'exacto', 'entiendo', 'de acuerdo', 'ya veo'],
};

/** The default back-channels of a BCP-47 tag (its primary subtag), or of every language for "multi". */
export function backChannelsFor(language: string | null | undefined): readonly string[] {
  const primary = (language ?? 'en').toLowerCase().split('-')[0]!;
  if (primary === 'multi') return [...new Set(Object.values(BACK_CHANNELS).flat())];
  return BACK_CHANNELS[primary] ?? [];
}

/** Lower-case words without punctuation: "Mm-hmm, okay." → ["mm", "hmm", "okay"] (an apostrophe inside a word is kept). */
export function wordsOf(text: string): string[] {
  return text
    .normalize('NFC')
    .toLocaleLowerCase()
    .replace(/[’‘]/gu, "'")
    .replace(/[^\p{L}\p{N}'\s]+/gu, ' ')
    .split(/\s+/u)
    .map((word) => word.replace(/^'+|'+$/gu, ''))
    .filter(Boolean);
}

/** The effective settings of an agent: its voiceConfig.interruptions with the defaults. */
export interface InterruptionSettings {
  mode: InterruptionMode;
  minWords: number;
  minSpeechMs: number;
  ignore: readonly string[];
}

export function interruptionSettings(voice: Pick<VoiceConfig, 'interruptions' | 'language'> | null | undefined): InterruptionSettings {
  const given = voice?.interruptions;
  return {
    mode: given?.mode ?? InterruptionMode.words,
    minWords: given?.minWords ?? 1,
    minSpeechMs: given?.minSpeechMs ?? 0,
    ignore: given?.ignore ?? backChannelsFor(voice?.language),
  };
}

/**
 * What the caller says over the agent does to its reply: `cuts` it (a real interruption), or not;
 * a turn made only of back-channels is `backChannel`: stored as the caller's, marked, never answered.
 */
export class InterruptionRules {
  readonly mode: InterruptionMode;
  private readonly settings: InterruptionSettings;
  /** The ignore list as word sequences, longest first (so "oh okay" is matched before "oh"). */
  private readonly phrases: string[][];

  constructor(settings: InterruptionSettings) {
    this.settings = settings;
    this.mode = settings.mode;
    this.phrases = settings.ignore
      .map(wordsOf)
      .filter((phrase) => phrase.length > 0)
      .sort((a, b) => b.length - a.length);
  }

  /** The least speech (ms) that may cut the reply in mode words. */
  get minSpeechMs(): number {
    return this.settings.minSpeechMs;
  }

  /** The words of `text` that are not back-channels (how many of them). */
  meaningfulWords(text: string): number {
    const words = wordsOf(text);
    let count = 0;
    for (let at = 0; at < words.length;) {
      const phrase = this.phrases.find((each) => each.every((word, offset) => words[at + offset] === word));
      if (phrase) at += phrase.length;
      else {
        count += 1;
        at += 1;
      }
    }
    return count;
  }

  /** Whether `text`, said over the agent for `speechMs` of the caller's audio, cuts the reply. */
  cuts(text: string, speechMs: number): boolean {
    switch (this.mode) {
      case InterruptionMode.never:
        return false;
      case InterruptionMode.any:
        return wordsOf(text).length > 0;
      case InterruptionMode.words:
        return speechMs >= this.settings.minSpeechMs && this.meaningfulWords(text) >= this.settings.minWords;
    }
  }

  /** Whether `text` is words, all of them back-channels (never in mode any: there every word is a turn). */
  backChannel(text: string): boolean {
    return this.mode !== InterruptionMode.any && wordsOf(text).length > 0 && this.meaningfulWords(text) === 0;
  }
}
