// Rows of the bench's voice section: the streaming provider's calls arriving the gateway's other two
// ways, beside the Twilio row of the same run (`--voice-arrivals`, voice.ts dials them):
//
// - telnyx: the signed TeXML inbound webhook (Ed25519 over `telnyx-timestamp|body`, by the loopback
//   Telnyx's key, test/support/fake-telnyx.ts) of a number on a Telnyx connection, then Telnyx's side
//   of the answer's <Connect><Stream bidirectionalMode="rtp" bidirectionalCodec="PCMU">
//   (test/support/telnyx-media-caller.ts: Telnyx Media Streaming's JSON frames, what it is sent checked
//   against Telnyx's page, marks returned once played);
// - web: a browser's call on the web-call socket (/talk/socket, src/modules/web-calls/talk-route.ts),
//   a token from POST /api/web-calls, then the page's side of the socket (WebCaller below, as
//   src/modules/web-calls/talk-client.ts and its worklet speak it).
//
// The audio is the same on all three: G.711 μ-law, 8 kHz, mono, in 20 ms frames both ways (base64 in
// JSON text frames on Twilio and Telnyx, raw binary frames of 160 bytes on the web socket), so the
// pipeline behind them does the same work and the rows differ by the framing and the call's set-up.
import { performance } from 'node:perf_hooks';
import WebSocket from 'ws';
import { openSocket } from '../support/open-socket.js';
import type { VoiceArrival } from './options.js';
import type { Spread, VoiceProviderRun } from './voice.js';

const SAMPLE_RATE = 8000;
/** The page's subprotocol (web-media-link.ts's TALK_PROTOCOL); the token travels as a second one. */
const TALK_PROTOCOL = 'gateway-talk.v1';
/** The JSON frames the gateway sends the page (web-media-link.ts): anything else is a problem. */
const CONTROL_TYPES = new Set(['ready', 'transcript', 'mark', 'clear']);

/**
 * The page's side of a web call, as talk-client.ts and its playback worklet speak it: binary frames of
 * μ-law both ways; the agent's audio played in real time (a queue, as the worklet's), each `mark`
 * echoed once the audio before it has played, and at once on a `clear` (which drops what was not
 * played); `{"type":"hangup"}` then a close to hang up. Each audio frame's arrival is stamped
 * (performance.now()) for the bench's relay times.
 */
export class WebCaller {
  /** When each audio frame arrived (performance.now()), in order. */
  readonly mediaArrivals: number[] = [];
  /** The gateway's JSON frames, in order. */
  readonly controls: Record<string, unknown>[] = [];
  /** What the gateway sent otherwise than the page's protocol says. */
  readonly problems: string[] = [];
  readonly closed: Promise<{ code: number; reason: string }>;
  private cursor = 0;
  private readonly markTimers = new Map<NodeJS.Timeout, string>();

  private constructor(private readonly socket: WebSocket) {
    this.closed = new Promise((resolve) => socket.once('close', (code, reason) => resolve({ code, reason: reason.toString() })));
    socket.on('close', () => this.markTimers.forEach((_name, timer) => clearTimeout(timer)));
    socket.on('message', (data, isBinary) => {
      const arrivedAt = performance.now();
      if (isBinary) this.onAudio(data as Buffer, arrivedAt);
      else this.onControl(data.toString());
    });
  }

  /** Opens the talk socket as the page does (the subprotocols, the page's Origin): the caller, or the HTTP status it was refused with. */
  static open(base: string, token: string, origin: string): Promise<WebCaller | { refused: number }> {
    return openSocket(`${base.replace(/^http/, 'ws')}/talk/socket`, [TALK_PROTOCOL, token], { origin }).then((socket) =>
      'refused' in socket ? socket : new WebCaller(socket),
    );
  }

  /** The microphone's next 20 ms frame, as the capture worklet posts it. */
  sendAudio(frame: Buffer): void {
    if (this.socket.readyState === WebSocket.OPEN) this.socket.send(frame, { binary: true });
  }

  /** The page's hang-up button: `{"type":"hangup"}`, then the close. */
  stop(): void {
    this.sendControl({ type: 'hangup' });
  }

  hangUp(): void {
    this.socket.close(1000);
  }

  /** Until the gateway said `ready` (its call id), or `timeoutMs` passed. */
  async ready(timeoutMs: number): Promise<string> {
    const until = performance.now() + timeoutMs;
    for (;;) {
      const ready = this.controls.find((message) => message.type === 'ready');
      if (ready && typeof ready.callId === 'string') return ready.callId;
      if (performance.now() > until) throw new Error('the web call never said ready');
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
  }

  private onAudio(frame: Buffer, arrivedAt: number): void {
    this.mediaArrivals.push(arrivedAt);
    if (frame.length === 0) this.problems.push('an empty audio frame');
    const now = Date.now();
    this.cursor = Math.max(now, this.cursor) + (frame.length / SAMPLE_RATE) * 1000;
  }

  private onControl(text: string): void {
    let message: Record<string, unknown>;
    try {
      message = JSON.parse(text) as Record<string, unknown>;
    } catch {
      this.problems.push(`a text frame that is not JSON: ${text.slice(0, 80)}`);
      return;
    }
    if (!CONTROL_TYPES.has(String(message.type))) this.problems.push(`a control the page does not read: ${text.slice(0, 80)}`);
    if (this.controls.length < 1000) this.controls.push(message);
    const now = Date.now();
    if (message.type === 'clear') {
      this.cursor = now;
      for (const [timer, name] of [...this.markTimers]) {
        clearTimeout(timer);
        this.markTimers.delete(timer);
        this.sendControl({ type: 'mark', name });
      }
    } else if (message.type === 'mark') {
      const name = String(message.name);
      const timer = setTimeout(
        () => {
          this.markTimers.delete(timer);
          this.sendControl({ type: 'mark', name });
        },
        Math.max(0, this.cursor - now),
      );
      this.markTimers.set(timer, name);
    }
  }

  private sendControl(message: Record<string, unknown>): void {
    if (this.socket.readyState === WebSocket.OPEN) this.socket.send(JSON.stringify(message));
  }
}

/** The arrivals' captions: the framing of each, the audio the same. */
const FRAMING: Record<VoiceArrival, string> = {
  twilio: 'Twilio: the signed `/inbound` webhook, Media Streams JSON frames (base64 μ-law)',
  telnyx:
    'Telnyx: the Ed25519-signed TeXML `/inbound` webhook, `<Connect><Stream bidirectionalMode="rtp">`, Telnyx Media Streaming JSON frames (base64 μ-law PCMU)',
  web: 'web: a token from `POST /api/web-calls`, then `/talk/socket` with binary frames of raw μ-law (the page resamples its microphone to 8 kHz; answered when the socket is let in, so its first-audio baseline has no carrier part)',
};

/** The streaming provider's rows by arrival: CPU per call-second and the added latency per turn, one row per arrival and step. */
export function arrivalsMarkdown(runs: VoiceProviderRun[], summary: { database: string; duration: number; machine: string }): string {
  const rows = runs.filter((run) => run.provider === 'streaming');
  if (!rows.some((run) => run.arrival !== 'twilio')) return '';
  const fmt = (value: number | null | undefined, digits = 2) => (value === null || value === undefined ? 'n/a' : value.toFixed(digits));
  const pair = (value: Spread | { p50: number; p99: number } | null | undefined) => `${fmt(value?.p50)} / ${fmt(value?.p99)}`;
  return [
    `Arrivals (streaming, ${summary.database}): the same streaming agent, callers and doubles, the calls coming in ${rows.length} ways. ` +
      `The audio is the same on each, G.711 μ-law 8 kHz mono in 20 ms frames both ways (no transcoding at the door); only the framing and the set-up differ: ` +
      `${rows.map((run) => FRAMING[run.arrival]).join('; ')}. ${summary.duration} s measured per step. ${summary.machine}.`,
    '',
    '| arrival | calls | turns | added latency per turn p50 / p99 (ms) | gatewayMs p50 / p99 (ms) | frames dropped in / out | lost at start | failed calls | CPU ms per call-second | RSS per call (MB) | load |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
    ...rows.flatMap((run) =>
      run.steps.map(
        (step) =>
          `| ${run.arrival} | ${step.calls} | ${step.turns} | ${pair(step.addedMs)} | ${pair(step.streaming?.gatewayMs)} | ` +
          `${step.droppedIn} / ${step.droppedOut} of ${step.framesIn} / ${step.framesOut} | ${step.lostAtStart} | ${step.streaming?.failedCalls ?? 'n/a'} | ` +
          `${fmt(step.cpuMsPerCallSecond)} | ${fmt(step.rssMbPerCall)} | ${fmt(step.loadAverage)} |`,
      ),
    ),
  ].join('\n');
}
