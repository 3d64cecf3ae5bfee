import { createServer, type IncomingHttpHeaders, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { errorResponseProblem, speechRequestProblem, type OpenAiError } from './openai-speech-spec.js';
import { waiting } from '../helpers/eventually.js';

// An OpenAI speech synthesis double on loopback: `POST /v1/audio/speech`, the REST endpoint the
// streaming pipeline's OpenAI synthesizer calls once per sentence. It checks what it is sent as the
// service does: the `Authorization: Bearer` key (a wrong one gets OpenAI's 401 and its error JSON,
// quoting the key masked as OpenAI does), and the body against `CreateSpeechRequest` as OpenAI
// publishes it (openai-speech.schemas.json, closed to unknown keys), refusing with a 400 in OpenAI's
// error shape. A valid request is answered with deterministic audio in `pcm` (24 kHz, 16-bit
// little-endian, mono): a tone per word, its frequency taken from the word, its length from the
// word's characters, sent in several chunks of an odd size (a sample is split across two chunks).
// It records every request in the order it came and whether the client hung up early. Faults, per
// request: an HTTP refusal (429, 500...), a hang (no answer at all), a drop mid-body, a stall
// mid-body, a first byte sent late, a pace slower than real time.

export const SPEECH_HZ = 24_000;
/** Milliseconds of tone per character of a word, then GAP_MS of silence after it. */
export const MS_PER_CHAR = 12;
export const GAP_MS = 30;
/** Bytes per chunk of the body: odd, so samples are split across chunks. */
export const CHUNK_BYTES = 2401;
/** The key the double accepts unless a test sets another. */
export const SPEECH_TEST_KEY = 'sk-test-speech-000000000000000000abcd';

/** The voices OpenAI lists for its speech endpoint (CreateSpeechRequest's description names them all). */
const VOICES = new Set(['alloy', 'ash', 'ballad', 'coral', 'echo', 'fable', 'onyx', 'nova', 'sage', 'shimmer', 'verse', 'marin', 'cedar']);

/** A word's tone: 300-1400 Hz from its letters, so two words that differ are likely told apart by ear. */
export function wordHz(word: string): number {
  let sum = 0;
  for (const char of word.toLowerCase()) sum = (sum * 31 + char.charCodeAt(0)) % 1_000_003;
  return 300 + (sum % 23) * 50;
}

/** The PCM the double speaks for `input`: each word a tone, then a short silence. */
export function speechPcm(input: string): Buffer {
  const parts: Buffer[] = [];
  for (const word of input.split(/\s+/).filter(Boolean)) {
    const hz = wordHz(word);
    const tone = Buffer.alloc(Math.round((SPEECH_HZ * word.length * MS_PER_CHAR) / 1000) * 2);
    for (let i = 0; i < tone.length / 2; i++) tone.writeInt16LE(Math.round(8000 * Math.sin((2 * Math.PI * hz * i) / SPEECH_HZ)), i * 2);
    parts.push(tone, Buffer.alloc(Math.round((SPEECH_HZ * GAP_MS) / 1000) * 2));
  }
  return Buffer.concat(parts);
}

export type SpeechFault =
  /** Answer with this HTTP status and OpenAI's error JSON for it (429 rate limit, 500 server error, 503...). */
  | { status: number }
  /** Take the request and answer nothing, ever. */
  | { hang: true }
  /** Send this many bytes of the body, then cut the connection without ending the body. */
  | { dropAfterBytes: number }
  /** Send this many bytes of the body, then nothing more, the connection kept. */
  | { stallAfterBytes: number }
  /** Hold the answer (headers and body) this long. */
  | { firstByteDelayMs: number }
  /** Pace the body this many times slower than the audio it carries (1.5: a second of audio takes 1.5 s). */
  | { slowerThanRealTime: number };

/** One request as the double saw it. */
export interface SpeechRequest {
  /** Its place among the requests received (0, 1, ...). */
  index: number;
  headers: IncomingHttpHeaders;
  body: unknown;
  /** The `input` of a valid request. */
  input: string | null;
  /** The HTTP status answered. */
  status: number | null;
  /** Bytes of audio sent. */
  sentBytes: number;
  /** The whole body was sent. */
  completed: boolean;
  /** The client closed the connection before the body was complete (a cancel). */
  closedEarly: boolean;
}

/** What the double refused or got wrong, so a test can require there was nothing. */
export interface SpeechProblem {
  /** `refused`: a request the service would refuse; `unsupported`: valid, but not something the double can answer (mp3, sse); `sent`: an error JSON of the double's own not in OpenAI's shape. */
  kind: 'refused' | 'unsupported' | 'sent';
  body: unknown;
  message: string;
}

export interface FakeSpeech {
  /** The base URL to give the synthesizer (`…/v1`, as OPENAI_BASE_URL). */
  baseUrl: string;
  /** The key accepted in `Authorization: Bearer`. */
  apiKey: string;
  requests: SpeechRequest[];
  problems: SpeechProblem[];
  /** The fault for a request, by its input and its place; none by default. */
  fault: (input: string, index: number) => SpeechFault | null;
  /** Milliseconds between two chunks when no fault paces them; default 1. */
  chunkPaceMs: number;
  /** Resolves once `count` requests have arrived. */
  waitForRequests(count: number, timeoutMs?: number): Promise<SpeechRequest[]>;
  /** Resolves once every request received so far has ended (completed, cut or closed by the client). */
  settled(timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

/** OpenAI's error JSON for a status, in its words where they are known. */
function statusError(status: number): OpenAiError {
  if (status === 429)
    return {
      message:
        'Rate limit reached for gpt-4o-mini-tts in organization org-test on requests per min (RPM): Limit 50, Used 50, Requested 1. Please try again in 1.2s.',
      type: 'requests',
      param: null,
      code: 'rate_limit_exceeded',
    };
  if (status >= 500)
    return { message: 'The server had an error while processing your request. Sorry about that!', type: 'server_error', param: null, code: null };
  return { message: `The request was refused (HTTP ${status}).`, type: 'invalid_request_error', param: null, code: null };
}

/** OpenAI masks a wrong key in its 401: its first characters and last four. */
function masked(key: string): string {
  return key.length <= 8 ? '****' : `${key.slice(0, 3)}${'*'.repeat(Math.max(4, key.length - 7))}${key.slice(-4)}`;
}

export async function startFakeSpeech(): Promise<FakeSpeech> {
  const open = new Set<ServerResponse>();
  const ended: (() => void)[] = [];
  const arrived: (() => void)[] = [];
  const fake: FakeSpeech = {
    baseUrl: '',
    apiKey: SPEECH_TEST_KEY,
    requests: [],
    problems: [],
    fault: () => null,
    chunkPaceMs: 1,
    waitForRequests: (count, timeoutMs) =>
      waiting(
        `${count} requests at the speech double`,
        new Promise((resolve) => {
          const wait = () => {
            if (fake.requests.length >= count) resolve(fake.requests.slice(0, count));
            else arrived.push(wait);
          };
          wait();
        }),
        { timeoutMs, describe: () => `${fake.requests.length} requests` },
      ),
    settled: (timeoutMs) =>
      waiting(
        'the speech requests to end',
        new Promise<void>((resolve) => {
          const wait = () => {
            if (open.size === 0) resolve();
            else ended.push(wait);
          };
          wait();
        }),
        { timeoutMs, describe: () => `${open.size} still open` },
      ),
    close: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };

  const answer = (res: ServerResponse, record: SpeechRequest | null, status: number, error: OpenAiError) => {
    const body = { error };
    const problem = errorResponseProblem(body);
    if (problem) fake.problems.push({ kind: 'sent', body, message: problem });
    if (record) record.status = status;
    res.writeHead(status, { 'Content-Type': 'application/json' }).end(JSON.stringify(body));
  };

  const server: Server = createServer((req, res) => void handle(req, res));
  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    if (req.method !== 'POST' || new URL(req.url ?? '/', 'http://fake').pathname !== '/v1/audio/speech') {
      return answer(res, null, 404, { message: `Invalid URL (${req.method} ${req.url})`, type: 'invalid_request_error', param: null, code: null });
    }
    const auth = /^Bearer (.+)$/.exec(req.headers.authorization ?? '');
    if (!auth) {
      return answer(res, null, 401, {
        message:
          "You didn't provide an API key. You need to provide your API key in an Authorization header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY). You can obtain an API key from https://platform.openai.com/account/api-keys.",
        type: 'invalid_request_error',
        param: null,
        code: null,
      });
    }
    if (auth[1] !== fake.apiKey) {
      return answer(res, null, 401, {
        message: `Incorrect API key provided: ${masked(auth[1]!)}. You can find your API key at https://platform.openai.com/account/api-keys.`,
        type: 'invalid_request_error',
        param: null,
        code: 'invalid_api_key',
      });
    }
    let body: unknown;
    try {
      if (!/^application\/json\b/.test(req.headers['content-type'] ?? '')) throw new Error('not JSON');
      body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    } catch {
      const error: OpenAiError = {
        message: 'We could not parse the JSON body of your request. The OpenAI API expects a JSON payload.',
        type: 'invalid_request_error',
        param: null,
        code: null,
      };
      fake.problems.push({ kind: 'refused', body: Buffer.concat(chunks).toString('utf8'), message: error.message });
      return answer(res, null, 400, error);
    }
    const record: SpeechRequest = {
      index: fake.requests.length,
      headers: req.headers,
      body,
      input: null,
      status: null,
      sentBytes: 0,
      completed: false,
      closedEarly: false,
    };
    fake.requests.push(record);
    for (const notify of arrived.splice(0)) notify();
    const refusal = speechRequestProblem(body) ?? voiceProblem(body as Record<string, unknown>);
    if (refusal) {
      fake.problems.push({ kind: 'refused', body, message: refusal.message });
      return answer(res, record, 400, refusal);
    }
    const request = body as { input: string; response_format?: string; stream_format?: string };
    if (request.response_format !== 'pcm' || (request.stream_format ?? 'audio') !== 'audio') {
      const message = `The double answers response_format "pcm" as an audio stream only (asked: ${request.response_format ?? 'mp3'}, ${request.stream_format ?? 'audio'}).`;
      fake.problems.push({ kind: 'unsupported', body, message });
      return answer(res, record, 400, { message, type: 'invalid_request_error', param: 'response_format', code: null });
    }
    record.input = request.input;
    const fault = fake.fault(request.input, record.index);
    if (fault && 'status' in fault) return answer(res, record, fault.status, statusError(fault.status));
    open.add(res);
    res.once('close', () => {
      if (!record.completed) record.closedEarly = true;
      open.delete(res);
      if (open.size === 0) for (const notify of ended.splice(0)) notify();
    });
    if (fault && 'hang' in fault) return;
    if (fault && 'firstByteDelayMs' in fault) await new Promise((resolve) => setTimeout(resolve, fault.firstByteDelayMs));
    if (res.destroyed) return;
    record.status = 200;
    res.writeHead(200, { 'Content-Type': 'application/octet-stream', 'Transfer-Encoding': 'chunked' });
    const pcm = speechPcm(request.input);
    for (let offset = 0; offset < pcm.length; offset += CHUNK_BYTES) {
      if (res.destroyed) return;
      let chunk = pcm.subarray(offset, offset + CHUNK_BYTES);
      if (fault && 'dropAfterBytes' in fault && offset + chunk.length > fault.dropAfterBytes) {
        chunk = chunk.subarray(0, Math.max(0, fault.dropAfterBytes - offset));
        if (chunk.length > 0) res.write(chunk);
        record.sentBytes += chunk.length;
        // Cut without the chunked body's last chunk: the client sees the body end early.
        await new Promise((resolve) => setTimeout(resolve, 5));
        res.socket?.destroy();
        return;
      }
      if (fault && 'stallAfterBytes' in fault && offset >= fault.stallAfterBytes) return;
      res.write(chunk);
      record.sentBytes += chunk.length;
      const audioMs = (chunk.length / 2 / SPEECH_HZ) * 1000;
      const pace = fault && 'slowerThanRealTime' in fault ? audioMs * fault.slowerThanRealTime : fake.chunkPaceMs;
      await new Promise((resolve) => setTimeout(resolve, pace));
    }
    if (res.destroyed) return;
    record.completed = true;
    res.end();
  }

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  fake.baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  return fake;
}

/** A built-in voice the service knows, or a custom one by id: the service refuses another name. */
function voiceProblem(body: Record<string, unknown>): OpenAiError | null {
  const voice = body.voice;
  if (typeof voice !== 'string' || VOICES.has(voice)) return null;
  return { message: `Invalid value for 'voice': '${voice}' is not a supported voice.`, type: 'invalid_request_error', param: 'voice', code: 'invalid_value' };
}
