import { GraphQLError, type GraphQLFormattedError } from 'graphql';
import { ArgumentValidationError } from 'type-graphql';
import { AppError, type FieldError } from '../common/errors.js';
import { toAppError } from '../common/error-mapping.js';

/** Codes GraphQL itself produces before a resolver runs; they are kept as they are. */
const GRAPHQL_CODES = new Set(['GRAPHQL_PARSE_FAILED', 'GRAPHQL_VALIDATION_FAILED', 'BAD_USER_INPUT', 'PERSISTED_QUERY_NOT_FOUND', 'OPERATION_RESOLUTION_FAILURE', 'BAD_REQUEST']);

/** A variable of the wrong type: `Variable "$input" got invalid value 5 at "input.name"; ...`. */
function variableFieldError(message: string): FieldError[] | undefined {
  const unknown = /Field "(\w+)" is not defined by type/.exec(message);
  if (unknown) return [{ field: unknown[1]!, message: `unknown field ${unknown[1]}` }];
  const missing = /Field "(\w+)" of required type "[^"]+" was not provided/.exec(message);
  if (missing) return [{ field: missing[1]!, message: `${missing[1]} is required` }];
  const match = /^Variable "\$(\w+)" got invalid value .*? at "([^"]+)"; (.*)$/s.exec(message)
    ?? /^Variable "\$(\w+)" got invalid value .*?; (.*)$/s.exec(message);
  if (!match) return undefined;
  const path = match.length === 4 ? match[2]! : match[1]!;
  const field = path.includes('.') ? path.slice(path.indexOf('.') + 1) : path;
  return [{ field, message: (match.length === 4 ? match[3]! : match[2]!).trim() }];
}

/** Shapes every GraphQL error: the AppError code in extensions.code, field errors in extensions.errors. */
export function formatError(formatted: GraphQLFormattedError, error: unknown): GraphQLFormattedError {
  const original = error instanceof GraphQLError ? error.originalError : error;
  const code = formatted.extensions?.code;
  if (!original || (typeof code === 'string' && GRAPHQL_CODES.has(code) && !(original instanceof AppError))) {
    const errors = code === 'BAD_USER_INPUT' ? variableFieldError(formatted.message) : undefined;
    return { ...formatted, extensions: { code: code ?? 'GRAPHQL_VALIDATION_FAILED', ...(errors ? { errors } : {}) } };
  }
  const appError = original instanceof ArgumentValidationError ? AppError.badInput([]) : toAppError(original);
  return {
    message: appError.message,
    locations: formatted.locations,
    path: formatted.path,
    extensions: { code: appError.code, ...(appError.errors ? { errors: appError.errors } : {}) },
  };
}

/** An AppError raised outside a resolver (authentication), in the shape Apollo passes through. */
export function toGraphQLError(error: AppError): GraphQLError {
  return new GraphQLError(error.message, {
    originalError: error,
    extensions: { code: error.code, http: { status: error.status } },
  });
}
