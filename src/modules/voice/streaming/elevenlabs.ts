import WebSocket from 'ws';
import type { SynthesisEvents, SynthesisOptions, SynthesisStream, Synthesizer } from './speech-ports.js';

export const DEFAULT_ELEVENLABS_BASE_URL = 'wss://api.elevenlabs.io';
/** ElevenLabs' low-latency model, the one its WebSocket guide recommends "for use cases where latency is important". */
export const DEFAULT_ELEVENLABS_MODEL = 'eleven_flash_v2_5';
/** Alice, a default ("premade") voice, the one ElevenLabs' WebSocket guide speaks with. */
export const DEFAULT_ELEVENLABS_VOICE = 'Xb7hH8MSUJpSbSDYk0k2';

const OPEN_TIMEOUT_MS = 10_000;
const SILENCE_TIMEOUT_MS = 15_000;
/** A close reason or error body read no further than this: it goes into a call record. */
const WORDS_MAX = 300;

/**
 * The first message's voice settings: ElevenLabs' WebSocket guide's own, speaker boost off (it
 * costs latency, and a phone line does not carry what it adds).
 */
const VOICE_SETTINGS = { stability: 0.5, similarity_boost: 0.8, use_speaker_boost: false } as const;

/** One character alignment as ElevenLabs sends it; the durations' name differs between its AsyncAPI and its SDK. */
interface Alignment {
  chars?: string[] | null;
  charStartTimesMs?: number[] | null;
  charsDurationsMs?: number[] | null;
  charDurationsMs?: number[] | null;
}

/** A server message of the stream-input socket: audio with its alignment, the final one, or (undescribed) an error's words. */
interface ServerMessage {
  audio?: string | null;
  isFinal?: boolean | null;
  alignment?: Alignment | null;
  normalizedAlignment?: Alignment | null;
  message?: unknown;
  error?: unknown;
}

export interface ElevenLabsSynthesizerOptions {
  apiKey?: string;
  /** ws: or wss: base; `{it}/v1/text-to-speech/{voice_id}/stream-input`. Unset: wss://api.elevenlabs.io. */
  baseUrl?: string;
  /** Milliseconds for the socket to open. */
  openTimeoutMs?: number;
  /** Milliseconds without a word from ElevenLabs while speech is owed before the stream is reported lost. */
  silenceTimeoutMs?: number;
}

/** The non-space characters of a text: what an alignment is counted in, so spaces added or dropped do not shift it. */
function spoken(text: string): number {
  let count = 0;
  for (const char of text) if (!/\s/.test(char)) count++;
  return count;
}

/** ElevenLabs' words, never the key, cut to a length fit for a call record. */
function words(text: string, apiKey: string): string {
  const cleaned = (apiKey ? text.split(apiKey).join('[key]') : text).replace(/\s+/g, ' ').trim();
  return cleaned.length > WORDS_MAX ? `${cleaned.slice(0, WORDS_MAX)}…` : cleaned;
}

/** What an HTTP refusal's body says: ElevenLabs answers `{"detail": {"status", "message"}}` (or `{"detail": "…"}`). */
function refusal(body: string): string {
  try {
    const detail = (JSON.parse(body) as { detail?: unknown }).detail;
    if (typeof detail === 'string') return detail;
    if (detail && typeof detail === 'object') {
      const { status, message } = detail as { status?: unknown; message?: unknown };
      return [status, message].filter((part) => typeof part === 'string' && part).join(': ');
    }
  } catch {
    // Not JSON: the body as it is.
  }
  return body;
}

/**
 * One reply spoken over ElevenLabs' input-streaming socket. Each push is a complete sentence sent
 * with `flush` (and the socket opened with `auto_mode`), so it is spoken at once rather than held
 * for ElevenLabs' chunk schedule (120 characters before the first audio by default). How far the
 * audio has come in the text is read from the alignment that comes with each chunk: the characters
 * spoken, counted without spaces, mapped onto the text as it was pushed.
 */
class ElevenLabsStream implements SynthesisStream {
  /** The text as pushed, all pushes concatenated. */
  private text = '';
  /** Where each non-space character of `text` sits, in order. */
  private readonly positions: number[] = [];
  /** Non-space characters the alignment has covered so far. */
  private aligned = 0;
  private textEnd = 0;
  private ended = false;
  /** No more events: done, lost or cancelled. */
  private finished = false;
  private lastWords: string | null = null;
  private silence: NodeJS.Timeout | undefined;

  constructor(
    private readonly socket: WebSocket,
    private readonly events: SynthesisEvents,
    private readonly apiKey: string,
    private readonly silenceTimeoutMs: number,
  ) {
    socket.on('message', (data, isBinary) => {
      if (!isBinary) this.receive(data.toString());
    });
    socket.on('error', (error) => this.lose(`ElevenLabs' connection failed (${words(error.message, apiKey)})`));
    socket.on('close', (code, reason) => this.closed(code, reason.toString()));
  }

  push(text: string): void {
    if (this.finished || this.ended || !text) return;
    for (const [index, char] of [...text].entries()) if (!/\s/.test(char)) this.positions.push(this.text.length + index);
    this.text += text;
    // A text of spaces alone would be read as a keep-alive: it says nothing, and is counted as spoken once what precedes it is.
    if (spoken(text) === 0) return;
    // Every text ends with a single space, as the service asks; `flush` speaks it now.
    this.send({ text: `${text.trimEnd()} `, flush: true });
    this.expectWords();
  }

  end(): void {
    if (this.finished || this.ended) return;
    this.ended = true;
    this.send({ text: '' });
    this.expectWords();
  }

  cancel(): void {
    if (this.finished) return;
    this.finished = true;
    this.shut();
  }

  private send(message: Record<string, unknown>): void {
    if (this.socket.readyState === WebSocket.OPEN) this.socket.send(JSON.stringify(message));
  }

  /** Speech is owed (a text or the end was sent): ElevenLabs must say something within the silence timeout. */
  private expectWords(): void {
    if (this.silence || this.finished) return;
    this.silence = setTimeout(() => {
      this.silence = undefined;
      this.lose(`ElevenLabs sent no audio for ${Math.round(this.silenceTimeoutMs / 100) / 10} s`);
    }, this.silenceTimeoutMs);
  }

  private heardWords(): void {
    clearTimeout(this.silence);
    this.silence = undefined;
    // Still owed: text not yet covered by the alignment, or the final message after the end.
    if (this.ended || this.aligned < this.positions.length) this.expectWords();
  }

  private receive(data: string): void {
    if (this.finished) return;
    let message: ServerMessage;
    try {
      message = JSON.parse(data) as ServerMessage;
    } catch {
      return;
    }
    if (!message || typeof message !== 'object') return;
    const alignment = message.alignment ?? message.normalizedAlignment;
    if (alignment && Array.isArray(alignment.chars)) {
      this.aligned = Math.min(this.positions.length, this.aligned + alignment.chars.reduce((sum, chars) => sum + spoken(String(chars)), 0));
      // After the last character covered, up to the next one still to be spoken: the spaces between count as said.
      this.textEnd = Math.max(this.textEnd, this.aligned < this.positions.length ? this.positions[this.aligned]! : this.text.length);
    }
    if (typeof message.audio === 'string' && message.audio.length > 0) {
      this.heardWords();
      const ulaw = Buffer.from(message.audio, 'base64');
      if (ulaw.length > 0) this.events.audio(ulaw, this.textEnd);
    }
    if (message.isFinal === true && this.ended) return this.finish();
    // Not described by the AsyncAPI: words of an error before the service closes (its SDK reads `message`).
    const said = typeof message.message === 'string' ? message.message : typeof message.error === 'string' ? message.error : null;
    if (said && !message.audio) this.lastWords = said;
  }

  private closed(code: number, reason: string): void {
    if (this.finished) return;
    // A normal close once the input has ended is the end of the reply, the final message or not.
    if (code === 1000 && this.ended) return this.finish();
    const said = reason || this.lastWords;
    this.lose(`ElevenLabs closed the stream (code ${code}${said ? `: ${words(said, this.apiKey)}` : ''})`);
  }

  private finish(): void {
    if (this.finished) return;
    this.finished = true;
    this.shut();
    this.events.done();
  }

  private lose(reason: string): void {
    if (this.finished) return;
    this.finished = true;
    this.shut();
    this.events.lost(reason);
  }

  private shut(): void {
    clearTimeout(this.silence);
    this.silence = undefined;
    this.socket.removeAllListeners('message');
    this.socket.removeAllListeners('close');
    this.socket.removeAllListeners('error');
    this.socket.on('error', () => undefined);
    if (this.socket.readyState === WebSocket.OPEN) this.socket.close(1000);
    else if (this.socket.readyState === WebSocket.CONNECTING) this.socket.terminate();
  }
}

/**
 * ElevenLabs text to speech over its input-streaming WebSocket (`/v1/text-to-speech/{voice_id}/stream-input`):
 * μ-law 8 kHz out (`output_format=ulaw_8000`, Twilio's audio as it is). The official SDK
 * (`@elevenlabs/elevenlabs-js`, 2.56) has the socket's message types but no client for it, so the
 * socket is opened here with `ws`, on a configurable base (a proxy, or the tests' double on ws://).
 */
export class ElevenLabsSynthesizer implements Synthesizer {
  readonly name = 'elevenlabs' as const;
  readonly defaultModel = DEFAULT_ELEVENLABS_MODEL;
  readonly defaultVoice = DEFAULT_ELEVENLABS_VOICE;

  constructor(private readonly options: ElevenLabsSynthesizerOptions) {}

  missing(): string | null {
    return this.options.apiKey ? null : 'ELEVENLABS_API_KEY is not set';
  }

  /** The socket's address for one reply: the model, μ-law 8 kHz, `auto_mode` (no chunk schedule: each text is a whole sentence), an alignment with every chunk. */
  url(options: SynthesisOptions): URL {
    const base = (this.options.baseUrl ?? DEFAULT_ELEVENLABS_BASE_URL).replace(/\/+$/, '');
    const url = new URL(`${base}/v1/text-to-speech/${encodeURIComponent(options.voiceId || this.defaultVoice)}/stream-input`);
    url.searchParams.set('model_id', options.model || this.defaultModel);
    url.searchParams.set('output_format', 'ulaw_8000');
    url.searchParams.set('auto_mode', 'true');
    url.searchParams.set('sync_alignment', 'true');
    return url;
  }

  /** Opens the socket and sends the first message; rejects with ElevenLabs' words (never the key) when it is refused or cannot be reached in time. */
  open(options: SynthesisOptions, events: SynthesisEvents): Promise<SynthesisStream> {
    const apiKey = this.options.apiKey;
    if (!apiKey) return Promise.reject(new Error('ELEVENLABS_API_KEY is not set'));
    const timeoutMs = this.options.openTimeoutMs ?? OPEN_TIMEOUT_MS;
    return new Promise((resolve, reject) => {
      const socket = new WebSocket(this.url(options), {
        headers: { 'xi-api-key': apiKey },
        handshakeTimeout: timeoutMs,
        maxPayload: 4 * 1024 * 1024,
      });
      let settled = false;
      const fail = (message: string) => {
        if (settled) return;
        settled = true;
        socket.removeAllListeners();
        socket.on('error', () => undefined);
        socket.terminate();
        reject(new Error(message));
      };
      socket.once('unexpected-response', (_request, response) => {
        // ElevenLabs' reason is in the body of its HTTP answer; read a little of it, not waiting long.
        let body = '';
        const told = () => fail(`ElevenLabs refused the stream (HTTP ${response.statusCode}${body ? `: ${words(refusal(body), apiKey)}` : ''})`);
        const timer = setTimeout(told, 2000);
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => {
          if (body.length < 4096) body += chunk;
        });
        response.on('end', () => (clearTimeout(timer), told()));
        response.on('error', () => (clearTimeout(timer), told()));
      });
      socket.once('error', (error) => fail(`ElevenLabs could not be reached (${words(error.message, apiKey)})`));
      socket.once('open', () => {
        settled = true;
        socket.removeAllListeners();
        // The first message must be the initialization: a single space, and the settings for the whole stream.
        socket.send(JSON.stringify({ text: ' ', voice_settings: VOICE_SETTINGS }));
        resolve(new ElevenLabsStream(socket, events, apiKey, this.options.silenceTimeoutMs ?? SILENCE_TIMEOUT_MS));
      });
    });
  }
}
