import WebSocket from 'ws';
import type { Agent } from '../../agents/agent.entity.js';
import { callTools, type CallTool } from './call-tools.js';
import { firstLineInstructions, type OutOfBandText, type SpeechEvents, type SpeechProvider, type SpeechSession } from './speech-provider.js';
import { DEFAULT_REALTIME_MODEL, DEFAULT_TRANSCRIPTION_MODEL, REALTIME_MODELS, unlistedModel } from '../../models/voice-models.js';
import { InterruptionMode, TurnDetectionType, type TurnEagerness } from '../../agents/agent.enums.js';
import type { VoiceConfig } from '../../agents/agent.types.js';
import { interruptionSettings } from '../interruptions.js';

export { DEFAULT_REALTIME_MODEL };
export const DEFAULT_OPENAI_REALTIME_URL = 'wss://api.openai.com/v1/realtime';

/** One event the provider sends: its `type` and fields as they come (GA names; the beta ones are still read). */
export type RealtimeEvent = { type: string } & Record<string, unknown>;

/** G.711 μ-law, Twilio's audio as it is: the GA format has no rate (8 kHz is implied). */
export const PCMU = { type: 'audio/pcmu' } as const;

export interface RealtimeFunctionTool {
  type: 'function';
  name: string;
  description: string;
  parameters: Record<string, unknown>;
}

/**
 * The GA session configuration the bridge sends (OpenAI's `RealtimeSessionCreateRequestGA`, the
 * part of it used here). `type` is required by the service on every update, the first and later
 * ones; keys of the retired beta shape (`modalities`, `input_audio_format`, `voice` at the top...)
 * make the service refuse the whole update.
 */
export interface RealtimeSessionConfig {
  type: 'realtime';
  output_modalities?: ['audio'] | ['text'];
  instructions?: string;
  audio?: {
    input?: {
      format?: typeof PCMU;
      transcription?: { model: string; language?: string; prompt?: string } | null;
      noise_reduction?: { type: 'near_field' | 'far_field' } | null;
      turn_detection?: RealtimeTurnDetection | null;
    };
    output?: { format?: typeof PCMU; voice?: string | { id: string } };
  };
  tools?: RealtimeFunctionTool[];
  tool_choice?: 'auto' | 'none' | 'required';
}

/** OpenAI's `RealtimeTurnDetection` (server VAD or semantic VAD), the settings used here. */
export type RealtimeTurnDetection =
  | { type: 'server_vad'; silence_duration_ms?: number; create_response?: boolean; interrupt_response?: boolean }
  | { type: 'semantic_vad'; eagerness?: TurnEagerness; create_response?: boolean; interrupt_response?: boolean };

/** Whether the gateway, not OpenAI, decides what the caller's speech does to a reply: every interruptions mode but `any`. */
export function gatewayDecides(voice: Pick<VoiceConfig, 'interruptions' | 'language'> | null | undefined): boolean {
  return interruptionSettings(voice).mode !== InterruptionMode.any;
}

/**
 * The agent's turn detection in OpenAI's words: `semantic` is semantic_vad (with its eagerness),
 * `silence` server VAD (with its pause). When the gateway decides on the caller's words, the
 * service's own cut and reply on voice activity are turned off (interrupt_response and
 * create_response false: VAD events still come) and the bridge cancels and asks for replies itself.
 */
export function turnDetection(voice: Pick<VoiceConfig, 'interruptions' | 'language' | 'turnDetection'> | null | undefined): RealtimeTurnDetection {
  const held = gatewayDecides(voice) ? { create_response: false, interrupt_response: false } : {};
  const detection = voice?.turnDetection;
  if (detection?.type === TurnDetectionType.semantic)
    return { type: 'semantic_vad', ...(detection.eagerness ? { eagerness: detection.eagerness } : {}), ...held };
  return { type: 'server_vad', ...(detection?.silenceMs ? { silence_duration_ms: detection.silenceMs } : {}), ...held };
}

/** The GA client events the bridge sends (OpenAI's `RealtimeClientEvent`, the ones used here). */
export type RealtimeClientEvent =
  | { type: 'session.update'; session: RealtimeSessionConfig }
  | { type: 'input_audio_buffer.append'; audio: string }
  | { type: 'response.create'; response?: { instructions: string; tool_choice: 'none' } }
  | {
      // Out of band (RealtimeResponseCreateParams: conversation none, its own input): a text answer that joins no conversation.
      type: 'response.create';
      response: {
        conversation: 'none';
        output_modalities: ['text'];
        instructions: string;
        input: [{ type: 'message'; role: 'user'; content: [{ type: 'input_text'; text: string }] }];
        metadata: Record<string, string>;
        max_output_tokens: number;
        tool_choice: 'none';
      };
    }
  | { type: 'response.cancel' }
  | { type: 'conversation.item.truncate'; item_id: string; content_index: number; audio_end_ms: number }
  | { type: 'conversation.item.create'; item: { type: 'function_call_output'; call_id: string; output: string } }
  | { type: 'conversation.item.create'; item: { type: 'message'; role: 'user'; content: [{ type: 'input_text'; text: string }] } };

/**
 * The realtime model an agent talks with: its own `openai/<model>` (checked against OpenAI's list
 * when saved and when the session opens: an unknown one is refused, never replaced), else, for a
 * model of another provider (builtin/echo for typed messages), DEFAULT_REALTIME_MODEL.
 */
export function realtimeModel(model: string): string {
  const slash = model.indexOf('/');
  return slash > 0 && model.slice(0, slash) === 'openai' && slash < model.length - 1 ? model.slice(slash + 1) : DEFAULT_REALTIME_MODEL;
}

/** A voice as the GA session takes it: a custom voice (`voice_…`) by reference, a built-in one by name. */
export function realtimeVoice(voiceId: string): string | { id: string } {
  return /^voice_/.test(voiceId) ? { id: voiceId } : voiceId;
}

/**
 * One OpenAI Realtime session over WebSocket (`ws`), the GA interface: JSON events both ways, no
 * `OpenAI-Beta` header (the service answers it with `beta_api_shape_disabled` and closes with
 * 4000). `ws` rather than the `openai` SDK's `OpenAIRealtimeWS`: that client forces the URL's scheme
 * to wss: (an OPENAI_REALTIME_URL of ws:, a local proxy or the tests' double, could not be used),
 * and the bridge only relays a few events between two sockets over the same `ws` the SDK wraps.
 */
export class RealtimeConnection {
  private closedByUs = false;

  private constructor(private readonly socket: WebSocket) {}

  /** Opens the session; rejects with a message fit for the call record when it cannot. */
  static open(options: { url: string; apiKey: string; model: string; timeoutMs?: number }): Promise<RealtimeConnection> {
    const url = new URL(options.url);
    url.searchParams.set('model', options.model);
    return new Promise((resolve, reject) => {
      const socket = new WebSocket(url, {
        headers: { Authorization: `Bearer ${options.apiKey}` },
        handshakeTimeout: options.timeoutMs ?? 10_000,
        maxPayload: 4 * 1024 * 1024,
      });
      const fail = (message: string) => {
        socket.removeAllListeners();
        socket.on('error', () => undefined);
        socket.terminate();
        reject(new Error(message));
      };
      socket.once('unexpected-response', (_req, res) => fail(`The realtime provider refused the session (HTTP ${res.statusCode})`));
      socket.once('error', (error) => fail(`The realtime provider could not be reached (${error.message})`));
      socket.once('open', () => {
        socket.removeAllListeners();
        resolve(new RealtimeConnection(socket));
      });
    });
  }

  send(event: RealtimeClientEvent): void {
    if (this.socket.readyState === WebSocket.OPEN) this.socket.send(JSON.stringify(event));
  }

  onEvent(listener: (event: RealtimeEvent) => void): void {
    this.socket.on('message', (data) => {
      let event: unknown;
      try {
        event = JSON.parse(data.toString());
      } catch {
        return;
      }
      if (event && typeof event === 'object' && typeof (event as RealtimeEvent).type === 'string') listener(event as RealtimeEvent);
    });
  }

  /** Called once when the session ends without us closing it (the provider dropped it, or the network did). */
  onLost(listener: (reason: string) => void): void {
    let told = false;
    const tell = (reason: string) => {
      if (told || this.closedByUs) return;
      told = true;
      listener(reason);
    };
    this.socket.on('error', (error) => tell(`The realtime provider's connection failed (${error.message})`));
    this.socket.on('close', (code, reason) =>
      tell(`The realtime provider closed the session (code ${code}${reason.length ? `: ${reason.toString().slice(0, 200)}` : ''})`),
    );
  }

  close(): void {
    this.closedByUs = true;
    if (this.socket.readyState === WebSocket.OPEN || this.socket.readyState === WebSocket.CONNECTING) this.socket.close(1000);
  }
}

/**
 * The call's session in OpenAI's GA shape: μ-law both ways (Twilio's audio untouched), audio
 * replies with their transcript, the caller transcribed, noise reduction for a close-talking
 * microphone (a handset: `near_field`), the agent's turn detection, its tools (the built-in ones,
 * then its own HTTP and MCP tools) and voice.
 */
export function sessionConfig(agent: Agent, instructions: string, own: CallTool[] = []): RealtimeSessionConfig {
  const voiceId = agent.voiceConfig?.voiceId;
  return {
    type: 'realtime',
    output_modalities: ['audio'],
    instructions,
    audio: {
      input: {
        format: PCMU,
        transcription: { model: DEFAULT_TRANSCRIPTION_MODEL },
        noise_reduction: { type: 'near_field' },
        turn_detection: turnDetection(agent.voiceConfig),
      },
      output: { format: PCMU, ...(voiceId ? { voice: realtimeVoice(voiceId) } : {}) },
    },
    tools: [...callTools(agent), ...own].map((tool) => ({ type: 'function', ...tool })),
    tool_choice: 'auto',
  };
}

function text(value: unknown): string {
  return typeof value === 'string' ? value : '';
}

/** The metadata key an out-of-band response is known by (response.created and response.done carry the request's metadata back). */
const OUT_OF_BAND_KEY = 'gateway_request';

/** An out-of-band text answer asked for and not yet done: its response's id once created, its text so far. */
interface PendingText {
  resolve: (text: string) => void;
  reject: (error: Error) => void;
  text: string;
}

/** OpenAI Realtime behind the bridge's SpeechSession: its GA events (and the beta names still read) in the bridge's words. */
class OpenAiSpeechSession implements SpeechSession {
  /** Out-of-band text answers by request key, and the keys of their responses by response id: none of their events is the call's. */
  private readonly pendingText = new Map<string, PendingText>();
  private readonly outOfBand = new Map<string, string>();
  private asked = 0;

  constructor(private readonly connection: RealtimeConnection) {
    connection.onLost((reason) => this.dropText(reason));
  }

  /** An out-of-band response's event, if it is one (kept apart from the call's); false for the call's own. */
  private apart(event: RealtimeEvent): boolean {
    const response = event.response as Record<string, unknown> | undefined;
    if (event.type === 'response.created') {
      const key = text((response?.metadata as Record<string, unknown> | null | undefined)?.[OUT_OF_BAND_KEY]);
      if (!key || !this.pendingText.has(key)) return false;
      this.outOfBand.set(text(response?.id), key);
      return true;
    }
    const responseId = event.type === 'response.done' ? text(response?.id) : text(event.response_id);
    const key = this.outOfBand.get(responseId);
    if (key === undefined) return false;
    const pending = this.pendingText.get(key);
    if (event.type === 'response.output_text.delta' || event.type === 'response.text.delta') {
      if (pending) pending.text += text(event.delta);
    } else if (event.type === 'response.done') {
      this.outOfBand.delete(responseId);
      this.pendingText.delete(key);
      const status = text(response?.status);
      if (status === 'completed') pending?.resolve(pending.text);
      else pending?.reject(new Error(`the provider ended the answer ${status || 'without a status'}`));
    }
    return true;
  }

  private dropText(reason: string): void {
    for (const pending of this.pendingText.values()) pending.reject(new Error(reason));
    this.pendingText.clear();
    this.outOfBand.clear();
  }

  /** response.create out of band: text only, its own instructions and input (the default conversation neither read nor written), no tool. */
  answerText(request: OutOfBandText): Promise<string> {
    const key = `t${++this.asked}`;
    return new Promise<string>((resolve, reject) => {
      this.pendingText.set(key, { resolve, reject, text: '' });
      this.connection.send({
        type: 'response.create',
        response: {
          conversation: 'none',
          output_modalities: ['text'],
          instructions: request.instructions,
          input: [{ type: 'message', role: 'user', content: [{ type: 'input_text', text: request.input }] }],
          metadata: { [OUT_OF_BAND_KEY]: key },
          max_output_tokens: request.maxOutputTokens,
          tool_choice: 'none',
        },
      });
    });
  }

  listen(events: SpeechEvents): void {
    this.connection.onEvent((event) => {
      if (this.apart(event)) return;
      switch (event.type) {
        case 'input_audio_buffer.speech_started':
          return events.callerStarted();
        case 'input_audio_buffer.speech_stopped':
          return events.callerStopped();
        case 'conversation.item.input_audio_transcription.completed': {
          const transcript = text(event.transcript).trim();
          if (transcript) events.callerTurn(transcript);
          return;
        }
        case 'response.created':
          return events.replyStarted(text((event.response as Record<string, unknown> | undefined)?.id));
        case 'response.audio.delta':
        case 'response.output_audio.delta':
          return events.agentAudio(text(event.response_id), text(event.item_id), text(event.delta));
        case 'response.audio_transcript.delta':
        case 'response.output_audio_transcript.delta':
          return events.agentWords(text(event.response_id), text(event.item_id), text(event.delta));
        case 'response.audio_transcript.done':
        case 'response.output_audio_transcript.done':
          return events.agentItemDone(text(event.response_id), text(event.item_id), text(event.transcript));
        case 'response.function_call_arguments.done': {
          let args: Record<string, unknown> = {};
          try {
            const parsed: unknown = JSON.parse(text(event.arguments) || '{}');
            if (parsed && typeof parsed === 'object') args = parsed as Record<string, unknown>;
          } catch {
            // Arguments that are not JSON are read as none.
          }
          return events.toolCall(text(event.name), text(event.call_id), args);
        }
        case 'response.done':
          return events.replyDone(text((event.response as Record<string, unknown> | undefined)?.id));
        case 'error': {
          const error = event.error as Record<string, unknown> | undefined;
          return events.providerError(error?.code, error?.message);
        }
      }
    });
  }

  appendCallerAudio(ulaw: string): void {
    this.connection.send({ type: 'input_audio_buffer.append', audio: ulaw });
  }
  cancelReply(): void {
    this.connection.send({ type: 'response.cancel' });
  }
  truncate(itemId: string, heardMs: number): void {
    this.connection.send({ type: 'conversation.item.truncate', item_id: itemId, content_index: 0, audio_end_ms: Math.floor(heardMs) });
  }
  answerTool(callId: string, _name: string, output: Record<string, unknown>): void {
    this.connection.send({ type: 'conversation.item.create', item: { type: 'function_call_output', call_id: callId, output: JSON.stringify(output) } });
  }
  /** A user message of text in the conversation (the caller's keys); the reply is asked for apart (replyAfterTools). */
  callerKeys(line: string): void {
    this.connection.send({ type: 'conversation.item.create', item: { type: 'message', role: 'user', content: [{ type: 'input_text', text: line }] } });
  }
  replyAfterTools(): void {
    this.connection.send({ type: 'response.create' });
  }
  /** The caller's turn is answered when the gateway says so (create_response is off: turnDetection). */
  answerCaller(): void {
    this.connection.send({ type: 'response.create' });
  }
  /** A response of its own for the first line: its instructions (for this response only) ask for the line word for word, and no tool. */
  sayFirst(line: string): void {
    this.connection.send({ type: 'response.create', response: { instructions: firstLineInstructions(line), tool_choice: 'none' } });
  }
  updateInstructions(instructions: string): void {
    // A GA update names its session type every time; only the instructions change.
    this.connection.send({ type: 'session.update', session: { type: 'realtime', instructions } });
  }
  onLost(listener: (reason: string) => void): void {
    this.connection.onLost(listener);
  }
  close(): void {
    this.dropText('the call’s session ended');
    this.connection.close();
  }
}

/** OpenAI Realtime as the bridge's speech provider: OPENAI_REALTIME_URL and OPENAI_API_KEY. */
export class OpenAiSpeechProvider implements SpeechProvider {
  readonly transcriptCutAtHeard = false;
  /** Server VAD's input_audio_buffer.speech_stopped. */
  readonly reportsEndOfSpeech = true;

  /** Its own cut and reply on voice activity are off for an agent whose interruptions the gateway decides (turnDetection). */
  gatewayDecides(agent: Agent): boolean {
    return gatewayDecides(agent.voiceConfig);
  }

  constructor(private readonly options: { url: string; apiKey: string | undefined }) {}

  modelLabel(agent: Agent): string {
    return `openai/${realtimeModel(agent.modelConfig.model)}`;
  }

  async open(agent: Agent, instructions: string, events: SpeechEvents, tools: CallTool[] = []): Promise<SpeechSession> {
    if (!this.options.apiKey) throw new Error('OPENAI_API_KEY is not set: the speech-to-speech provider cannot be reached');
    const model = realtimeModel(agent.modelConfig.model);
    const unlisted = unlistedModel(REALTIME_MODELS, model);
    if (unlisted) throw new Error(`The agent's model ${unlisted}`);
    const connection = await RealtimeConnection.open({ url: this.options.url, apiKey: this.options.apiKey, model });
    const session = new OpenAiSpeechSession(connection);
    session.listen(events);
    connection.send({ type: 'session.update', session: sessionConfig(agent, instructions, tools) });
    return session;
  }
}
