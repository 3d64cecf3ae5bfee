import WebSocket from 'ws';
import { PCMU } from '../realtime/openai-realtime.js';
import { openAiErrorMessage, openAiWords } from './openai-words.js';
import type { Recognizer, RecognizerEvents, RecognizerOptions, RecognizerSession } from './speech-ports.js';
import { DEFAULT_TRANSCRIPTION_MODEL } from '../../models/voice-models.js';
import { EndOfSpeechDetector, SPEECH_END_MS } from '../realtime/end-of-speech.js';

// OpenAI as the streaming pipeline's recognizer: a Realtime *transcription* session (the GA
// interface) on the same socket endpoint as speech-to-speech. The socket is opened with
// `?intent=transcription` and no model (a transcription model in `?model=` is refused as "not
// supported in realtime mode", and a session opened as a realtime one refuses a transcription
// update); the session is then set with one `session.update` of `type: "transcription"`. Twilio's
// μ-law goes in as it is (`audio/pcmu`), the service's own VAD finds the turns, and each turn comes
// back as transcription deltas and one completed transcript. `gpt-realtime-whisper` takes no VAD
// ("turn_detection must be null; VAD is not supported", OpenAI's transcription session schema): for
// it the recognizer finds the turns itself (end-of-speech.ts) and commits each one.

export { DEFAULT_TRANSCRIPTION_MODEL };

/** The transcription models that take no turn detection: the session is sent `turn_detection: null` and the recognizer commits the turns. */
const WITHOUT_VAD = new Set(['gpt-realtime-whisper']);

/**
 * Silence that ends a caller's turn for the service's VAD. Its default (500 ms) is meant for a
 * microphone; a phone call's turns are short and every 100 ms here is 100 ms of the reply's delay.
 */
export const TURN_SILENCE_MS = 400;

/** μ-law at 8 kHz: one byte per sample, 8 per millisecond. */
const BYTES_PER_MS = 8;

/** The GA transcription session the recognizer sets (OpenAI's `RealtimeTranscriptionSessionCreateRequestGA`, the part used). */
export interface TranscriptionSessionConfig {
  type: 'transcription';
  audio: {
    input: {
      format: typeof PCMU;
      transcription: { model: string; language?: string; prompt?: string; keywords?: string[] };
      turn_detection: { type: 'server_vad'; threshold: number; prefix_padding_ms: number; silence_duration_ms: number } | null;
      noise_reduction: { type: 'near_field' };
    };
  };
}

/**
 * The session for one call. The language goes as ISO-639-1 (`en-US` → `en`), as the service asks.
 * Key terms go where the model takes them: `keywords` for the models that list it (gpt-transcribe,
 * gpt-live-transcribe), a free-text prompt for the gpt-4o ones, a keyword prompt for whisper-1;
 * the others (gpt-realtime-whisper, the diarizing model) take no prompt, so none is sent.
 * Noise reduction is `near_field`: a handset is a close-talking microphone.
 */
export function transcriptionConfig(options: RecognizerOptions): TranscriptionSessionConfig {
  const model = options.model || DEFAULT_TRANSCRIPTION_MODEL;
  const language = options.language.split('-')[0]?.toLowerCase();
  const terms = (options.keyterms ?? []).map((term) => term.trim()).filter(Boolean);
  const transcription: TranscriptionSessionConfig['audio']['input']['transcription'] = { model, ...(language ? { language } : {}) };
  if (terms.length > 0) {
    if (/^gpt-(live-)?transcribe/.test(model)) transcription.keywords = terms;
    else if (/^gpt-4o(-mini)?-transcribe(?!-diarize)/.test(model)) transcription.prompt = `The caller may say: ${terms.join(', ')}.`;
    else if (model === 'whisper-1') transcription.prompt = terms.join(', ');
  }
  return {
    type: 'transcription',
    audio: {
      input: {
        format: PCMU,
        transcription,
        turn_detection: WITHOUT_VAD.has(model) ? null : { type: 'server_vad', threshold: 0.5, prefix_padding_ms: 300, silence_duration_ms: TURN_SILENCE_MS },
        noise_reduction: { type: 'near_field' },
      },
    },
  };
}

type ServerEvent = { type: string } & Record<string, unknown>;

function text(value: unknown): string {
  return typeof value === 'string' ? value : '';
}

/** The transcription endpoint: OPENAI_REALTIME_URL (or OpenAI's) with `intent=transcription` and no model. */
export function transcriptionUrl(base: string): URL {
  const url = new URL(base);
  url.searchParams.delete('model');
  url.searchParams.set('intent', 'transcription');
  return url;
}

/** Opens the socket; rejects with OpenAI's words (the refusal's JSON body when it has one), never the key. */
function connect(url: URL, apiKey: string, timeoutMs: number): Promise<WebSocket> {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(url, { headers: { Authorization: `Bearer ${apiKey}` }, handshakeTimeout: timeoutMs, maxPayload: 4 * 1024 * 1024 });
    let settled = false;
    const fail = (message: string) => {
      if (settled) return;
      settled = true;
      socket.removeAllListeners();
      socket.on('error', () => undefined);
      socket.terminate();
      reject(new Error(openAiWords(message, apiKey)));
    };
    socket.once('unexpected-response', (_request, response) => {
      // The service answers a refused handshake with its error JSON; read a little of it for its words.
      let body = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => {
        if (body.length < 4096) body += chunk;
      });
      const done = () => {
        const words = openAiErrorMessage(body);
        fail(`OpenAI refused the transcription session (HTTP ${response.statusCode}${words ? `: ${words}` : ''})`);
      };
      response.once('end', done);
      response.once('error', done);
      response.once('close', done);
    });
    socket.once('error', (error) => fail(`OpenAI's transcription service could not be reached (${error.message})`));
    socket.once('open', () => {
      settled = true;
      socket.removeAllListeners();
      resolve(socket);
    });
  });
}

/** What is known of one caller item (a turn as the service committed it). */
interface HeardItem {
  text: string;
  /** Where the caller's last word ended, in ms of the audio sent. */
  audioEndMs?: number;
}

class OpenAiRecognizerSession implements RecognizerSession {
  private sentBytes = 0;
  /** Between the service's speech_started and its speech_stopped (or our commit). */
  private speaking = false;
  private readonly items = new Map<string, HeardItem>();
  /** Where the audio stood at each commit we sent and the service has not yet answered. */
  private readonly commitEnds: number[] = [];
  private lastError: string | null = null;
  private closedByUs = false;
  private ended = false;
  private ready = false;
  /** Our own turn finder, for a model that takes no VAD: its speech start is speechStarted, its end a commit. */
  private readonly turns: EndOfSpeechDetector | null;

  constructor(
    private readonly socket: WebSocket,
    private readonly events: RecognizerEvents,
    private readonly apiKey: string,
    ownTurns = false,
  ) {
    this.turns = ownTurns
      ? new EndOfSpeechDetector(
          () => this.commitTurn(SPEECH_END_MS),
          () => {
            if (this.ended || this.speaking) return;
            this.speaking = true;
            this.events.speechStarted();
          },
        )
      : null;
    socket.on('message', (data) => {
      let event: unknown;
      try {
        event = JSON.parse(data.toString());
      } catch {
        return;
      }
      if (event && typeof event === 'object' && typeof (event as ServerEvent).type === 'string') this.onEvent(event as ServerEvent);
    });
    socket.on('error', (error) => this.end(`OpenAI's transcription connection failed (${error.message})`));
    socket.on('close', (code, reason) => {
      const said = this.lastError ?? (reason.length > 0 ? reason.toString() : '');
      this.end(`OpenAI closed the transcription session (code ${code}${said ? `: ${said}` : ''})`);
    });
  }

  /** Sets the session and waits for the service to take it; rejects with its words when it does not. */
  configure(config: TranscriptionSessionConfig, timeoutMs: number): Promise<void> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => settle(new Error(`OpenAI did not confirm the transcription session within ${timeoutMs} ms`)), timeoutMs);
      const settle = (error?: Error) => {
        clearTimeout(timer);
        this.pending = null;
        if (error) {
          this.close();
          reject(error);
        } else {
          this.ready = true;
          resolve();
        }
      };
      this.pending = settle;
      this.sendEvent({ type: 'session.update', session: config });
    });
  }

  /** Settles configure(): called with nothing on session.updated, with an error on a refusal or a lost socket. */
  private pending: ((error?: Error) => void) | null = null;

  send(ulaw: Buffer): void {
    this.sendEvent({ type: 'input_audio_buffer.append', audio: ulaw.toString('base64') });
    this.sentBytes += ulaw.length;
    if (this.ready) this.turns?.push(ulaw);
  }

  /**
   * With server VAD the service commits each turn itself; an explicit commit is still allowed and
   * makes what was heard so far a turn now. It is sent only while the service hears speech: with
   * nothing buffered the service answers `input_audio_buffer_commit_empty`.
   */
  finalize(): void {
    this.commitTurn(0);
  }

  /** Commits what was heard while speech is heard; `silenceMs`: the quiet already sent after the last word. */
  private commitTurn(silenceMs: number): void {
    if (!this.speaking || this.ended) return;
    this.speaking = false;
    this.commitEnds.push(Math.max(0, Math.round(this.sentBytes / BYTES_PER_MS) - silenceMs));
    this.sendEvent({ type: 'input_audio_buffer.commit' });
  }

  close(): void {
    this.closedByUs = true;
    this.ended = true;
    if (this.socket.readyState === WebSocket.OPEN || this.socket.readyState === WebSocket.CONNECTING) this.socket.close(1000);
  }

  private sendEvent(event: Record<string, unknown>): void {
    if (this.socket.readyState === WebSocket.OPEN) this.socket.send(JSON.stringify(event));
  }

  private item(id: unknown): HeardItem {
    const key = text(id);
    let item = this.items.get(key);
    if (!item) this.items.set(key, (item = { text: '' }));
    return item;
  }

  private end(reason: string): void {
    if (this.pending) return this.pending(new Error(openAiWords(reason, this.apiKey)));
    if (this.ended || this.closedByUs) return;
    this.ended = true;
    this.events.lost(openAiWords(reason, this.apiKey));
  }

  private onEvent(event: ServerEvent): void {
    if (event.type === 'error') {
      const error = (event.error ?? {}) as Record<string, unknown>;
      const words = text(error.message) || text(error.code) || 'an error without a message';
      if (this.pending) return this.pending(new Error(openAiWords(`OpenAI refused the transcription session: ${words}`, this.apiKey)));
      // Most errors leave the session open; the last one is kept for the reason if the socket then closes.
      this.lastError = words;
      if (error.code === 'input_audio_buffer_commit_empty') this.commitEnds.shift();
      return;
    }
    if (event.type === 'session.updated') {
      this.pending?.();
      return;
    }
    if (!this.ready || this.ended) return;
    switch (event.type) {
      case 'input_audio_buffer.speech_started':
        this.speaking = true;
        return this.events.speechStarted();
      case 'input_audio_buffer.speech_stopped': {
        this.speaking = false;
        // audio_end_ms "includes the silence_duration_ms" (OpenAI's words): the last word ended that much earlier.
        const end = typeof event.audio_end_ms === 'number' ? event.audio_end_ms : undefined;
        if (end !== undefined) this.item(event.item_id).audioEndMs = Math.max(0, end - TURN_SILENCE_MS);
        return;
      }
      case 'input_audio_buffer.committed': {
        // A commit of ours is answered with the item it made: its audio ends where ours did.
        const item = this.item(event.item_id);
        if (item.audioEndMs === undefined && this.commitEnds.length > 0) item.audioEndMs = this.commitEnds.shift();
        return;
      }
      case 'conversation.item.input_audio_transcription.delta': {
        const item = this.item(event.item_id);
        item.text += text(event.delta);
        if (item.text.trim()) this.events.interim(item.text.trim());
        return;
      }
      case 'conversation.item.input_audio_transcription.completed': {
        const item = this.item(event.item_id);
        this.items.delete(text(event.item_id));
        const transcript = text(event.transcript).trim();
        // A turn the VAD heard but with no words (a cough, a line noise) ends the turn without text.
        if (transcript) this.events.final(transcript, true, item.audioEndMs);
        else this.events.utteranceEnd(item.audioEndMs);
        return;
      }
      case 'conversation.item.input_audio_transcription.failed': {
        const item = this.item(event.item_id);
        this.items.delete(text(event.item_id));
        const error = (event.error ?? {}) as Record<string, unknown>;
        this.lastError = text(error.message) || this.lastError;
        return this.events.utteranceEnd(item.audioEndMs);
      }
    }
  }
}

/** OpenAI Realtime transcription as the streaming pipeline's recognizer: OPENAI_REALTIME_URL and OPENAI_API_KEY. */
export class OpenAiRecognizer implements Recognizer {
  readonly name = 'openai' as const;
  readonly defaultModel = DEFAULT_TRANSCRIPTION_MODEL;

  constructor(private readonly options: { apiKey?: string; url: string; timeoutMs?: number }) {}

  missing(): string | null {
    return this.options.apiKey ? null : 'OPENAI_API_KEY is not set';
  }

  async open(options: RecognizerOptions, events: RecognizerEvents): Promise<RecognizerSession> {
    const apiKey = this.options.apiKey;
    if (!apiKey) throw new Error('OPENAI_API_KEY is not set: the OpenAI recognizer cannot be reached');
    const timeoutMs = this.options.timeoutMs ?? 10_000;
    const socket = await connect(transcriptionUrl(this.options.url), apiKey, timeoutMs);
    const config = transcriptionConfig(options);
    const session = new OpenAiRecognizerSession(socket, events, apiKey, config.audio.input.turn_detection === null);
    await session.configure(config, timeoutMs);
    return session;
  }
}
