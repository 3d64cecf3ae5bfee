import { AppError } from '../common/errors.js';
import {
  AnswerBudget,
  answerTooLarge,
  chargeAnswer,
  chargeAnswerBytes,
  currentAnswerBudget,
  isLargeValue,
  LARGE_VALUE,
  withAnswerBudget,
} from './answer-budget.js';

const refusal = (bytes: number, max: number) => `The answer would be at least ${bytes} bytes, over the limit of ${max}; ask for fewer rows or fields`;

describe('AnswerBudget', () => {
  it('adds up what is charged and allows an answer exactly at the limit', () => {
    const budget = new AnswerBudget(10);
    budget.charge(4);
    budget.charge(6);
    expect(budget.charged).toBe(10);
    expect(budget.exceeded).toBeUndefined();
  });

  it('throws BAD_USER_INPUT naming what was charged once past the limit, and again on every charge after', () => {
    const budget = new AnswerBudget(10);
    budget.charge(8);
    let thrown: unknown;
    try {
      budget.charge(3);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(AppError);
    expect(thrown).toMatchObject({ code: 'BAD_USER_INPUT', status: 400, message: refusal(11, 10) });
    expect(budget.exceeded).toBe(thrown);
    expect(() => budget.charge(0)).toThrow(thrown as AppError);
    expect(budget.charged).toBe(11);
  });

  it('tells its listeners once, with the refusal and the bytes charged', () => {
    const budget = new AnswerBudget(5);
    const heard: [string, number][] = [];
    budget.onExceeded((error, bytes) => heard.push([error.message, bytes]));
    budget.onExceeded((_error, bytes) => heard.push(['second', bytes]));
    budget.charge(5);
    expect(heard).toEqual([]);
    expect(() => budget.charge(2)).toThrow(AppError);
    expect(() => budget.charge(2)).toThrow(AppError);
    expect(heard).toEqual([
      [refusal(7, 5), 7],
      ['second', 7],
    ]);
  });

  it('charges a string its length and nothing else anything', () => {
    const budget = new AnswerBudget(100);
    budget.chargeValue('héllo');
    budget.chargeValue(12345);
    budget.chargeValue(null);
    budget.chargeValue(undefined);
    budget.chargeValue({ length: 50 });
    expect(budget.charged).toBe(5);
    // Never more than the UTF-8 bytes the string takes in JSON: an answer within the limit is never refused.
    expect(budget.charged).toBeLessThanOrEqual(Buffer.byteLength(JSON.stringify('héllo')));
  });
});

describe('the request budget', () => {
  it('is the one the request runs with, and charges go to it', async () => {
    const budget = new AnswerBudget(100);
    expect(currentAnswerBudget()).toBeUndefined();
    await withAnswerBudget(budget, async () => {
      await Promise.resolve();
      expect(currentAnswerBudget()).toBe(budget);
      chargeAnswer('abc');
      await new Promise((resolve) => setTimeout(resolve, 1));
      chargeAnswer('de');
      chargeAnswerBytes(10);
    });
    expect(budget.charged).toBe(15);
    expect(currentAnswerBudget()).toBeUndefined();
  });

  it('answers what the run answers, and throws from the charge that passes the limit', () => {
    const budget = new AnswerBudget(3);
    expect(withAnswerBudget(budget, () => 'answer')).toBe('answer');
    expect(() => withAnswerBudget(budget, () => chargeAnswer('four'))).toThrow(refusal(4, 3));
    expect(() => withAnswerBudget(new AnswerBudget(3), () => chargeAnswerBytes(4))).toThrow(refusal(4, 3));
  });

  it('charges nothing outside a request (the CLI, the campaign runner)', () => {
    expect(() => chargeAnswer('x'.repeat(10_000_000))).not.toThrow();
    expect(() => chargeAnswerBytes(10_000_000)).not.toThrow();
  });
});

describe('the refusal and the mark', () => {
  it('names the whole size when the whole answer was measured', () => {
    const error = answerTooLarge(2048, 1024);
    expect(error).toMatchObject({ code: 'BAD_USER_INPUT', message: 'The answer would be 2048 bytes, over the limit of 1024; ask for fewer rows or fields' });
    expect(answerTooLarge(2048, 1024, true).message).toBe(refusal(2048, 1024));
  });

  it('recognizes a field marked LARGE_VALUE and only that', () => {
    expect(isLargeValue(LARGE_VALUE)).toBe(true);
    expect(isLargeValue({ ...LARGE_VALUE, cost: { base: 1 } })).toBe(true);
    expect(isLargeValue({ largeValue: 'yes' })).toBe(false);
    expect(isLargeValue({})).toBe(false);
    expect(isLargeValue(null)).toBe(false);
    expect(isLargeValue(undefined)).toBe(false);
  });
});
