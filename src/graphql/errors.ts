import { GraphQLError, Kind, type ASTNode, type GraphQLFormattedError, type GraphQLSchema } from 'graphql';
import type { Response } from 'express';
import { ArgumentValidationError } from 'type-graphql';
import { AppError, type FieldError } from '../common/errors.js';
import { toAppError } from '../common/error-mapping.js';
import { coercionFieldError } from './coercion-words.js';

/** Codes GraphQL itself produces before a resolver runs; they are kept as they are. */
const GRAPHQL_CODES = new Set([
  'GRAPHQL_PARSE_FAILED',
  'GRAPHQL_VALIDATION_FAILED',
  'BAD_USER_INPUT',
  'PERSISTED_QUERY_NOT_FOUND',
  'OPERATION_RESOLUTION_FAILURE',
  'BAD_REQUEST',
]);

/**
 * A variable GraphQL refused: `Variable "$input" got invalid value 5 at "input.name"; ...`; `typed`
 * when it was of the wrong type, said in REST's words.
 */
function variableFieldError(message: string, schema?: GraphQLSchema): { errors: FieldError[]; typed?: FieldError } | undefined {
  const unknown = /Field "(\w+)" is not defined by type/.exec(message);
  if (unknown) return { errors: [{ field: unknown[1]!, message: `unknown field ${unknown[1]}` }] };
  const missing = /Field "(\w+)" of required type "[^"]+" was not provided/.exec(message);
  if (missing) return { errors: [{ field: missing[1]!, message: `${missing[1]} is required` }] };
  const match =
    /^Variable "\$(\w+)" got invalid value .*? at "([^"]+)"; (.*)$/s.exec(message) ?? /^Variable "\$(\w+)" got invalid value .*?; (.*)$/s.exec(message);
  if (!match) return undefined;
  const path = match.length === 4 ? match[2]! : match[1]!;
  const field = path.includes('.') ? path.slice(path.indexOf('.') + 1) : path;
  const reason = (match.length === 4 ? match[3]! : match[2]!).trim();
  const typed = coercionFieldError(field, reason, schema);
  return typed ? { errors: [typed], typed } : { errors: [{ field, message: reason }] };
}

/**
 * GraphQL's own messages for a literal of the wrong type, an unknown enum value or field, or a
 * missing required value. REST answers these as 400 BAD_USER_INPUT (CONTRACT.md §5), so GraphQL does too.
 */
const VALUE_ERROR =
  /cannot represent|Expected value of type|does not exist in ".*" enum|of required type ".*" was not provided|is not defined by type|is required, but it was not provided/;

/** Apollo's refusal names its constructor option; the operator sets GRAPHQL_INTROSPECTION instead. */
const INTROSPECTION_REFUSED = /introspection is not allowed/i;

/** The argument or input field a literal error is about: named in the message, or written just before the value. */
function literalField(error: GraphQLError): string | undefined {
  const named = /(?:Field|Argument) "(?:\w+\.)?(\w+)"/.exec(error.message)?.[1];
  if (named) return named;
  const node = error.nodes?.[0] as ASTNode | undefined;
  if (node?.kind === Kind.OBJECT_FIELD || node?.kind === Kind.ARGUMENT) return node.name.value;
  const before = node?.loc ? node.loc.source.body.slice(0, node.loc.start) : '';
  return /(\w+)\s*:\s*$/.exec(before)?.[1];
}

/**
 * Shapes every GraphQL error: the AppError code in extensions.code, field errors in extensions.errors.
 * With the schema, a value GraphQL refused for its type is answered in REST's words (its enums' values).
 */
export function formatError(formatted: GraphQLFormattedError, error: unknown, schema?: GraphQLSchema): GraphQLFormattedError {
  let original = error instanceof GraphQLError ? error.originalError : error;
  // Apollo wraps GraphQL's own validation errors; the wrapped error is the one with the AST nodes.
  const own = original instanceof GraphQLError ? original : error instanceof GraphQLError && !original ? error : undefined;
  if (original instanceof GraphQLError) original = undefined;
  const code = formatted.extensions?.code;
  // A document that does not parse is bad input, as malformed JSON is on REST; one nested past the
  // parser's stack says so instead of naming the RangeError.
  if (code === 'GRAPHQL_PARSE_FAILED') {
    const message = /Maximum call stack size exceeded/.test(formatted.message) ? 'Syntax Error: the document is nested too deeply to parse' : formatted.message;
    return { message, locations: formatted.locations, extensions: { code: 'BAD_USER_INPUT', errors: [{ field: 'query', message }] } };
  }
  if (code === 'GRAPHQL_VALIDATION_FAILED' && INTROSPECTION_REFUSED.test(formatted.message)) {
    return {
      ...formatted,
      message: 'GraphQL introspection is turned off on this server (the default in production); set GRAPHQL_INTROSPECTION=true to allow it',
    };
  }
  if (own && code === 'GRAPHQL_VALIDATION_FAILED' && VALUE_ERROR.test(own.message)) {
    const field = literalField(own);
    const typed = field ? coercionFieldError(field, formatted.message, schema) : null;
    return {
      ...formatted,
      ...(typed ? { message: typed.message } : {}),
      extensions: { code: 'BAD_USER_INPUT', ...(field ? { errors: [typed ?? { field, message: formatted.message }] } : {}) },
    };
  }
  if (!original || (typeof code === 'string' && GRAPHQL_CODES.has(code) && !(original instanceof AppError))) {
    const refused = code === 'BAD_USER_INPUT' ? variableFieldError(formatted.message, schema) : undefined;
    return {
      ...formatted,
      // A wrong type is said as REST says it (there, the problem's detail).
      ...(refused?.typed ? { message: AppError.badInput([refused.typed]).message } : {}),
      extensions: { code: code ?? 'GRAPHQL_VALIDATION_FAILED', ...(refused ? { errors: refused.errors } : {}) },
    };
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

/** Answers a GraphQL request refused before it reached Apollo (rate limit, timeout), in GraphQL's response shape. */
export function sendGraphQLError(res: Response, error: AppError, requestId: string): void {
  if (error.code === 'UNAVAILABLE') res.setHeader('Retry-After', '5');
  res.locals.errorCode = error.code; // counted by /metrics
  res.status(error.status).json({ errors: [{ message: error.message, extensions: { code: error.code, requestId } }] });
}
