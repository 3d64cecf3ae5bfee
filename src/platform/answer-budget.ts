import { AsyncLocalStorage } from 'node:async_hooks';
import { AppError } from '../common/errors.js';

/**
 * Marks a GraphQL field whose value no input limit bounds (a message, a passage, a reply): both
 * doors charge it to the request's answer budget as it goes into the answer (@Extensions(LARGE_VALUE)).
 * A document's text is charged by the knowledge service instead, by its stored size, before it is read.
 */
export const LARGE_VALUE = { largeValue: true } as const;

/** Whether a field's extensions carry the LARGE_VALUE mark. */
export function isLargeValue(extensions: Readonly<Record<string, unknown>> | null | undefined): boolean {
  return extensions?.largeValue === true;
}

/** The refusal of an answer over the limit; `atLeast` when only part of it was counted (the budget), not the whole body. */
export function answerTooLarge(bytes: number, maxBytes: number, atLeast = false): AppError {
  return new AppError(
    'BAD_USER_INPUT',
    `The answer would be ${atLeast ? 'at least ' : ''}${bytes} bytes, over the limit of ${maxBytes}; ask for fewer rows or fields`,
  );
}

/**
 * The bytes a request's answer may still take. Large values are charged as they go into the
 * answer, so a request that will be over the limit is refused before its answer is built and
 * serialized. A string is charged its length in UTF-16 code units: never more than its UTF-8
 * bytes in JSON (escapes only add), so an answer within the limit is never refused by the budget.
 */
export class AnswerBudget {
  private chargedBytes = 0;
  private refusal: AppError | undefined;
  private readonly listeners: ((error: AppError, chargedBytes: number) => void)[] = [];

  constructor(readonly maxBytes: number) {}

  get charged(): number {
    return this.chargedBytes;
  }

  /** The refusal once the budget is spent, else undefined. */
  get exceeded(): AppError | undefined {
    return this.refusal;
  }

  /** Called once, when the budget is first exceeded (the request is stopped, the organization weighed). */
  onExceeded(listener: (error: AppError, chargedBytes: number) => void): void {
    this.listeners.push(listener);
  }

  /** Adds `bytes`; throws the refusal (BAD_USER_INPUT) when the answer is over the limit, and on every charge after. */
  charge(bytes: number): void {
    if (this.refusal) throw this.refusal;
    this.chargedBytes += bytes;
    if (this.chargedBytes <= this.maxBytes) return;
    const refusal = answerTooLarge(this.chargedBytes, this.maxBytes, true);
    this.refusal = refusal;
    for (const listener of this.listeners) listener(refusal, this.chargedBytes);
    throw refusal;
  }

  /** Charges a value that goes into the answer: a string its length, anything else nothing. */
  chargeValue(value: unknown): void {
    if (typeof value === 'string') this.charge(value.length);
  }
}

const budgets = new AsyncLocalStorage<AnswerBudget>();

/** Runs `run` (the rest of the request) with `budget` as the request's answer budget. */
export function withAnswerBudget<T>(budget: AnswerBudget, run: () => T): T {
  return budgets.run(budget, run);
}

/** The answer budget of the request under way; undefined outside a request (the CLI, the campaign runner). */
export function currentAnswerBudget(): AnswerBudget | undefined {
  return budgets.getStore();
}

/** Charges `bytes` to the current request's budget, if there is one; throws when the answer is over the limit. */
export function chargeAnswerBytes(bytes: number): void {
  budgets.getStore()?.charge(bytes);
}

/** Charges a value to the current request's budget, if there is one; throws when the answer is over the limit. */
export function chargeAnswer(value: unknown): void {
  budgets.getStore()?.chargeValue(value);
}
