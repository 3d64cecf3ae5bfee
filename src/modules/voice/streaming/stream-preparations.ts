// A streaming call's first word, prepared while the carrier is still fetching the call's
// instructions (issue #45): as soon as the answer carrying the media stream's URL is armed, the call's
// agent and context are read, the first message is written, and its synthesis is asked for; the
// synthesizer's audio is held here until the media stream starts and its StreamingCall takes it
// (streaming-call.ts), so the first frames can go to the caller the moment the stream's `start` is
// read. A call whose stream never comes (the caller hung up, the stream went to another replica, it
// was refused) does not keep anything: its preparation is closed when the call ends, and in any case
// PREPARED_FOR_MS after it was made; at most MAX_PREPARED are held at once. A speech-to-speech call
// is prepared here too, under the same lifetime and the same bound (one count for both kinds): its
// provider's session is opened and its first message asked for (realtime/speech-preparation.ts).
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Logger } from 'pino';
import { query } from '../../../db/sql.js';
import type { Agent } from '../../agents/agent.entity.js';
import { AgentStatus, FirstMessageMode, PipelineMode } from '../../agents/agent.enums.js';
import type { CallContext } from '../../agents/templates/call-context.js';
import { firstMessageFor } from '../../agents/templates/first-message.js';
import type { CallConversations } from '../realtime/call-conversation.js';
import { prepareSpeech, type PreparedSpeech, type SpeechPreparationDeps } from '../realtime/speech-preparation.js';
import type { ReturnedTransfer, TransferPort } from '../transfer/call-transfers.js';
import { returnedLine } from '../transfer/transfer-tool.js';
import { WORDS } from '../voice-actions.js';
import type { Recognizer, RecognizerName, SynthesisEvents, SynthesisOptions, SynthesisStream, Synthesizer, SynthesizerName } from './speech-ports.js';

/** How long a preparation waits for its call's media stream (the media route gives a stream 10 s to send its `start`). */
export const PREPARED_FOR_MS = 15_000;
/** Preparations held at once; past this a call starts as it did before (its stream opens the providers). */
export const MAX_PREPARED = 1000;
/** Audio held for one first message before its stream starts (μ-law 8 kHz: about two minutes). */
const MAX_HELD_BYTES = 1024 * 1024;

/** The recognizer, the synthesizer and the voice a streaming agent speaks with; a message (what is missing) when it cannot. */
export function streamingParties(
  agent: Agent,
  deps: { recognizers: Partial<Record<RecognizerName, Recognizer>>; synthesizers: Partial<Record<SynthesizerName, Synthesizer>>; offline?: boolean },
):
  | { recognizerName: RecognizerName; synthesizerName: SynthesizerName; recognizer: Recognizer; synthesizer: Synthesizer; voice: SynthesisOptions }
  | { missing: string } {
  const voice = agent.voiceConfig!;
  const recognizerName: RecognizerName = deps.offline ? 'builtin' : (voice.sttProvider ?? 'deepgram');
  const synthesizerName: SynthesizerName = deps.offline ? 'builtin' : (voice.ttsProvider ?? 'elevenlabs');
  const recognizer = deps.recognizers[recognizerName];
  const synthesizer = deps.synthesizers[synthesizerName];
  if (!recognizer || !synthesizer) return { missing: `The ${recognizer ? `synthesizer ${synthesizerName}` : `recognizer ${recognizerName}`} is not available` };
  const missing = recognizer.missing() ?? synthesizer.missing();
  if (missing) return { missing };
  return {
    recognizerName,
    synthesizerName,
    recognizer,
    synthesizer,
    voice: {
      voiceId: (synthesizerName === (voice.ttsProvider ?? 'elevenlabs') ? voice.voiceId : null) ?? synthesizer.defaultVoice,
      model: (deps.offline ? null : voice.ttsModel) ?? synthesizer.defaultModel,
    },
  };
}

/** What the agent says first on a streaming call: back from a transfer that reached no one, that; else its first message (null: it waits for the caller). */
export function openingLine(agent: Agent, context: CallContext | null, returned: ReturnedTransfer | null | undefined): string | null {
  if (returned) return returnedLine(returned.destinationName, returned.dialStatus);
  return context ? firstMessageFor(agent, context) : WORDS.greeting(agent.name);
}

/**
 * One line's synthesis asked for before anyone listens: the stream is opened at once (its handshake
 * overlaps the reads that write the line), the line is pushed and ended once both are there, and
 * what the synthesizer says is held (in order) until `adopt` gives it a listener, which is then told
 * everything held, at once, before anything new.
 */
export class PreparedSynthesis {
  private listener: SynthesisEvents | null = null;
  private readonly held: { ulaw: Buffer; textEnd: number }[] = [];
  private heldBytes = 0;
  private done = false;
  private lostReason: string | null = null;
  private cancelled = false;
  private readonly opened: Promise<SynthesisStream>;
  /** The line it speaks, once told (speak). */
  line: string | null = null;

  constructor(synthesizer: Synthesizer, options: SynthesisOptions) {
    this.opened = synthesizer.open(options, {
      audio: (ulaw, textEnd) => {
        if (this.listener) return this.listener.audio(ulaw, textEnd);
        if (this.heldBytes + ulaw.length > MAX_HELD_BYTES)
          return this.lose('the first message’s audio was longer than the gateway holds before the stream starts');
        this.held.push({ ulaw, textEnd });
        this.heldBytes += ulaw.length;
      },
      done: () => (this.listener ? this.listener.done() : (this.done = true)),
      lost: (reason) => (this.listener ? this.listener.lost(reason) : this.lose(reason)),
    });
    // A refused or unreachable synthesizer is told to the call that adopts it (its open rejects there).
    this.opened.catch(() => undefined);
  }

  /** The line to speak: pushed and ended as soon as the stream is open. */
  speak(line: string): void {
    if (this.line !== null || this.cancelled) return;
    this.line = line;
    void this.opened.then(
      (stream) => {
        if (this.cancelled) return stream.cancel();
        stream.push(line);
        stream.end();
      },
      () => undefined,
    );
  }

  /** The stream, once open, now telling `events` (first what it held); rejects as the synthesizer's open did. */
  adopt(events: SynthesisEvents): Promise<SynthesisStream> {
    return this.opened.then((stream) => {
      this.listener = events;
      for (const chunk of this.held.splice(0)) events.audio(chunk.ulaw, chunk.textEnd);
      this.heldBytes = 0;
      if (this.lostReason !== null) events.lost(this.lostReason);
      else if (this.done) events.done();
      return stream;
    });
  }

  /** Closes the provider's stream (no listener is told). */
  cancel(): void {
    if (this.cancelled) return;
    this.cancelled = true;
    this.listener = null;
    this.held.length = 0;
    void this.opened.then(
      (stream) => stream.cancel(),
      () => undefined,
    );
  }

  private lose(reason: string): void {
    if (this.lostReason !== null) return;
    this.lostReason = reason;
    this.held.length = 0;
    void this.opened.then(
      (stream) => stream.cancel(),
      () => undefined,
    );
  }
}

/** What a call's preparation made: what it read (so the stream reads none of it again) and the first message's synthesis, if the agent speaks first. */
export interface PreparedOpening {
  kind: 'streaming';
  agent: Agent;
  context: CallContext | null;
  answeredAt: Date | null;
  returned: ReturnedTransfer | null;
  /** The opening line (openingLine), null when the agent waits for the caller. */
  line: string | null;
  synthesis: PreparedSynthesis | null;
}

export interface StreamPreparationDeps {
  em: EntityManager;
  conversations: Pick<CallConversations, 'agent' | 'callContext'>;
  transfers?: Pick<TransferPort, 'returned'>;
  recognizers: Partial<Record<RecognizerName, Recognizer>>;
  synthesizers: Partial<Record<SynthesizerName, Synthesizer>>;
  logger: Logger;
  /** The speech-to-speech providers and what their sessions are opened with; without it, a speech-to-speech call is not prepared. */
  speech?: SpeechPreparationDeps;
  preparedForMs?: number;
  maxPrepared?: number;
}

/** What a call's preparation made, of either kind. */
export type Prepared = PreparedOpening | PreparedSpeech;

/** Closes what a preparation opened (no listener is told). */
function closePrepared(prepared: Prepared | null): void {
  if (prepared?.kind === 'streaming') prepared.synthesis?.cancel();
  else prepared?.session.close();
}

/** The preparation, when it is of this kind; one of the other kind (the agent changed meanwhile) is closed. */
function ofKind<K extends Prepared['kind']>(kind: K, prepared: Prepared | null): Extract<Prepared, { kind: K }> | null {
  if (prepared?.kind === kind) return prepared as Extract<Prepared, { kind: K }>;
  closePrepared(prepared);
  return null;
}

interface Entry {
  ready: Promise<Prepared | null>;
  timer: NodeJS.Timeout | undefined;
  /** Closed before its preparation was made: nothing is opened. */
  discarded: boolean;
}

/** The preparations of this process's streaming and speech-to-speech calls, by call id (see the top of this file). */
export class StreamPreparations {
  private readonly entries = new Map<string, Entry>();

  constructor(private readonly deps: StreamPreparationDeps) {}

  /** Preparations held now (tests, metrics). */
  get size(): number {
    return this.entries.size;
  }

  /** The call's answer carries its media stream's URL: its first word is prepared, if its agent is a streaming or a speech-to-speech one (not awaited; never throws). */
  prepare(callId: string): void {
    if (this.entries.has(callId)) return;
    if (this.entries.size >= (this.deps.maxPrepared ?? MAX_PREPARED)) {
      this.deps.logger.warn({ callId, held: this.entries.size }, 'too many calls prepared at once: this one opens its providers when its stream starts');
      return;
    }
    const entry: Entry = { ready: Promise.resolve(null), timer: undefined, discarded: false };
    entry.ready = this.made(callId, entry).catch((error: unknown) => {
      this.deps.logger.warn(
        { callId, error: error instanceof Error ? error.message : String(error) },
        'a call’s first message could not be prepared: its stream opens its providers',
      );
      return null;
    });
    entry.timer = setTimeout(() => this.discard(callId), this.deps.preparedForMs ?? PREPARED_FOR_MS);
    entry.timer.unref?.();
    this.entries.set(callId, entry);
    // Nothing to hold (neither kind of agent, or its provider failed): not counted against the bound until its timeout.
    void entry.ready.then((prepared) => {
      if (!prepared && this.entries.get(callId) === entry) this.discard(callId);
    });
  }

  /** The streaming call's preparation, for its stream (once: it is no longer held here); null when none was made on this process. */
  take(callId: string): Promise<PreparedOpening | null> | null {
    return this.taken(callId)?.then((prepared) => ofKind('streaming', prepared)) ?? null;
  }

  /** The speech-to-speech call's preparation, for its bridge (once); null when none was made here. A session lost meanwhile is closed and not given. */
  takeSpeech(callId: string): Promise<PreparedSpeech | null> | null {
    return (
      this.taken(callId)?.then((prepared) => {
        const speech = ofKind('sts', prepared);
        if (speech?.held.lostReason == null) return speech;
        this.deps.logger.warn(
          { callId, reason: speech.held.lostReason },
          'a prepared speech-to-speech session was lost before its stream: the stream opens its own',
        );
        speech.session.close();
        return null;
      }) ?? null
    );
  }

  private taken(callId: string): Promise<Prepared | null> | null {
    const entry = this.entries.get(callId);
    if (!entry) return null;
    this.entries.delete(callId);
    clearTimeout(entry.timer);
    return entry.ready;
  }

  /** The call ended before its stream took its preparation, or waited too long: what it opened is closed. */
  discard(callId: string): void {
    const entry = this.entries.get(callId);
    if (!entry) return;
    this.entries.delete(callId);
    clearTimeout(entry.timer);
    entry.discarded = true;
    void entry.ready.then(closePrepared);
  }

  /** Shutdown: every preparation is closed. */
  close(): void {
    for (const callId of [...this.entries.keys()]) this.discard(callId);
  }

  private async made(callId: string, entry: Entry): Promise<Prepared | null> {
    const { conversations } = this.deps;
    const [call] = await query<{ organization_id: string; agent_id: string; contact_id: string | null; conversation_id: string | null; mode: string }>(
      this.deps.em.fork(),
      `select c.organization_id, c.agent_id, c.contact_id, c.conversation_id, a.voice_config->>'pipelineMode' as mode
         from calls c join agents a on a.id = c.agent_id and a.organization_id = c.organization_id
        where c.id = ? and a.voice_config->>'pipelineMode' in (?, ?)`,
      [callId, PipelineMode.streaming, PipelineMode.sts],
    );
    if (!call) return null;
    if (call.mode === PipelineMode.sts) {
      // A call that already has a conversation (back from a transfer that reached no one) is told it at its stream's start, as before: not prepared.
      if (!this.deps.speech || call.conversation_id) return null;
      return prepareSpeech(
        this.deps.speech,
        { id: callId, organizationId: call.organization_id, agentId: call.agent_id, contactId: call.contact_id },
        () => entry.discarded,
      );
    }
    const agent = await conversations.agent(call.organization_id, call.agent_id);
    if (!agent || agent.status === AgentStatus.archived || agent.voiceConfig?.pipelineMode !== PipelineMode.streaming) return null;
    const parties = streamingParties(agent, this.deps);
    // A call that cannot speak is failed by its stream, with the same words: nothing is prepared.
    if ('missing' in parties) return null;
    // Discarded meanwhile (the call ended while its agent was read): nothing is opened.
    if (entry.discarded) return null;
    // An agent that speaks first: the synthesizer's handshake runs while the line's context is read.
    let synthesis = agent.firstMessageMode === FirstMessageMode.wait_for_caller ? null : new PreparedSynthesis(parties.synthesizer, parties.voice);
    try {
      const [{ context, answeredAt }, returned] = await Promise.all([
        conversations.callContext(call.organization_id, callId, agent),
        this.deps.transfers?.returned({ id: callId, organizationId: call.organization_id }) ?? null,
      ]);
      const line = openingLine(agent, context, returned);
      if (line && !entry.discarded) {
        synthesis ??= new PreparedSynthesis(parties.synthesizer, parties.voice);
        synthesis.speak(line);
      } else {
        synthesis?.cancel();
        synthesis = null;
      }
      if (entry.discarded) return null;
      return { kind: 'streaming', agent, context, answeredAt, returned: returned ?? null, line, synthesis };
    } catch (error) {
      synthesis?.cancel();
      throw error;
    }
  }
}
