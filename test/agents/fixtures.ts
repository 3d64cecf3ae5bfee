import type { AppError } from '../../src/common/errors.js';
import type { GenerateRequest, ModelPort } from '../../src/modules/agents/agent.ports.js';
import type { GraphQLResult } from '../helpers/clients.js';
import type { RestResponse } from '../helpers/clients.js';
import type { TestApp } from '../helpers/app.js';

/** A policy no reply, list or record may ever show. */
export const POLICY = 'POLICY-7f3a9c: never offer refunds above 50 euros, escalate to tier two';

export function agentInput(overrides: Record<string, unknown> = {}) {
  return { name: 'Support', instructions: 'You help customers.', modelConfig: { model: 'builtin/echo' }, ...overrides };
}

export interface ModelProbe {
  /** Every request the agents' model received, in order. */
  requests: GenerateRequest[];
  /** The next generate call throws this error instead of answering. */
  failNext(error: AppError): void;
  /** The next generate calls answer these texts, in order, instead of the model. */
  answerNext(...texts: string[]): void;
  /** The next generate call waits until the returned function is called. */
  holdNext(): () => void;
}

/**
 * Records what the agents' model receives, whatever model the services were built with (the
 * stand-in on this branch, the real ModelService after merge).
 */
export function probeModel(app: TestApp): ModelProbe {
  const model = app.gateway.services.agentPorts.model as ModelPort;
  const original = model.generate.bind(model);
  const requests: GenerateRequest[] = [];
  let failure: AppError | null = null;
  let hold: Promise<void> | null = null;
  const answers: string[] = [];
  model.generate = async (request) => {
    requests.push(request);
    if (hold) {
      const held = hold;
      hold = null;
      await held;
    }
    if (failure) {
      const error = failure;
      failure = null;
      throw error;
    }
    const answer = answers.shift();
    if (answer !== undefined) return { text: answer, usage: { inputTokens: 1, outputTokens: 1, totalTokens: 2, model: request.model } };
    return original(request);
  };
  const holdNext = () => {
    let release!: () => void;
    hold = new Promise((resolve) => (release = resolve));
    return release;
  };
  return { requests, failNext: (error) => (failure = error), answerNext: (...texts) => answers.push(...texts), holdNext };
}

/** The field names of a REST 400 and of a GraphQL BAD_USER_INPUT, which must be the same. */
export function restFields(res: RestResponse): string[] {
  expect(res.status).toBe(400);
  expect(res.body.code).toBe('BAD_USER_INPUT');
  return (res.body.errors ?? []).map((error: { field: string }) => error.field);
}

export function graphqlFields(result: GraphQLResult<unknown>): string[] {
  expect(result.errors?.[0]?.extensions.code).toBe('BAD_USER_INPUT');
  return (result.errors?.[0]?.extensions.errors ?? []).map((error) => error.field);
}

export function graphqlCode(result: GraphQLResult<unknown>): string | undefined {
  return result.errors?.[0]?.extensions.code;
}
