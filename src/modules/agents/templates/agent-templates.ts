import { AppError, type FieldError } from '../../../common/errors.js';
import type { AgentVariable, AgentVariableInput } from './agent-variable.types.js';
import { RESERVED_ROOTS, checkTemplate } from './template-language.js';
import { localTime, undeclaredVariables, type CallContext, resolveVariables, type VariableSources } from './call-context.js';

/** The template fields of an agent, as sent (undefined: not sent). */
export interface TemplateFields {
  instructions?: string;
  policy?: string | null;
  firstMessage?: string | null;
  variables?: AgentVariableInput[];
}

/**
 * The sent templates parse and keep to the language's limits, and the declared variables have
 * names of their own: 400 naming each field (and where in a template) on both doors.
 */
export function assertTemplates(input: TemplateFields): void {
  const errors: FieldError[] = [];
  for (const field of ['instructions', 'policy', 'firstMessage'] as const) {
    const text = input[field];
    if (typeof text === 'string') errors.push(...checkTemplate(field, text).errors);
  }
  const seen = new Set<string>();
  (input.variables ?? []).forEach((variable, index) => {
    if (RESERVED_ROOTS.has(variable.name)) errors.push({ field: `variables.${index}.name`, message: `${variable.name} is a reserved name: choose another` });
    else if (seen.has(variable.name)) errors.push({ field: `variables.${index}.name`, message: `the variable ${variable.name} is declared twice` });
    seen.add(variable.name);
  });
  if (errors.length > 0) throw AppError.badInput(errors);
}

export function toVariables(input: AgentVariableInput[] | undefined): AgentVariable[] {
  return (input ?? []).map((variable) => ({ name: variable.name, default: variable.default ?? null, description: variable.description ?? null }));
}

type TemplatedAgent = Parameters<typeof undeclaredVariables>[0];

/** Activation: every name the templates use is a declared variable (409 naming the others, which could never have a default). */
export function assertDeclared(agent: TemplatedAgent): void {
  const undeclared = undeclaredVariables(agent);
  if (undeclared.length === 0) return;
  throw new AppError(
    'CONFLICT',
    `The agent's templates use ${undeclared.map((name) => `{{${name}}}`).join(', ')}, which ${undeclared.length === 1 ? 'is' : 'are'} not among its variables: declare ${undeclared.length === 1 ? 'it' : 'them'} (variables: [{name, default?}]) or remove ${undeclared.length === 1 ? 'it' : 'them'}`,
    undeclared.map((name) => ({ field: `variables.${name}`, message: `{{${name}}} is used by the agent's templates and is not declared` })),
  );
}

/** The errors of variables with no value and no default, one per variable (field `variables.<name>`). */
export function missingErrors(missing: string[], where: string): FieldError[] {
  return missing.map((name) => ({ field: `variables.${name}`, message: `{{${name}}} has no value ${where} and no default` }));
}

/** The values of a typed conversation or a test message: 400 naming every variable without one. */
export function variablesOrRefuse(agent: TemplatedAgent, sources: VariableSources): Record<string, string> {
  const { values, missing } = resolveVariables(agent, sources);
  if (missing.length > 0) throw AppError.badInput(missingErrors(missing, 'given (variables)'));
  return values;
}

/** A typed conversation's (or a test message's) context: no call, no contact, no program. */
export function typedContext(
  agent: TemplatedAgent & { id: string; name: string },
  organizationName: string,
  variables: Record<string, string>,
  conversationId: string | null,
  at = new Date(),
): CallContext {
  return {
    agentId: agent.id,
    conversationId,
    call: null,
    contact: null,
    program: null,
    executionId: null,
    organization: { name: organizationName },
    agent: { name: agent.name },
    variables,
    now: at.toISOString(),
    localTime: localTime(at, null),
  };
}
