export interface ChatMessage {
  role: 'system' | 'user' | 'assistant';
  content: string;
}

export interface GenerateRequest {
  /** '<provider>/<model_name>' */
  model: string;
  /** Instructions + policy + passages, already assembled. */
  system?: string;
  /**
   * The part of `system` the caller may learn nothing about, its size included (the agent's
   * hidden policy): the usage reported leaves it out.
   */
  hidden?: string;
  /** Memory + new user message, oldest first. */
  messages: ChatMessage[];
  /** modelConfig.modelSettings (temperature, maxTokens, topP...). */
  settings?: Record<string, unknown> | null;
  /** modelConfig.providerOptions; only the provider's allow-listed options reach it. */
  providerOptions?: Record<string, unknown> | null;
  /** Retrieved passages (builtin/extractive uses them). */
  passages?: { content: string; score: number; title?: string }[];
  /**
   * Tools the model may call: each call runs `execute` and its answer goes back to the model, which
   * goes on (at most TOOL_STEPS model steps). Providers through the AI SDK, and builtin/echo offline.
   */
  tools?: ModelTool[];
}

/** Model steps in one reply with tools: calls, their answers, then words; past it the reply is what the model has. */
export const TOOL_STEPS = 4;

export interface ModelUsage {
  inputTokens: number;
  outputTokens: number;
  totalTokens: number;
  model: string;
}

export interface GenerateResult {
  text: string;
  usage: ModelUsage;
}

/** A tool the model may call; `execute` runs it and its answer goes back to the model. */
export interface ModelTool {
  name: string;
  description: string;
  /** JSON Schema of its arguments (an object). */
  parameters: Record<string, unknown>;
  execute(args: Record<string, unknown>): Promise<Record<string, unknown>>;
}

/** The name the streaming pipeline knew tools by. */
export type StreamTool = ModelTool;

export interface StreamRequest extends GenerateRequest {
  /** Stops the generation (the caller spoke over the agent): the stream ends without error. */
  signal: AbortSignal;
}

/** What a streamed reply yields: its text as it is written, then its usage once. */
export type StreamPart = { type: 'text'; text: string } | { type: 'usage'; usage: ModelUsage };

/** A request for a JSON answer that follows a schema (the analysis of an ended call). */
export interface GenerateObjectRequest extends GenerateRequest {
  /** The JSON Schema (draft-07, type object) the answer is asked to follow. */
  schema: Record<string, unknown>;
  /** The conversation the answer is about, oldest first: what the builtin models extract from. */
  transcript: ChatMessage[];
}

export interface GenerateObjectResult {
  /** The parsed JSON answer, not yet checked against the schema: the caller validates it. */
  object: unknown;
  usage: ModelUsage;
}

/** The provider answered, but not with a JSON value (or not with one the SDK could read as the output). */
export class ModelOutputError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ModelOutputError';
  }
}

/** The HTTP status the model provider answered, on a failure the provider's client made of it (sdk.provider.ts, providerFailure); undefined for any other error. */
export function upstreamStatusOf(error: unknown): number | undefined {
  const status = (error as { upstreamStatus?: unknown } | null)?.upstreamStatus;
  return typeof status === 'number' ? status : undefined;
}
