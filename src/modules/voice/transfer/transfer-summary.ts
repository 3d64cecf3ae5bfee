import type { Agent } from '../../agents/agent.entity.js';
import type { ChatMessage } from '../../agents/agent.ports.js';
import { saysPolicy, TRANSCRIPT_IS_DATA, transcriptMessage, userLines } from '../../agents/prompt.js';
import { PipelineMode } from '../../agents/agent.enums.js';
import type { GenerateObjectRequest, GenerateObjectResult } from '../../models/model.types.js';
import { wallClockDeadline, type RequestDeadline } from '../../../platform/request-timeout.js';
import type { SpeechSession } from '../realtime/speech-provider.js';

/** What the summary needs of the models module: ModelService satisfies it. */
export interface SummaryModelPort {
  generateObject(request: GenerateObjectRequest): Promise<GenerateObjectResult>;
}

/**
 * The summary's model for a speech-to-speech call: the call's own provider session, asked out of
 * band (OpenAI Realtime's response.create with conversation none and text output: it joins no
 * conversation and the caller hears nothing), with the same instructions and transcript data a text
 * model is sent. Null for a session that answers in audio only (Gemini Live).
 */
export function sessionSummaryModel(session: Pick<SpeechSession, 'answerText'> | null | undefined, label: string): SummaryModelPort | null {
  const answerText = session?.answerText?.bind(session);
  if (!answerText) return null;
  return {
    async generateObject(request) {
      const answer = await answerText({
        instructions: request.system ?? '',
        input: request.messages.map((message) => message.content).join('\n'),
        maxOutputTokens: Number(request.settings?.maxOutputTokens) || SUMMARY_MAX_OUTPUT_TOKENS,
      });
      // The JSON asked for, as the model wrote it (a fenced block read too).
      const json = answer.trim().replace(/^```(?:json)?\s*([\s\S]*?)\s*```$/, '$1');
      let object: unknown;
      try {
        object = JSON.parse(json);
      } catch {
        throw new Error('the speech-to-speech model did not answer JSON');
      }
      return { object, usage: { inputTokens: 0, outputTokens: 0, totalTokens: 0, model: label } };
    },
  };
}

/** How long a warm transfer waits for the model's summary before it briefs the person from the template alone. */
export const SUMMARY_TIMEOUT_MS = 3000;
/** The longest summary said to the person (the model is asked for it; a longer answer is cut at a word). */
export const SUMMARY_MAX_CHARS = 300;
/** The most tokens the model may write for it. */
const SUMMARY_MAX_OUTPUT_TOKENS = 200;
/** What of the transcript the model is sent: its last turns, each cut. */
const SUMMARY_TURNS = 40;
const TURN_CHARS = 1000;

/** The model's summary, or why there is none (the person is then briefed from the template alone). */
export type TransferSummary = { summary: string; error: null } | { summary: null; error: string };

/**
 * The request: a fixed instruction and the transcript so far as JSON data (as the analysis sends it:
 * TRANSCRIPT_IS_DATA). Nothing of the agent's own prompt is in it — neither its instructions nor its
 * hidden policy — so the policy cannot reach the person through the model's answer.
 */
export function summaryRequest(agent: Pick<Agent, 'modelConfig'>, transcript: ChatMessage[]): GenerateObjectRequest {
  const turns = transcript
    .filter((message) => message.role !== 'system')
    .slice(-SUMMARY_TURNS)
    .map((message) => ({ role: message.role, content: message.content.slice(0, TURN_CHARS) }));
  const settings = { ...(agent.modelConfig.modelSettings ?? {}) };
  delete settings.maxTokens;
  return {
    model: agent.modelConfig.model,
    system:
      'An AI agent on a phone call is handing the caller to a person, who hears your summary before the caller is joined. ' +
      `Summarise the call so far for that person in one or two short sentences (at most ${SUMMARY_MAX_CHARS} characters): ` +
      'who the caller is if they said so, what they want, and what was already done or promised. Speak of the caller in the third person; ' +
      `answer as JSON {"summary": "..."}.\n${TRANSCRIPT_IS_DATA}`,
    messages: [transcriptMessage(turns)],
    transcript: turns,
    schema: {
      type: 'object',
      properties: { summary: { type: 'string', maxLength: SUMMARY_MAX_CHARS } },
      required: ['summary'],
      additionalProperties: false,
    },
    settings: { ...settings, maxOutputTokens: Math.min(Number(settings.maxOutputTokens) || SUMMARY_MAX_OUTPUT_TOKENS, SUMMARY_MAX_OUTPUT_TOKENS) },
    providerOptions: agent.modelConfig.providerOptions ?? null,
  };
}

/** A summary cut to SUMMARY_MAX_CHARS at a word, whitespace folded. */
function clipped(text: string): string {
  const folded = text.replace(/\s+/g, ' ').trim();
  if (folded.length <= SUMMARY_MAX_CHARS) return folded;
  const cut = folded.slice(0, SUMMARY_MAX_CHARS);
  const space = cut.lastIndexOf(' ');
  return `${(space > SUMMARY_MAX_CHARS / 2 ? cut.slice(0, space) : cut).replace(/[\s\p{P}]+$/u, '')}…`;
}

export interface SummaryOptions {
  model: SummaryModelPort;
  /** A speech-to-speech call's own session as the summary's model (sessionSummaryModel); null or absent: it has none. */
  sessionModel?: SummaryModelPort | null;
  /** Starts the wait's deadline (the served one a timer of SUMMARY_TIMEOUT_MS; tests fire it when they say). */
  deadline?: RequestDeadline;
  timeoutMs?: number;
}

/**
 * The agent's text model asked for a short summary of the call so far, bounded in length
 * (SUMMARY_MAX_CHARS) and time (SUMMARY_TIMEOUT_MS: past it the answer is not waited for, the model's
 * own call runs on to the model timeout and is dropped). An `sts` agent's is asked of its call's
 * session (`sessionModel`). Never throws: no model to ask (an `sts` agent whose provider answers in
 * audio only), nothing said yet, a model that fails or answers no
 * summary, the deadline, or a summary that says a sentence of the agent's policy the caller did not
 * say (saysPolicy, the check every reply to a caller goes through: it is then withheld whole) each
 * give no summary and the reason.
 */
export async function transferSummary(
  options: SummaryOptions,
  agent: Pick<Agent, 'modelConfig' | 'voiceConfig'>,
  transcript: ChatMessage[],
  guardPolicy: string | null,
): Promise<TransferSummary> {
  // A speech-to-speech agent's summary is its call's session's (sessionSummaryModel), where its provider answers text out of band.
  const model = agent.voiceConfig?.pipelineMode === PipelineMode.sts ? options.sessionModel : options.model;
  if (!model) return { summary: null, error: 'no text model: the agent’s speech-to-speech provider answers in audio only' };
  if (!transcript.some((message) => message.role === 'user' && message.content.trim() !== ''))
    return { summary: null, error: 'nothing was said by the caller yet' };
  const timeoutMs = options.timeoutMs ?? SUMMARY_TIMEOUT_MS;
  let cancel = () => undefined as void;
  const timedOut = new Promise<TransferSummary>((resolve) => {
    cancel = (options.deadline ?? wallClockDeadline)(() => resolve({ summary: null, error: `the model did not answer within ${timeoutMs} ms` }), timeoutMs);
  });
  const asked = (async (): Promise<TransferSummary> => {
    try {
      const { object } = await model.generateObject(summaryRequest(agent, transcript));
      const value = object && typeof object === 'object' ? (object as Record<string, unknown>).summary : undefined;
      const summary = typeof value === 'string' ? clipped(value) : '';
      if (!summary) return { summary: null, error: 'the model answered no summary' };
      if (saysPolicy(summary, guardPolicy, userLines(transcript))) return { summary: null, error: 'the summary said the agent’s policy: it was withheld' };
      return { summary, error: null };
    } catch (error) {
      return { summary: null, error: `the model failed: ${(error instanceof Error ? error.message : String(error)).slice(0, 200)}` };
    }
  })();
  try {
    return await Promise.race([asked, timedOut]);
  } finally {
    cancel();
  }
}
