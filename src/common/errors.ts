/** The error codes of CONTRACT.md §5; each maps to one HTTP status and one GraphQL extensions.code. */
export const ERROR_STATUS = {
  BAD_USER_INPUT: 400,
  UNAUTHENTICATED: 401,
  FORBIDDEN: 403,
  NOT_FOUND: 404,
  METHOD_NOT_ALLOWED: 405,
  CONFLICT: 409,
  PAYLOAD_TOO_LARGE: 413,
  UNSUPPORTED_MEDIA_TYPE: 415,
  RANGE_NOT_SATISFIABLE: 416,
  RATE_LIMITED: 429,
  INTERNAL_SERVER_ERROR: 500,
  UNAVAILABLE: 503,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;

export const ERROR_TITLE: Record<ErrorCode, string> = {
  BAD_USER_INPUT: 'Bad Request',
  UNAUTHENTICATED: 'Unauthorized',
  FORBIDDEN: 'Forbidden',
  NOT_FOUND: 'Not Found',
  METHOD_NOT_ALLOWED: 'Method Not Allowed',
  CONFLICT: 'Conflict',
  PAYLOAD_TOO_LARGE: 'Payload Too Large',
  UNSUPPORTED_MEDIA_TYPE: 'Unsupported Media Type',
  RANGE_NOT_SATISFIABLE: 'Range Not Satisfiable',
  RATE_LIMITED: 'Too Many Requests',
  INTERNAL_SERVER_ERROR: 'Internal Server Error',
  UNAVAILABLE: 'Service Unavailable',
};

/** What a client should do about each code; served at /docs/errors, where every problem's `type` points. */
export const ERROR_HELP: Record<ErrorCode, string> = {
  BAD_USER_INPUT:
    'The body, a query parameter or a GraphQL argument is not valid: malformed JSON, a wrong type, a broken limit or an unknown field. `errors` lists each field and what is wrong with it; fix those and send again.',
  UNAUTHENTICATED:
    'No credentials, or they are not accepted: send `x-api-key: <key>` or `Authorization: Bearer <token>`. An unknown, inactive or expired key and a bad or expired token all answer this; ask the operator for a new key (`npm run cli -- keys:create`).',
  FORBIDDEN: 'The credentials are fine but their role may not do this. Use a key of a user whose role may.',
  NOT_FOUND:
    'No such route, or no such record in your organization (records of other organizations answer this too, and so do ids that are not UUIDs). Check the path and the id.',
  METHOD_NOT_ALLOWED: 'The path exists but does not take this method. The `Allow` header lists the methods it takes.',
  CONFLICT:
    'The record is not in a state that allows this (activating an active agent, resuming a completed execution), a unique value is taken, or an Idempotency-Key was reused with another body. Read the record again and decide.',
  PAYLOAD_TOO_LARGE: 'The body is larger than the configured limit (BODY_LIMIT_BYTES). Send less in one request.',
  UNSUPPORTED_MEDIA_TYPE:
    'The body is not sent as JSON, or in a content coding the gateway does not take. Send it with the header `content-type: application/json`, uncompressed or with `Content-Encoding` gzip, deflate or br (one of them; `Accept-Encoding` in the answer lists them).',
  RANGE_NOT_SATISFIABLE:
    'A download’s `Range` header asks for bytes the file does not have. `Content-Range: bytes */<size>` gives its size; ask within it, or without `Range` for the whole file.',
  RATE_LIMITED: 'Too many requests with this key in the current window. Wait for the seconds in `Retry-After`, then send again.',
  INTERNAL_SERVER_ERROR:
    'An unexpected error on the server; nothing is wrong with your request as far as it knows. The operator can find it in the log by the `requestId` of the answer.',
  UNAVAILABLE:
    'The database or a model provider cannot be reached right now, or a stored credential does not open with the server’s key (the operator’s to fix); nothing was half-written. Retry after the seconds in `Retry-After`.',
};

/** The fragment of /docs/errors that explains a code: `not-found` for NOT_FOUND. */
export function errorAnchor(code: ErrorCode): string {
  return code.toLowerCase().replaceAll('_', '-');
}

export interface FieldError {
  field: string;
  message: string;
}

/** The one error type services throw; both doors map it through ERROR_STATUS. */
export class AppError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly errors?: FieldError[],
  ) {
    super(message);
    this.name = 'AppError';
  }

  /**
   * What the operator's log gets and the client does not: the reason behind a refusal whose answer is
   * kept generic on purpose (a webhook URL's DNS answer). Both doors log it at info with the request id.
   */
  logDetail?: Record<string, unknown>;

  get status(): number {
    return ERROR_STATUS[this.code];
  }

  static notFound(what: string): AppError {
    return new AppError('NOT_FOUND', `${what} not found`);
  }

  static badInput(errors: FieldError[]): AppError {
    const first = errors[0];
    const message = errors.length === 1 && first ? first.message : `${errors.length} fields are invalid`;
    return new AppError('BAD_USER_INPUT', message, errors);
  }
}
