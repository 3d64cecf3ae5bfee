import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import type { AnsweredBy, CarrierAccount, CarrierAdapter, CarrierCallState, KnownCall, PlaceCallRequest } from '../../telephony/carrier.js';
import type { CallTracker } from '../../telephony/call-tracker.js';
import { CallStatus, ProgramCarrier } from '../../telephony/telephony.enums.js';
import { reachesNodes, type CallOutcome, type CallResult, type Dialer } from './dialer.js';
import { DEFAULT_UTTERANCES, playCaller } from '../../voice/simulated-caller.js';
import type { SimulatedStreams } from '../../voice/streaming/simulated-stream.js';
import type { VoiceEngine } from '../../voice/voice-session.js';
import type { RecordingLedger } from '../../recordings/recording-ledger.js';
import { refusesConsent } from '../../recordings/recording-settings.js';
import { simulatedRecording } from '../../recordings/simulated-recording.js';
import type { VoicemailDrop } from '../../voice/voicemail-drop.js';

/** The simulator needs no account; this stands in where a real carrier's would be. */
export const SIMULATED_ACCOUNT: CarrierAccount = { connectionId: null, accountSid: 'simulator', authToken: '' };

const FINAL_STATUS: Record<CallOutcome, CallStatus> = {
  answered: CallStatus.completed,
  voicemail: CallStatus.completed,
  voicemail_left: CallStatus.completed,
  no_answer: CallStatus.no_answer,
  busy: CallStatus.busy,
  failed: CallStatus.failed,
};

/**
 * The simulated carrier's own records, like a switch's: every runner of a process shares the
 * default one, as the replicas of a real deployment share one carrier; they go when the process
 * goes (a test gives a runner its own to play "another process").
 */
export class SimulatedSwitch {
  readonly states = new Map<string, CarrierCallState>();
  readonly byCallId = new Map<string, string>();
}

const PROCESS_SWITCH = new SimulatedSwitch();

/**
 * The built-in carrier: no account, no network. It "creates" a call and reports its progress
 * (ringing, answered, ended) into the same CallTracker the real carriers' webhooks reach, so an
 * offline campaign runs exactly the state machine and recording that a Twilio one does. What
 * happens on each call is the Dialer's to decide (the seeded SimulatedDialer: DIALER_SEED,
 * DIALER_SPEED_MS); the flow nodes it reports are recorded as an answered call's walk.
 */
export class SimulatedCarrier implements CarrierAdapter {
  readonly kind = ProgramCarrier.simulator;
  private tracker: CallTracker | null = null;
  private readonly states: Map<string, CarrierCallState>;
  private readonly byCallId: Map<string, string>;
  private readonly playing = new Set<Promise<void>>();

  constructor(
    private readonly dialer: Dialer,
    private readonly logger: Logger,
    private readonly clock: () => Date = () => new Date(),
    simulatedSwitch: SimulatedSwitch = PROCESS_SWITCH,
  ) {
    this.states = simulatedSwitch.states;
    this.byCallId = simulatedSwitch.byCallId;
  }

  /** The voice engine an answered call with a flow or an agent is talked through (the simulated caller's lines); without it the dialer's walk is recorded. */
  private voice: VoiceEngine | null = null;

  /** The simulated media stream, for a call whose agent is a streaming one (none: such a call ends at its stream). */
  private streams: SimulatedStreams | undefined;

  /** Where the simulated recordings are kept (none: the simulator records nothing). */
  private recordings: RecordingLedger | null = null;

  /** Where a machine's verdict goes (the Twilio calls' voicemail after the beep); none: a machine is answered as the voice engine does. */
  private voicemail: VoicemailDrop | null = null;

  attachVoicemail(drop: VoicemailDrop): void {
    this.voicemail = drop;
  }

  keepRecordingsIn(ledger: RecordingLedger): void {
    this.recordings = ledger;
  }

  attachVoice(engine: VoiceEngine, streams?: SimulatedStreams): void {
    this.voice = engine;
    this.streams = streams;
  }

  /** Where the progress reports go: the tracker of the runner that places the calls. */
  attach(tracker: CallTracker): void {
    this.tracker = tracker;
  }

  /** Calls being played out now. */
  get live(): number {
    return this.playing.size;
  }

  /** Resolves once every call placed so far has reported its end. */
  async idle(): Promise<void> {
    while (this.playing.size > 0) await Promise.allSettled([...this.playing]);
  }

  async placeCall(_account: CarrierAccount, request: PlaceCallRequest): Promise<{ carrierCallId: string }> {
    if (!this.tracker) throw new Error('The simulated carrier has no call tracker attached');
    const carrierCallId = `SM${randomBytes(16).toString('hex')}`;
    this.byCallId.set(request.callId, carrierCallId);
    this.states.set(carrierCallId, this.state(carrierCallId, CallStatus.queued));
    const play = this.play(this.tracker, carrierCallId, request).catch((error: unknown) =>
      this.logger.error({ err: error, callId: request.callId }, 'the simulated carrier could not report a call'),
    );
    this.playing.add(play);
    void play.finally(() => this.playing.delete(play));
    return { carrierCallId };
  }

  async fetchCall(_account: CarrierAccount, call: KnownCall & { carrierCallId: string }): Promise<CarrierCallState | null> {
    return this.states.get(call.carrierCallId) ?? null;
  }

  async findCall(_account: CarrierAccount, call: KnownCall): Promise<CarrierCallState | null> {
    const carrierCallId = this.byCallId.get(call.callId);
    return (carrierCallId && this.states.get(carrierCallId)) || null;
  }

  async verifyAccount(): Promise<void> {}

  /**
   * A connected call's end: it lasted as long as it was played, its duration the whole seconds from
   * its answer to now (rounded up, as a carrier bills), so durationSeconds agrees with answeredAt →
   * endedAt (the seeded dialer's talk time paces nothing and is not reported).
   */
  private ended(carrierCallId: string, answeredAt: Date, answeredBy: AnsweredBy): CarrierCallState {
    const state = this.state(carrierCallId, CallStatus.completed, { answeredBy });
    return { ...state, durationSeconds: Math.ceil(Math.max(0, state.at.getTime() - answeredAt.getTime()) / 1000) };
  }

  /**
   * Without the voice engine, a consent sentence is answered by the simulated caller's first line
   * (a machine is never asked, so never recorded after consent).
   */
  private async recordWithoutVoice(request: PlaceCallRequest, answeredBy: AnsweredBy): Promise<void> {
    const recording = request.context?.recording;
    if (!recording) return;
    const said = (request.context?.utterances ?? DEFAULT_UTTERANCES).slice(0, 1);
    if (recording.consent) {
      if (answeredBy === 'machine') return;
      const line = said[0]?.trim() ?? '';
      const keys = /^[0-9*#]+$/.test(line);
      if (refusesConsent(recording.consent.refuseOn, { speech: keys ? null : line, digits: keys ? line : null })) {
        await this.recordings?.refused(request.callId, recording.channels);
        return;
      }
    }
    await this.record(request.callId, [], recording.consent ? said.slice(1) : said, recording.channels);
  }

  /** Leaves the call's generated recording, where GET /api/calls/{id}/recording finds it; a failure is logged and the call goes on. */
  private async record(callId: string, heard: string[], said: string[], channels: 'mono' | 'dual'): Promise<void> {
    if (!this.recordings) return;
    try {
      const { wav, durationSeconds } = await simulatedRecording(heard, said, channels);
      await this.recordings.simulated(callId, wav, channels, durationSeconds, this.clock());
    } catch (error) {
      this.logger.error({ err: error, callId }, 'the simulated carrier could not keep the call’s recording');
    }
  }

  private state(carrierCallId: string, status: CallStatus, extra: Partial<CarrierCallState> = {}): CarrierCallState {
    return { carrierCallId, status, answeredBy: null, durationSeconds: null, at: this.clock(), ...extra };
  }

  private async report(tracker: CallTracker, callId: string, state: CarrierCallState, reached: string[] = []): Promise<void> {
    this.states.set(state.carrierCallId, state);
    await tracker.apply(callId, state, reached);
  }

  private async play(tracker: CallTracker, carrierCallId: string, request: PlaceCallRequest): Promise<void> {
    // The dialer is asked at once (as a switch starts ringing), and the ringing report goes out meanwhile.
    const decided = (async () =>
      this.dialer.placeCall({
        executionContactId: request.context?.executionContactId ?? request.callId,
        phone: request.to,
        timeZone: request.context?.timeZone ?? null,
        attempt: request.attempt,
        flow: request.context?.flow ?? null,
        agentId: request.context?.agentId ?? null,
      }))();
    decided.catch(() => undefined); // handled below, after the ringing report
    await this.report(tracker, request.callId, this.state(carrierCallId, CallStatus.ringing));
    let result: CallResult;
    try {
      result = await decided;
    } catch (error) {
      this.logger.warn({ err: error, callId: request.callId }, 'the simulated dialer failed; the call fails');
      const reason = error instanceof Error ? error.message : String(error);
      await this.report(tracker, request.callId, this.state(carrierCallId, CallStatus.failed, { errorText: `The simulated dialer failed: ${reason}` }));
      return;
    }
    if (result.outcome === 'voicemail' && this.voicemail) {
      await this.leaveVoicemail(tracker, carrierCallId, request, this.voicemail);
      return;
    }
    if (reachesNodes(result.outcome)) {
      const answeredBy: AnsweredBy = result.outcome === 'voicemail' ? 'machine' : 'human';
      const context = request.context;
      if (this.voice && (context?.flow || context?.agentId)) {
        // The caller is played against the voice engine: the nodes reached are those the conversation walked.
        const answered = this.state(carrierCallId, CallStatus.in_progress, { answeredBy });
        await this.report(tracker, request.callId, answered);
        const played = await playCaller(this.voice, request.callId, answeredBy, context.utterances ?? DEFAULT_UTTERANCES, this.streams);
        // Without a consent sentence the call is recorded from its answer (as Twilio's Record does); with one, once it was given.
        const recording = context.recording;
        const from = recording?.consent ? played.recordedFrom : { heard: 0, said: 0 };
        if (recording && from) await this.record(request.callId, played.heard.slice(from.heard), played.said.slice(from.said), recording.channels);
        await this.report(tracker, request.callId, this.ended(carrierCallId, answered.at, answeredBy));
        await this.voice.ended(request.callId);
        return;
      }
      // Answered: the nodes its dialer walked are recorded with the answer, as a real call records them when it is told what to say.
      const answered = this.state(carrierCallId, CallStatus.in_progress, { answeredBy });
      await this.report(tracker, request.callId, answered, result.reachedNodeIds);
      await this.recordWithoutVoice(request, answeredBy);
      await this.report(tracker, request.callId, this.ended(carrierCallId, answered.at, answeredBy));
      return;
    }
    await this.report(tracker, request.callId, this.state(carrierCallId, FINAL_STATUS[result.outcome], { durationSeconds: 0 }));
  }

  /**
   * A machine answers as with Twilio's asynchronous detection: the call is answered (who answered not
   * yet known), the verdict comes at once as the end of the greeting (machine_end_beep), and the voicemail
   * drop leaves the program's message (or its flow's voicemail branch) or hangs up. What the machine
   * heard is its recording, when the program records from the answer.
   */
  private async leaveVoicemail(tracker: CallTracker, carrierCallId: string, request: PlaceCallRequest, drop: VoicemailDrop): Promise<void> {
    const answered = this.state(carrierCallId, CallStatus.in_progress);
    await this.report(tracker, request.callId, answered);
    const heard: string[] = [];
    await drop.verdict(
      request.callId,
      { carrierCallId, kind: 'machine_end_beep', detectionMs: 0 },
      { update: async (actions) => void heard.push(...actions.flatMap((action) => (action.kind === 'say' ? [action.text] : []))) },
    );
    const recording = request.context?.recording;
    if (recording && !recording.consent) await this.record(request.callId, heard, [], recording.channels);
    await this.report(tracker, request.callId, this.ended(carrierCallId, answered.at, 'machine'));
    await this.voice?.ended(request.callId);
  }
}
