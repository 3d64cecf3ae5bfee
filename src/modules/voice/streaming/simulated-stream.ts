import type { EntityManager } from '@mikro-orm/postgresql';
import { query } from '../../../db/sql.js';
import { BuiltinSynthesizer, encodeSpeech } from './builtin-speech.js';
import { DEFAULT_TURN_RULES, StreamingCall, type StreamingDeps, type TurnRules } from './streaming-call.js';
import type { MediaEvent, MediaLink } from '../../telephony/carriers/media-link.js';

/** The simulated line plays this many milliseconds of audio each TICK_MS of wall time (ten times real time). */
export const SIMULATED_SPEED = 10;
const TICK_MS = 20;
const FRAME_BYTES = 160;
const BYTES_PER_MS = 8;
/** The simulated caller speaks its next line over an agent reply that has played this long (people do). */
export const BARGE_IN_AFTER_MS = 4_000;
/** A simulated call hangs up after this much audio, whatever happens. */
const MAX_CALL_MS = 10 * 60_000;
const KEYS = /^[0-9*#]+$/;
const SILENCE = Buffer.alloc(FRAME_BYTES, 0xff);
/** The simulated caller waits this much audio of the agent's silence for an answer, then goes on. */
const PATIENCE_MS = 30_000;
/** The caller takes what it heard as one line once the agent has been quiet this long (300 ms, as the builtin recognizer judges a turn over). */
const LINE_END_MS = 300;

/** The pipeline's wall-clock rules on the simulated line's clock (SIMULATED_SPEED times real time); those counted in the caller's audio need nothing, nor the providers' answer limit. */
const SIMULATED_RULES: Partial<TurnRules> = {
  graceMs: DEFAULT_TURN_RULES.graceMs / SIMULATED_SPEED,
  keysTimeoutMs: DEFAULT_TURN_RULES.keysTimeoutMs / SIMULATED_SPEED,
};

/** What a simulated streaming call heard of the agent, line by line (each ended by 300 ms of the agent's silence). */
export interface SimulatedStreamResult {
  heard: string[];
  /** The caller's lines as it spoke them (keys included), in order. */
  said: string[];
  bargeIns: number;
}

interface CallRow {
  id: string;
  organization_id: string;
  agent_id: string | null;
  contact_id: string | null;
  to_number: string;
  pipeline_mode: string | null;
}

/**
 * The simulator's media stream: the caller's phone and a carrier's media stream in-process, for a
 * call whose agent is a streaming one. The agent side is the real pipeline (StreamingCall) with the
 * builtin recognizer and synthesizer; the caller side speaks its lines as builtin code (what the
 * builtin recognizer decodes exactly), sends its frames without a break (silence between lines),
 * plays the agent's audio at SIMULATED_SPEED, echoes its marks once played and honours `clear`. The
 * agent speaks (eSpeak NG), and the caller hears its words by their text: offline, each piece of audio
 * carries the words it ends (`caption`), taken as heard once that audio has played, so what the
 * caller hears, and when, does not hang on a recognizer of speech. While the builtin voice is still
 * synthesizing a push, the line holds still (no frame either way), so a slow or busy machine changes
 * nothing the caller hears: the campaigns stay deterministic. It waits for the agent to finish before
 * its next line, speaks over a reply longer than BARGE_IN_AFTER_MS, presses a line of keys as DTMF
 * (then `#`), and hangs up once the agent has answered its last line.
 */
export class SimulatedStreams {
  constructor(private readonly deps: Omit<StreamingDeps, 'offline'> & { em: EntityManager }) {}

  /** Plays the call; null when its agent is not a streaming one (nothing was done). */
  async play(callId: string, lines: readonly string[]): Promise<SimulatedStreamResult | null> {
    const [row] = await query<CallRow>(
      this.deps.em.fork(),
      `select c.id, c.organization_id, c.agent_id, c.contact_id, c.to_number, a.voice_config->>'pipelineMode' as pipeline_mode
         from calls c left join agents a on a.id = c.agent_id and a.organization_id = c.organization_id where c.id = ?`,
      [callId],
    );
    if (!row?.agent_id || row.pipeline_mode !== 'streaming') return null;
    const synthesizer = this.deps.synthesizers.builtin;
    const caller = new SimulatedCaller(lines, synthesizer instanceof BuiltinSynthesizer ? synthesizer.busy : { count: 0 });
    const pipeline = new StreamingCall({ ...this.deps, offline: true, rules: { ...SIMULATED_RULES, ...this.deps.rules } }, caller.link, {
      id: row.id,
      organizationId: row.organization_id,
      agentId: row.agent_id,
      contactId: row.contact_id,
      to: row.to_number,
    });
    caller.attach(pipeline);
    await pipeline.start(() => caller.hangUp());
    await caller.done;
    pipeline.carrierClosed();
    await pipeline.settled();
    return { heard: caller.heard, said: caller.said, bargeIns: caller.bargeIns };
  }
}

class SimulatedCaller {
  readonly heard: string[] = [];
  readonly said: string[] = [];
  bargeIns = 0;
  readonly done: Promise<void>;
  private finishDone!: () => void;
  private pipeline: StreamingCall | null = null;
  private readonly lines: string[];
  private closed = false;
  private ticking = false;
  private timer: NodeJS.Timeout | null = null;
  /** The agent's audio not yet played, and the marks after it (at byte offsets into what was queued). */
  private incoming: Buffer[] = [];
  private incomingBytes = 0;
  private queuedTotal = 0;
  private playedTotal = 0;
  private marks: { at: number; name: string }[] = [];
  /** The agent's words beside its audio (at byte offsets into what was queued), and those heard of the line not yet ended. */
  private captions: { at: number; text: string }[] = [];
  private hearing = '';
  /** The caller's own line being spoken (audio left to send), and keys to press. */
  private outgoing: Buffer | null = null;
  private keys: string[] = [];
  /** Audio of the current agent reply played since it began (for barge-in), and whether the agent is mid-reply. */
  private replyPlayedMs = 0;
  private agentSpeaking = false;
  private interruptedThisReply = false;
  private quietMs = 0;
  private callMs = 0;
  /** How many agent lines the caller had heard when they last spoke. */
  private heardAtLastLine = 0;

  constructor(
    lines: readonly string[],
    /** The builtin synthesizer's pushes being synthesized: the line holds still while there are any. */
    private readonly synthesizing: { count: number },
  ) {
    this.lines = lines.map((line) => line.trim()).filter(Boolean);
    this.done = new Promise((resolve) => {
      this.finishDone = resolve;
    });
  }

  readonly link: MediaLink = {
    audio: (payload, caption) => this.played(Buffer.from(payload, 'base64'), caption),
    mark: (name) => {
      if (!this.closed) this.marks.push({ at: this.queuedTotal, name });
    },
    clear: () => this.cleared(),
    close: () => this.hangUp(),
    get open() {
      return true;
    },
  };

  attach(pipeline: StreamingCall): void {
    this.pipeline = pipeline;
    this.timer = setInterval(() => void this.tick(), TICK_MS);
  }

  hangUp(): void {
    if (this.closed) return;
    this.closed = true;
    if (this.timer) clearInterval(this.timer);
    this.finishDone();
  }

  private played(audio: Buffer, caption: string | undefined): void {
    if (this.closed) return;
    this.incoming.push(audio);
    this.incomingBytes += audio.length;
    this.queuedTotal += audio.length;
    if (caption) this.captions.push({ at: this.queuedTotal, text: caption });
    this.agentSpeaking = true;
  }

  private cleared(): void {
    if (this.closed) return;
    // A carrier drops what it holds and sends back the marks still waiting.
    this.incoming = [];
    this.playedTotal += this.incomingBytes;
    this.incomingBytes = 0;
    this.queuedTotal = this.playedTotal;
    this.captions = [];
    for (const mark of this.marks.splice(0)) this.toAgent({ kind: 'mark', name: mark.name });
    this.agentSpeaking = false;
  }

  private toAgent(event: MediaEvent): void {
    if (!this.closed) this.pipeline?.fromCarrier(event);
  }

  /**
   * One tick: SIMULATED_SPEED frames of the line both ways, yielding to the event loop between frames
   * so the pipeline and its synthesizer keep up as they would with a line played in real time (a
   * batch of frames played at once would run ahead of audio still being synthesized, a gap no real
   * line has).
   */
  private async tick(): Promise<void> {
    if (this.ticking) return;
    this.ticking = true;
    for (let frame = 0; frame < SIMULATED_SPEED && !this.closed; frame++) {
      if (this.synthesizing.count > 0) break;
      this.frame();
      await new Promise((resolve) => setImmediate(resolve));
    }
    this.ticking = false;
  }

  private frame(): void {
    this.callMs += FRAME_BYTES / BYTES_PER_MS;
    if (this.callMs > MAX_CALL_MS) {
      this.hangUp();
      return;
    }
    this.play(FRAME_BYTES);
    this.speak();
  }

  /** Plays one frame of the agent's audio to the caller, who hears the words it ends, echoing the marks it passes. */
  private play(bytes: number): void {
    let left = bytes;
    while (left > 0 && this.incoming.length > 0) {
      const head = this.incoming[0]!;
      const take = Math.min(left, head.length);
      if (take === head.length) this.incoming.shift();
      else this.incoming[0] = head.subarray(take);
      left -= take;
      this.incomingBytes -= take;
      this.playedTotal += take;
    }
    while (this.captions.length > 0 && this.captions[0]!.at <= this.playedTotal) this.hearing += this.captions.shift()!.text;
    while (this.marks.length > 0 && this.marks[0]!.at <= this.playedTotal) this.toAgent({ kind: 'mark', name: this.marks.shift()!.name });
    if (left < bytes) {
      this.replyPlayedMs += (bytes - left) / BYTES_PER_MS;
      this.quietMs = 0;
    } else {
      this.quietMs += bytes / BYTES_PER_MS;
      if (this.quietMs >= LINE_END_MS && this.hearing.trim() !== '') {
        this.heard.push(this.hearing.trim());
        this.hearing = '';
      }
      if (this.quietMs >= 600) {
        this.agentSpeaking = false;
        this.replyPlayedMs = 0;
        this.interruptedThisReply = false;
      }
    }
  }

  /**
   * Sends one frame of the caller's side: their line, a key, or silence. Their next line starts once
   * the agent has said something since their last one and gone quiet (or, past BARGE_IN_AFTER_MS of
   * a reply, over it); after the last line's answer they hang up. An agent that says nothing for
   * PATIENCE_MS of audio is not waited for any longer.
   */
  private speak(): void {
    if (!this.outgoing && this.keys.length === 0) {
      const agentDone = !this.agentSpeaking && this.incomingBytes === 0 && this.quietMs >= 600;
      const answered = this.heard.length > this.heardAtLastLine;
      const impatient = this.quietMs >= PATIENCE_MS;
      const interrupt = this.agentSpeaking && this.replyPlayedMs >= BARGE_IN_AFTER_MS && !this.interruptedThisReply && this.lines.length > 0;
      if (interrupt || (agentDone && (answered || impatient))) {
        const line = this.lines.shift();
        if (line === undefined) {
          this.hangUp();
          return;
        }
        if (interrupt) {
          this.interruptedThisReply = true;
          this.bargeIns += 1;
        }
        this.said.push(line);
        if (KEYS.test(line)) this.keys = [...line, '#'];
        else this.outgoing = encodeSpeech(line);
        this.quietMs = 0;
      }
    }
    if (this.keys.length > 0) {
      this.toAgent({ kind: 'dtmf', digit: this.keys.shift()! });
      if (this.keys.length === 0) this.heardAtLastLine = this.heard.length;
      this.sendAudio(SILENCE);
      return;
    }
    if (this.outgoing) {
      const frame = this.outgoing.subarray(0, FRAME_BYTES);
      this.outgoing = this.outgoing.length > FRAME_BYTES ? this.outgoing.subarray(FRAME_BYTES) : null;
      // An answer is what the agent says after the line: what the caller's ear finished hearing meanwhile (a reply cut by the line) is not one.
      if (!this.outgoing) this.heardAtLastLine = this.heard.length;
      // The agent's silence is counted from the end of the caller's line.
      this.quietMs = 0;
      this.sendAudio(frame.length === FRAME_BYTES ? frame : Buffer.concat([frame, SILENCE.subarray(frame.length)]));
      return;
    }
    this.sendAudio(SILENCE);
  }

  private sendAudio(frame: Buffer): void {
    this.toAgent({ kind: 'audio', payload: frame.toString('base64') });
  }
}
