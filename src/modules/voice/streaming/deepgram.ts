import type { IncomingMessage } from 'node:http';
import WebSocket from 'ws';
import type { Recognizer, RecognizerEvents, RecognizerOptions, RecognizerSession } from './speech-ports.js';
import { DEFAULT_DEEPGRAM_MODEL } from '../../models/voice-models.js';

// Deepgram's live transcription (`/v1/listen`, the Nova models) as the streaming pipeline's
// recognizer: Twilio's μ-law 8 kHz goes up as binary frames untouched, Deepgram's JSON messages come
// back as the pipeline's events. A Flux model (`flux-general-en`, `flux-general-multi`), named or
// chosen by turnDetection semantic, opens `/v2/listen` instead: Deepgram's turn-taking recognizer,
// whose EndOfTurn ends the caller's turn (StartOfTurn and Update are the speech and its words so far).
//
// The socket is opened with `ws` rather than the official SDK (`@deepgram/sdk` 5.13, read for this):
// its socket reports a refused handshake as `Unexpected server response: 401` and nothing more, so
// Deepgram's own words (the `dg-error` header and the JSON body of the refusal) could never reach a
// call record; it reconnects on its own by default (30 attempts), and a reconnected session starts
// its audio clock at 0 again, which would make every later `audioEndMs` wrong; and its queue of
// frames sent before the socket opens has no bound. What it does for us (a URL, a header, four
// message shapes) is a few lines here, checked against Deepgram's AsyncAPI by the tests' double.

export const DEFAULT_DEEPGRAM_BASE_URL = 'wss://api.deepgram.com';
export { DEFAULT_DEEPGRAM_MODEL } from '../../models/voice-models.js';
/** Deepgram closes a socket that has had neither audio nor a text message for 10 s (`NET-0001`); its docs ask for a KeepAlive every 3–5 s. */
export const KEEPALIVE_MS = 5000;
/** How long `open()` waits for the handshake before giving up. */
export const OPEN_TIMEOUT_MS = 10_000;
/** Silence after speech before Deepgram marks a result `speech_final` (its own default is 10 ms, which splits a turn at every breath). */
export const ENDPOINTING_MS = 300;
/** Audio without words after the last word before Deepgram sends `UtteranceEnd` (1000 ms is the least Deepgram accepts usefully, with interim results). */
export const UTTERANCE_END_MS = 1000;
/** Audio kept while the socket opens: as much as the open timeout lets arrive (μ-law 8 kHz, one byte per sample), so none is lost before a timeout. */
export const MAX_QUEUED_BYTES = (8000 * OPEN_TIMEOUT_MS) / 1000;
/** After CloseStream, how long Deepgram gets to send its last results and close before the socket is ended from here. */
const CLOSE_GRACE_MS = 2000;

export interface DeepgramRecognizerOptions {
  /** DEEPGRAM_API_KEY. */
  apiKey?: string;
  /** DEEPGRAM_BASE_URL (ws, wss, http or https; `/v1/listen` is added): a proxy or the tests' double. */
  baseUrl?: string;
  /** Milliseconds without audio after which a KeepAlive is sent (tests shorten it). */
  keepAliveMs?: number;
  /** Milliseconds `open()` waits for the handshake. */
  openTimeoutMs?: number;
}

/** Deepgram's Flux models (`ListenV2Model`), served on `/v2/listen` only. */
export const FLUX_MODELS = ['flux-general-en', 'flux-general-multi'] as const;
/** Flux's `eot_threshold` per eagerness: Deepgram's default 0.7 for medium and auto; higher waits for more confidence (its range is 0.5–0.9). */
export const FLUX_EOT_THRESHOLD = { low: '0.8', medium: '0.7', auto: '0.7', high: '0.6' } as const;
/**
 * Flux's `eager_eot_threshold` per eagerness, sent with turnDetection semantic: Flux then sends
 * EagerEndOfTurn (a likely end, the words so far) before EndOfTurn, and the reply is prepared from it
 * (streaming-call.ts). Deepgram's range is 0.3–0.9, not above `eot_threshold`; each is 0.2 below its
 * eagerness's `eot_threshold` (auto: under Deepgram's default 0.7). Lower starts earlier and is
 * cancelled more often (Telnyx's Flux reference: 0.3–0.5 saves about 150–250 ms for 50–70% more
 * model requests); low keeps 0.6, so a patient agent rarely asks for a reply it drops.
 */
export const FLUX_EAGER_EOT_THRESHOLD = { low: '0.6', medium: '0.5', auto: '0.5', high: '0.4' } as const;

export function isFluxModel(model: string): boolean {
  return /^flux-/.test(model);
}

/**
 * The model a session opens: the agent's; with turnDetection semantic and a model of `/v1/listen`
 * (the default nova-3 included), Flux, Deepgram's turn-taking recognizer (English, or its
 * multilingual model for other languages).
 */
export function sessionModel(options: RecognizerOptions): string {
  if (options.turnDetection?.type !== 'semantic' || isFluxModel(options.model)) return options.model;
  return /^en(-|$)/i.test(options.language) ? 'flux-general-en' : 'flux-general-multi';
}

/**
 * Flux's handshake query (`/v2/listen`): μ-law 8 kHz, the model, its end-of-turn threshold by the
 * agent's eagerness and, with turnDetection semantic, the eager one (EagerEndOfTurn and TurnResumed
 * come only with it); key terms; the language as a hint to the multilingual model. A Flux sttModel
 * without turnDetection semantic asks for neither threshold: Deepgram's defaults, no eager events.
 */
export function fluxQuery(options: RecognizerOptions): URLSearchParams {
  const model = sessionModel(options);
  const query = new URLSearchParams({ model, encoding: 'mulaw', sample_rate: '8000' });
  const semantic = options.turnDetection?.type === 'semantic';
  const eagerness = semantic ? (options.turnDetection!.eagerness ?? 'auto') : null;
  if (eagerness && eagerness !== 'auto') query.set('eot_threshold', FLUX_EOT_THRESHOLD[eagerness]);
  if (eagerness) query.set('eager_eot_threshold', FLUX_EAGER_EOT_THRESHOLD[eagerness]);
  if (model === 'flux-general-multi') query.set('language_hint', options.language.split('-')[0]!.toLowerCase());
  for (const term of options.keyterms ?? []) if (term.trim()) query.append('keyterm', term.trim());
  return query;
}

/** The handshake's query: μ-law 8 kHz mono, interim results, endpointing (the agent's silenceMs, else 300 ms) and utterance ends, VAD events, the agent's model, language and key terms. */
export function listenQuery(options: RecognizerOptions): URLSearchParams {
  const silenceMs = options.turnDetection?.type === 'silence' ? options.turnDetection.silenceMs : null;
  const query = new URLSearchParams({
    model: options.model,
    language: options.language,
    encoding: 'mulaw',
    sample_rate: '8000',
    channels: '1',
    interim_results: 'true',
    endpointing: String(silenceMs ?? ENDPOINTING_MS),
    utterance_end_ms: String(UTTERANCE_END_MS),
    vad_events: 'true',
    smart_format: 'true',
  });
  // Key terms are a Nova-3 feature (`keyterm`, repeated); the older models' `keywords` take boosts and
  // Nova-3 refuses them, so other models get none rather than a guess.
  if (/^nova-3(-|$)/.test(options.model)) {
    for (const term of options.keyterms ?? []) if (term.trim()) query.append('keyterm', term.trim());
  }
  return query;
}

/** The words of a refused handshake: Deepgram's `dg-error` header (or the body's `err_msg`), never more than a line. */
async function refusal(response: IncomingMessage): Promise<string> {
  let body = '';
  try {
    response.setEncoding('utf8');
    for await (const chunk of response) {
      body += chunk as string;
      if (body.length > 4096) break;
    }
  } catch {
    // The body is a nicety: the header or the status says enough.
  }
  const header = response.headers['dg-error'];
  const candidates = [Array.isArray(header) ? header[0] : header, body];
  for (const candidate of candidates) {
    if (!candidate?.trim()) continue;
    try {
      const parsed = JSON.parse(candidate) as { err_msg?: unknown; message?: unknown };
      const words = parsed.err_msg ?? parsed.message;
      if (typeof words === 'string' && words.trim()) return words.trim();
    } catch {
      return candidate.trim();
    }
  }
  return response.statusMessage ?? '';
}

/** One line of someone else's words for a call record: short, and never the key even if a proxy echoed it. */
function clean(words: string, apiKey: string): string {
  const line = words.replace(/\s+/g, ' ').trim().slice(0, 300);
  return apiKey ? line.split(apiKey).join('[key]') : line;
}

type DeepgramMessage = { type?: unknown } & Record<string, unknown>;

function seconds(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0 ? value : undefined;
}

/** One call's Deepgram session: frames go up as they come (queued, bounded, while the socket opens), messages come back as events. */
class DeepgramSession implements RecognizerSession {
  private readonly queue: Buffer[] = [];
  private queuedBytes = 0;
  /** Frames dropped from the front of the queue because the socket took longer to open than the queue holds. */
  droppedBytes = 0;
  private lastSentAt = Date.now();
  private keepAlive: NodeJS.Timeout | undefined;
  private closing = false;
  /** The socket opened: from here an end we did not ask for is told as `lost` (before, `open()` rejects instead). */
  private live = false;
  private ended = false;
  /** Flux: the current turn's words so far, and the part of them already told as final (by finalize()), with its turn. */
  private fluxHeard = { turn: -1, words: '', endMs: undefined as number | undefined };
  private fluxTold = { turn: -1, words: '' };
  /** The end (seconds) and words of the last final, to drop a repeated one. */
  private lastFinal: { end: number; text: string; endOfTurn: boolean } | null = null;

  constructor(
    private readonly socket: WebSocket,
    private readonly events: RecognizerEvents,
    private readonly apiKey: string,
    private readonly keepAliveMs: number,
    /** A Flux session (`/v2/listen`): TurnInfo events; no KeepAlive or Finalize (its channel lists neither: the carrier's audio flows without a break). */
    private readonly flux = false,
  ) {
    socket.on('message', (data, isBinary) => {
      if (!isBinary) this.onMessage(data.toString());
    });
    socket.on('close', (code, reason) => this.onClose(code, reason.toString()));
    socket.on('error', (error) => this.lose(`Deepgram's connection failed (${clean(error.message, apiKey)})`));
  }

  /** close() was called (perhaps before the socket opened). */
  get closedByUs(): boolean {
    return this.closing;
  }

  /** The socket is open: what was queued goes first, then KeepAlives while no audio flows. */
  opened(): void {
    this.live = true;
    for (const frame of this.queue.splice(0)) this.socket.send(frame);
    this.queuedBytes = 0;
    this.lastSentAt = Date.now();
    if (this.flux) return;
    this.keepAlive = setInterval(
      () => {
        if (Date.now() - this.lastSentAt >= this.keepAliveMs) this.sendJson({ type: 'KeepAlive' });
      },
      Math.max(10, Math.floor(this.keepAliveMs / 2)),
    );
    this.keepAlive.unref();
  }

  send(ulaw: Buffer): void {
    // Deepgram's docs warn that an empty binary frame closes the stream unexpectedly: never send one.
    if (ulaw.length === 0 || this.closing || this.ended) return;
    if (this.socket.readyState === WebSocket.OPEN) {
      this.socket.send(ulaw);
      this.lastSentAt = Date.now();
      return;
    }
    if (this.socket.readyState !== WebSocket.CONNECTING) return;
    this.queue.push(Buffer.from(ulaw));
    this.queuedBytes += ulaw.length;
    while (this.queuedBytes > MAX_QUEUED_BYTES) {
      const dropped = this.queue.shift()!;
      this.queuedBytes -= dropped.length;
      this.droppedBytes += dropped.length;
    }
  }

  finalize(): void {
    if (this.closing) return;
    if (!this.flux) return this.sendJson({ type: 'Finalize' });
    // Flux has no Finalize: the turn's words so far are made final here, and later messages of the same
    // turn (whose transcript is the whole turn's) tell only what follows them.
    const heard = this.fluxHeard;
    const words = this.fluxWords(heard.turn, heard.words);
    if (!words) return;
    this.fluxTold = { turn: heard.turn, words: heard.words };
    this.events.final(words, false, heard.endMs);
  }

  close(): void {
    if (this.closing) return;
    this.closing = true;
    this.stopKeepAlive();
    if (this.socket.readyState === WebSocket.OPEN) {
      // Deepgram answers CloseStream with its last results and Metadata, then closes; those results
      // are not told (no event follows close()), and a Deepgram that does not close is ended here.
      this.sendJson({ type: 'CloseStream' });
      setTimeout(() => this.socket.terminate(), CLOSE_GRACE_MS).unref();
    } else {
      this.socket.terminate();
    }
  }

  /** Ends the session before it opened (open() failed): nothing is told. */
  abandon(): void {
    this.closing = true;
    this.stopKeepAlive();
    this.socket.removeAllListeners();
    this.socket.on('error', () => undefined);
    this.socket.terminate();
  }

  private sendJson(message: { type: 'KeepAlive' | 'Finalize' | 'CloseStream' }): void {
    if (this.socket.readyState !== WebSocket.OPEN) return;
    this.socket.send(JSON.stringify(message));
    this.lastSentAt = Date.now();
  }

  private stopKeepAlive(): void {
    clearInterval(this.keepAlive);
    this.keepAlive = undefined;
  }

  private onMessage(data: string): void {
    if (this.closing || this.ended) return;
    let message: DeepgramMessage;
    try {
      message = JSON.parse(data) as DeepgramMessage;
    } catch {
      return;
    }
    switch (message.type) {
      case 'TurnInfo':
        return this.onTurnInfo(message);
      case 'FatalError':
        return this.lose(`Deepgram ended the session (${clean(`${String(message.code ?? '')} ${String(message.description ?? '')}`, this.apiKey)})`);
      case 'Results':
        return this.onResults(message);
      case 'SpeechStarted':
        return this.events.speechStarted();
      case 'UtteranceEnd': {
        const lastWordEnd = seconds(message.last_word_end);
        return this.events.utteranceEnd(lastWordEnd === undefined ? undefined : Math.round(lastWordEnd * 1000));
      }
      // Metadata (after CloseStream) and anything newer carry nothing the pipeline uses.
    }
  }

  /**
   * Flux: StartOfTurn (speech began), Update (the turn's words so far), EagerEndOfTurn (its words so
   * far, and a likely end: `eagerEndOfTurn`), TurnResumed (the caller went on: `turnResumed`),
   * EndOfTurn (its words, final: the turn is over; Deepgram: always the last EagerEndOfTurn's words
   * when one came since the last TurnResumed).
   */
  private onTurnInfo(message: DeepgramMessage): void {
    const whole = typeof message.transcript === 'string' ? message.transcript.trim() : '';
    const turn = typeof message.turn_index === 'number' ? message.turn_index : -1;
    const event = message.event;
    const words = Array.isArray(message.words) ? (message.words as { end?: unknown }[]) : [];
    const end = seconds(words.at(-1)?.end) ?? seconds(message.audio_window_end);
    const endMs = end === undefined ? undefined : Math.round(end * 1000);
    this.fluxHeard = { turn, words: whole, endMs };
    const transcript = this.fluxWords(turn, whole);
    if (event === 'StartOfTurn') this.events.speechStarted();
    if (event === 'EndOfTurn') {
      this.fluxHeard = { turn: -1, words: '', endMs: undefined };
      this.events.final(transcript, true, endMs);
      return;
    }
    if (transcript) this.events.interim(transcript);
    if (event === 'EagerEndOfTurn' && transcript) this.events.eagerEndOfTurn?.(transcript, endMs);
    if (event === 'TurnResumed') this.events.turnResumed?.();
  }

  /** A Flux transcript of `turn` less the words already told as final of that turn. */
  private fluxWords(turn: number, whole: string): string {
    const told = this.fluxTold;
    if (told.turn !== turn || !told.words || !whole.startsWith(told.words)) return whole;
    return whole.slice(told.words.length).trim();
  }

  private onResults(message: DeepgramMessage): void {
    const alternative = (message.channel as { alternatives?: { transcript?: unknown; words?: { end?: unknown }[] }[] } | undefined)?.alternatives?.[0];
    const text = typeof alternative?.transcript === 'string' ? alternative.transcript.trim() : '';
    if (message.is_final !== true) {
      if (text) this.events.interim(text);
      return;
    }
    const endOfTurn = message.speech_final === true;
    // A final without words still matters when it ends the turn (its words came in earlier finals).
    if (!text && !endOfTurn) return;
    const start = seconds(message.start);
    const duration = seconds(message.duration);
    const windowEnd = start !== undefined && duration !== undefined ? start + duration : undefined;
    // Deepgram's finals cover the audio in order, each once: one that repeats the last (same end,
    // same words) would put its words in the transcript twice.
    const last = this.lastFinal;
    if (windowEnd !== undefined && last && windowEnd <= last.end + 1e-6 && text === last.text && endOfTurn === last.endOfTurn) return;
    if (windowEnd !== undefined) this.lastFinal = { end: windowEnd, text, endOfTurn };
    // The result's window (start + duration) runs to where Deepgram decided, past the trailing
    // silence it waited for; the last word's end is where the caller stopped speaking, which is
    // what the pipeline times its reply from. Without words, the window's end.
    const wordEnd = seconds(alternative?.words?.at(-1)?.end);
    const audioEnd = wordEnd ?? windowEnd;
    this.events.final(text, endOfTurn, audioEnd === undefined ? undefined : Math.round(audioEnd * 1000));
  }

  private onClose(code: number, reason: string): void {
    this.stopKeepAlive();
    const words = reason ? `code ${code}: ${clean(reason, this.apiKey)}` : `code ${code}`;
    this.lose(`Deepgram closed the session (${words})`);
  }

  /** Tells `lost` once, unless we closed the session ourselves. */
  private lose(reason: string): void {
    this.stopKeepAlive();
    if (this.ended || !this.live) return;
    this.ended = true;
    if (!this.closing) this.events.lost(reason);
  }
}

/** A session whose socket is still opening: audio sent now is queued and goes up first once it opens. */
export interface StartedDeepgramSession {
  session: RecognizerSession;
  /** Resolves when the socket is open; rejects with Deepgram's words (never the key) when it cannot open. */
  opened: Promise<void>;
}

/** Deepgram as the streaming pipeline's recognizer: DEEPGRAM_API_KEY, DEEPGRAM_BASE_URL. */
export class DeepgramRecognizer implements Recognizer {
  readonly name = 'deepgram' as const;
  readonly defaultModel = DEFAULT_DEEPGRAM_MODEL;

  constructor(private readonly options: DeepgramRecognizerOptions) {}

  missing(): string | null {
    return this.options.apiKey ? null : 'DEEPGRAM_API_KEY is not set';
  }

  /**
   * Starts a session without waiting for the socket: the caller may send audio at once (it is
   * queued, up to the open timeout's worth, and sent first, in order). `open()` is this and a wait.
   */
  start(options: RecognizerOptions, events: RecognizerEvents): StartedDeepgramSession {
    const apiKey = this.options.apiKey;
    if (!apiKey) throw new Error('DEEPGRAM_API_KEY is not set: the Deepgram recognizer cannot be reached');
    const base = (this.options.baseUrl ?? DEFAULT_DEEPGRAM_BASE_URL).replace(/\/+$/, '');
    const flux = isFluxModel(sessionModel(options));
    const url = flux ? `${base}/v2/listen?${fluxQuery(options).toString()}` : `${base}/v1/listen?${listenQuery(options).toString()}`;
    const timeoutMs = this.options.openTimeoutMs ?? OPEN_TIMEOUT_MS;
    const socket = new WebSocket(url, { headers: { Authorization: `Token ${apiKey}` }, maxPayload: 4 * 1024 * 1024 });
    const session = new DeepgramSession(socket, events, apiKey, this.options.keepAliveMs ?? KEEPALIVE_MS, flux);
    const opened = new Promise<void>((resolve, reject) => {
      let settled = false;
      const fail = (message: string) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        session.abandon();
        reject(new Error(message));
      };
      const timer = setTimeout(() => fail(`Deepgram did not open the session within ${timeoutMs / 1000} s`), timeoutMs);
      socket.once('unexpected-response', (_request, response) => {
        void refusal(response).then((words) => fail(`Deepgram refused the session (HTTP ${response.statusCode}${words ? `: ${clean(words, apiKey)}` : ''})`));
      });
      socket.once('error', (error) =>
        fail(session.closedByUs ? 'The Deepgram session was closed before it opened' : `Deepgram could not be reached (${clean(error.message, apiKey)})`),
      );
      socket.once('open', () => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        session.opened();
        resolve();
      });
    });
    return { session, opened };
  }

  async open(options: RecognizerOptions, events: RecognizerEvents): Promise<RecognizerSession> {
    const started = this.start(options, events);
    await started.opened;
    return started.session;
  }
}
