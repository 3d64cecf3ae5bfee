import { RequestContext } from '@mikro-orm/core';
import { createSourceEventStream, execute, GraphQLError, type ExecutionArgs, type ExecutionResult } from 'graphql';
import type { Actor } from '../../../common/actor.js';
import type { Database } from '../../../db/orm.js';
import type { GraphQLContext, GraphQLLoaders } from '../../../graphql/context.js';
import { AnswerBudget, answerTooLarge, withAnswerBudget } from '../../../platform/answer-budget.js';
import type { OrganizationGate } from '../../../platform/organization-gate.js';
import type { Services } from '../../../services.js';

export interface EventAnswerOptions {
  database: Database;
  services: Services;
  loaders: (services: Services, actor: Actor) => GraphQLLoaders;
  /** RESPONSE_MAX_BYTES: each event's answer is held to it, as an HTTP answer is. */
  responseMaxBytes: number;
  /** The HTTP doors' organization gate; undefined when CONCURRENCY_PER_ORG is 0. */
  gate?: OrganizationGate;
}

/** graphql-ws's `subscribe` for the gateway: each event answered as below, in a request context of its own. */
export function eventAnswers(options: EventAnswerOptions) {
  const { database, services } = options;
  const em = database.orm.em;

  /**
   * One event's answer, held to what an HTTP answer is held to: it runs in a request context of its own
   * with its own AnswerBudget (RESPONSE_MAX_BYTES) and abort signal, in one of its organization's places
   * in the gate. Over the limit, while it is built (the budget) or once it is (its serialized size), the
   * event is the HTTP door's refusal alone, BAD_USER_INPUT and no data, and the organization is weighed
   * with what it built; the subscription stays open for the next event.
   */
  async function answer(args: ExecutionArgs, rootValue: unknown): Promise<ExecutionResult> {
    const context = args.contextValue as GraphQLContext;
    const organizationId = context.actor!.organizationId;
    const gate = options.gate;
    if (gate) await new Promise<void>((resolve) => gate.admit(organizationId, resolve));
    const budget = new AnswerBudget(options.responseMaxBytes);
    const controller = new AbortController();
    let weighed = false;
    budget.onExceeded((refusal, chargedBytes) => {
      weighed = true;
      gate?.weigh(organizationId, chargedBytes);
      controller.abort(refusal);
    });
    let answerBytes: number | undefined;
    try {
      const result = await RequestContext.create(
        em,
        () =>
          withAnswerBudget(budget, async () => {
            context.loaders = options.loaders(services, context.actor!);
            context.signal = controller.signal;
            context.answerBudget = budget;
            return execute({ ...args, rootValue });
          }),
        database.abortOptions(controller.signal),
      );
      let refusal = budget.exceeded;
      if (!refusal) {
        answerBytes = Buffer.byteLength(JSON.stringify(result));
        if (answerBytes > options.responseMaxBytes) refusal = answerTooLarge(answerBytes, options.responseMaxBytes);
      }
      if (!refusal) return result;
      return { errors: [new GraphQLError(refusal.message, { extensions: { code: refusal.code } })] };
    } finally {
      gate?.leave(organizationId, weighed ? undefined : Math.max(answerBytes ?? 0, budget.charged));
    }
  }

  return (args: ExecutionArgs) => subscribeInContext(em, args, (rootValue) => answer(args, rootValue));
}

/**
 * graphql-js's subscribe, with each step in its own request context: the subscribe resolver (the
 * checks) in one, and each event's answer (`answer`: the reload, relations through fresh DataLoaders)
 * in a new one, so an event never reads another's identity map. Ending the stream (`return`) ends the
 * source at once, even while it waits for an event.
 */
async function subscribeInContext(
  em: Database['orm']['em'],
  args: ExecutionArgs,
  answer: (rootValue: unknown) => Promise<ExecutionResult>,
): Promise<AsyncGenerator<ExecutionResult> | ExecutionResult> {
  const source = await RequestContext.create(em, () => createSourceEventStream(args));
  if (!(Symbol.asyncIterator in Object(source))) return source as ExecutionResult;
  const iterator = (source as AsyncIterable<unknown>)[Symbol.asyncIterator]();
  const mapped = {
    async next(): Promise<IteratorResult<ExecutionResult>> {
      const item = await iterator.next();
      if (item.done) return { value: undefined, done: true };
      return { value: await answer(item.value), done: false };
    },
    async return(): Promise<IteratorResult<ExecutionResult>> {
      await iterator.return?.();
      return { value: undefined, done: true };
    },
    async throw(error: unknown): Promise<IteratorResult<ExecutionResult>> {
      await iterator.return?.();
      throw error;
    },
    [Symbol.asyncIterator]() {
      return this;
    },
  };
  return mapped as unknown as AsyncGenerator<ExecutionResult>;
}
