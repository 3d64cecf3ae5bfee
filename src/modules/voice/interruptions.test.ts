import { InterruptionMode } from '../agents/agent.enums.js';
import type { Interruptions } from '../agents/agent.types.js';
import { backChannelsFor, InterruptionRules, interruptionSettings, wordsOf } from './interruptions.js';

const rules = (interruptions: Interruptions | null, language = 'en-US') => new InterruptionRules(interruptionSettings({ interruptions, language }));

describe('wordsOf', () => {
  it('reads words case and punctuation aside, hyphens as spaces, apostrophes inside words kept', () => {
    expect(wordsOf('Mm-hmm, okay.')).toEqual(['mm', 'hmm', 'okay']);
    expect(wordsOf("D’accord… 'oui'")).toEqual(["d'accord", 'oui']);
    expect(wordsOf('  ?! ')).toEqual([]);
  });
});

describe('InterruptionRules', () => {
  it('by default (mode words, the language’s list) a back-channel does not cut, a real word does', () => {
    const english = rules(null);
    for (const said of ['Mhm.', 'Yeah.', 'Okay', 'Right!', 'Uh-huh', 'yeah yeah', 'Oh, okay.', 'I see.']) {
      expect(english.cuts(said, 400)).toBe(false);
      expect(english.backChannel(said)).toBe(true);
    }
    for (const said of ['Wait', 'Stop, I want to', 'yeah but no', 'Okay so what about Monday']) {
      expect(english.cuts(said, 0)).toBe(true);
      expect(english.backChannel(said)).toBe(false);
    }
    expect(english.backChannel('')).toBe(false);
  });

  it('counts minWords of words outside the list, and minSpeechMs of the caller’s speech', () => {
    const patient = rules({ mode: InterruptionMode.words, minWords: 2, minSpeechMs: 300, ignore: null });
    expect(patient.cuts('wait', 1000)).toBe(false);
    expect(patient.backChannel('wait')).toBe(false);
    expect(patient.cuts('yeah wait', 1000)).toBe(false);
    expect(patient.cuts('wait stop', 200)).toBe(false);
    expect(patient.cuts('wait stop', 300)).toBe(true);
  });

  it('takes the agent’s own list instead of the language’s, phrases included', () => {
    const own = rules({ mode: InterruptionMode.words, minWords: 1, minSpeechMs: 0, ignore: ['Sounds good', 'bien'] });
    expect(own.backChannel('Sounds good!')).toBe(true);
    expect(own.backChannel('bien')).toBe(true);
    expect(own.cuts('yeah', 0)).toBe(true);
    expect(own.cuts('sounds', 0)).toBe(true);
  });

  it('mode any cuts on every word and has no back-channels; mode never cuts on nothing', () => {
    const any = rules({ mode: InterruptionMode.any, minWords: 3, minSpeechMs: 2000, ignore: null });
    expect(any.cuts('mhm', 0)).toBe(true);
    expect(any.backChannel('mhm')).toBe(false);
    expect(any.cuts('  ', 0)).toBe(false);
    const never = rules({ mode: InterruptionMode.never, minWords: 1, minSpeechMs: 0, ignore: null });
    expect(never.cuts('stop stop stop, wait', 5000)).toBe(false);
    expect(never.backChannel('mhm')).toBe(true);
    expect(never.backChannel('stop')).toBe(false);
  });

  it('has a list for en, fr, de and es, all of them for multi, none for another language', () => {
    expect(rules(null, 'fr-FR').backChannel('Ouais, d’accord.')).toBe(true);
    expect(rules(null, 'de').backChannel('Ja, genau.')).toBe(true);
    expect(rules(null, 'es-MX').backChannel('Sí, claro.')).toBe(true);
    expect(rules(null, 'multi').backChannel('ja okay oui')).toBe(true);
    expect(backChannelsFor('ja')).toEqual([]);
    expect(rules(null, 'ja').cuts('はい', 0)).toBe(true);
    expect(backChannelsFor(null)).toContain('mhm');
  });
});
