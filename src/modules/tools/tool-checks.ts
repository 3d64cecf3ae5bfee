import { AppError, type FieldError } from '../../common/errors.js';
import { checkTenantSchema } from '../../common/tenant-schema-ajv.js';
import { outboundUrlProblem } from '../webhooks/webhook-address.js';
import { MAX_PARAMETERS_CHARS, RESERVED_HEADERS, TOOL_SCHEMA_LIMITS, toolNameProblem } from './tool-limits.js';
import type { ToolHeaderInput } from './tool.inputs.js';

/** A tool's name as saved: 400 naming `name` when it is not one a model takes, or a built-in's. */
export function assertToolName(name: string): void {
  const problem = toolNameProblem(name);
  if (problem) throw AppError.badInput([{ field: 'name', message: `name ${problem}` }]);
}

/** Why a tool's (or an MCP tool's) parameters cannot be used, with the JSON Pointer where, or null. */
export async function parametersProblem(parameters: unknown): Promise<string | null> {
  if (!parameters || typeof parameters !== 'object' || Array.isArray(parameters)) return 'must be a JSON Schema object';
  if ((parameters as Record<string, unknown>).type !== 'object') return 'must be a schema of "type": "object" (the arguments are an object)';
  if (JSON.stringify(parameters).length > MAX_PARAMETERS_CHARS) return `is longer than ${MAX_PARAMETERS_CHARS} characters as JSON`;
  const problem = await checkTenantSchema(parameters, TOOL_SCHEMA_LIMITS);
  return problem ? `${problem.path ? `at ${problem.path} ` : ''}${problem.message}` : null;
}

/** The parameters as saved: the shared bounded check of tenants' schemas, with a tool's limits (400 naming `parameters`). */
export async function assertParameters(parameters: unknown): Promise<void> {
  const problem = await parametersProblem(parameters);
  if (problem) throw AppError.badInput([{ field: 'parameters', message: `parameters ${problem}` }]);
}

/** The headers as saved: no name twice, none the gateway sets itself. */
export function assertHeaders(headers: ToolHeaderInput[], field = 'headers'): void {
  const errors: FieldError[] = [];
  const seen = new Set<string>();
  headers.forEach((header, index) => {
    const name = header.name.toLowerCase();
    if (RESERVED_HEADERS.has(name)) errors.push({ field: `${field}.${index}.name`, message: `${header.name} is set by the gateway itself` });
    else if (seen.has(name)) errors.push({ field: `${field}.${index}.name`, message: `${header.name} is given twice` });
    seen.add(name);
  });
  if (errors.length > 0) throw AppError.badInput(errors);
}

/** The URL as saved, under the webhooks' address rules (the same one message for every refused address; the reason goes to the log). */
export async function assertToolUrl(raw: string, allowPrivate: boolean): Promise<void> {
  const problem = await outboundUrlProblem(raw, allowPrivate);
  if (!problem) return;
  const error = AppError.badInput([{ field: 'url', message: problem.message }]);
  throw problem.detail ? Object.assign(error, { logDetail: { field: 'url', reason: problem.detail } }) : error;
}
