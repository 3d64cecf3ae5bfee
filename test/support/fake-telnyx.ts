import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { generateKeyPairSync, randomBytes, randomUUID, sign } from 'node:crypto';
import { answerProblem, initiateCallProblem, listCallsProblem, recordingRequestProblem, updateCallProblem } from './telnyx-texml-spec.js';
import { type DetectionScript, scriptedDetection } from './scripted-detection.js';

// A Telnyx TeXML double on loopback, for the subset the gateway uses: Bearer API key, initiating,
// fetching, listing and updating TeXML calls (every request checked against Telnyx's published
// OpenAPI description, telnyx-texml-spec.ts, unknown fields refused), and each call's life told as
// TeXML callbacks: form-encoded, signed as Telnyx signs them (Ed25519 over `telnyx-timestamp|body`,
// developers.telnyx.com api-reference/callbacks/texml-call-*). It follows the TeXML it is answered
// (Say, Play — its `digits` kept in `pressed` —, Gather, Redirect, Dial, Hangup) as a caller would, and what UpdateCall's `Texml` replaces it
// with; with AsyncAmd it posts the AMD verdicts (TexmlCallAmdWebhook) while the answer plays. With
// Record on the call, or a <Start><Recording> in its TeXML, it records (a WAV of the channels asked), posts the signed
// recording status callbacks (texml-recording-in-progress, texml-recording-completed), and serves
// the recording resource (GetTeXMLCallRecording, DeleteTeXMLCallRecording) whose media_url is a
// short-lived URL needing no API key. A call held on the line (`holdUntil`) stays at its
// <Connect><Stream> (noted in `streams`, for the test to open as Telnyx would) until UpdateCall gives
// it new TeXML or the caller hangs up. A <Dial action> to a <Number> or <Sip> posts its outcome (the
// script's `dial`: DialCallStatus, DialCallDuration) to its action, signed as every callback, and goes
// on with what it answers; a <Dial><Conference> puts the call in a named room (`room()`), waiting until
// one who starts it joins, and a participant with endConferenceOnExit leaving ends it for all (the
// caller's <Dial action> is then posted). A call initiated with `Texml` plays it instead of fetching a
// Url, rings until its script's `ringUntil`, and keeps its `Timeout`; UpdateCall's `Status=completed`
// ends a call: a ringing one as canceled, one in progress as completed (what TeXML publishes, and
// Twilio's words, telnyx-texml.schemas.md). Point the gateway at it with TELNYX_API_BASE_URL
// (config.telephony.telnyxApiBaseUrl = fake.url).

export type TelnyxOutcome = 'answered' | 'busy' | 'no-answer' | 'failed' | 'voicemail';
export type TelnyxCallerTurn = string | { digits: string } | null;

export interface TelnyxCallScript extends DetectionScript {
  outcome: TelnyxOutcome;
  durationSeconds?: number;
  turns?: TelnyxCallerTurn[];
  /** An answered call stays in progress until this settles (the caller hangs up then). */
  holdUntil?: Promise<void>;
  /** The call rings until this settles (or UpdateCall's Status=completed ends it there, canceled), then goes on as its outcome says. */
  ringUntil?: Promise<void>;
  /** How a <Dial action> to a <Number> or <Sip> of the call ends (its DialCallStatus and DialCallDuration); default completed after 42 s. */
  dial?: { status: 'completed' | 'answered' | 'busy' | 'no-answer' | 'failed' | 'canceled'; durationSeconds?: number };
}

export interface FakeTelnyxFaults {
  /** Initiating a call answers this status (the call is not created). */
  createStatus?: number;
  /** Every request answers 401, as for a wrong API key. */
  rejectCredentials?: boolean;
  /** Callbacks are signed with another key (a forger's). */
  forgeSignatures?: boolean;
  /** The recording resource and its media answer this status. */
  recordingStatus?: number;
  /** UpdateCall with `Texml` answers this status (the call goes on as it was). */
  updateStatus?: number;
}

interface RecordingTarget {
  channels: 'mono' | 'dual';
  callback: string | null;
  events: string[];
}

export interface FakeTelnyxRecording {
  sid: string;
  callSid: string;
  channels: 1 | 2;
  durationSeconds: number;
  wav: Buffer;
  /** The token its media_url carries (the URL Telnyx gives needs no API key). */
  token: string;
  startTime: Date;
  deleted: boolean;
  /** OutboundAPI (Record on the call) or what TeXML published for <Start><Recording>. */
  source: 'OutboundAPI' | 'StartCallRecordingAPI';
}

/** A recording status callback the double posted, and what the gateway answered. */
export interface FakeTelnyxRecordingCallback {
  url: string;
  body: string;
  fields: Record<string, string>;
  status: number;
}

export interface FakeTelnyxCall {
  sid: string;
  to: string;
  from: string;
  url: string;
  statusCallback: string | null;
  statusCallbackEvents: string[];
  machineDetection: string | null;
  /** AsyncAmdStatusCallback, when detection runs in the background (AsyncAmd). */
  verdictCallback: string | null;
  /** The verdicts posted to it, and what the gateway answered each. */
  verdicts: { answeredBy: string; status: number }[];
  /** Record on the call: its channels and callback, when asked. */
  record: RecordingTarget | null;
  /** The recording running: Record's from the answer, or one <Start><Recording> began; reported completed at the end. */
  recording: { kept: FakeTelnyxRecording; target: RecordingTarget } | null;
  /** A document UpdateCall's Texml gave, played once the current one's verb returns. */
  pendingTexml: string | null;
  /** InitiateCallRequest's `Texml`, played once answered instead of fetching `url`; and its `Timeout`. */
  texml: string | null;
  timeoutSeconds: number | null;
  /** Every UpdateCall the call took (its form). */
  updates: Record<string, string>[];
  /** Every <Dial action> report posted: the fields and the gateway's answer's status. */
  dialReports: { url: string; fields: Record<string, string>; status: number }[];
  /** Every <Connect><Stream> the call reached: its URL, its <Parameter>s, and the document it came in ('UpdateCall', a URL). */
  streams: { url: string; parameters: Record<string, string>; from: string }[];
  status: string;
  answeredBy: string | null;
  duration: number | null;
  startTime: Date;
  endTime: Date | null;
  documents: { url: string; status: number | null; texml: string }[];
  heard: string[];
  transfers: string[];
  /** The keys each `<Play digits>` pressed on the call, in order. */
  pressed: string[];
  hungUp: boolean;
}

export interface FakeTelnyx {
  url: string;
  accountSid: string;
  apiKey: string;
  /** The account's public key, base64, as Mission Control shows it. */
  publicKey: string;
  script(decide: (to: string, body: Record<string, unknown>) => TelnyxCallScript): void;
  faults(faults: FakeTelnyxFaults): void;
  calls(): FakeTelnyxCall[];
  /** A <Conference> room: the calls in it now, whether it started (one who starts it came), whether a participant's exit ended it. */
  room(name: string): { participants: string[]; started: boolean; ended: boolean } | null;
  recordings(): FakeTelnyxRecording[];
  recordingCallbacks(): FakeTelnyxRecordingCallback[];
  /** Every request refused as Telnyx would (its status and why), for tests that expect none. */
  refusals(): { method: string; path: string; status: number; problem: string }[];
  /** Signs a form body as Telnyx does, at this timestamp (default now): the headers to send. */
  signedHeaders(body: string, timestamp?: number): Record<string, string>;
  settled(): Promise<void>;
  close(): Promise<void>;
}

const rfc2822 = (date: Date) => date.toUTCString().replace('GMT', '+0000');

/** A WAV of a 440 Hz tone (8 kHz, 16-bit PCM), on each of its channels. */
function toneWav(channels: 1 | 2, seconds: number): Buffer {
  const frames = 8000 * seconds;
  const data = Buffer.alloc(frames * channels * 2);
  for (let frame = 0; frame < frames; frame++)
    for (let channel = 0; channel < channels; channel++)
      data.writeInt16LE(Math.round(8000 * Math.sin((2 * Math.PI * 440 * frame) / 8000)), (frame * channels + channel) * 2);
  const header = Buffer.alloc(44);
  header.write('RIFF', 0, 'ascii');
  header.writeUInt32LE(36 + data.length, 4);
  header.write('WAVEfmt ', 8, 'ascii');
  header.writeUInt32LE(16, 16);
  header.writeUInt16LE(1, 20);
  header.writeUInt16LE(channels, 22);
  header.writeUInt32LE(8000, 24);
  header.writeUInt32LE(8000 * channels * 2, 28);
  header.writeUInt16LE(channels * 2, 32);
  header.writeUInt16LE(16, 34);
  header.write('data', 36, 'ascii');
  header.writeUInt32LE(data.length, 40);
  return Buffer.concat([header, data]);
}

function json(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

async function bodyOf(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

const VERB = /<(Say|Play|Gather|Redirect|Hangup|Dial|Connect|Start)\b([^>]*?)(?:\/>|>([\s\S]*?)<\/\1>)/g;
const attributesOf = (text: string) => Object.fromEntries([...text.matchAll(/\b(\w+)="([^"]*)"/g)].map(([, name, value]) => [name!, unescape(value!)]));

/**
 * The attributes of <Dial> and of its <Conference> noun the TeXML pages name (docs/voice/programmable-voice/texml-verbs/dial
 * and /conference, read 2026-12-03), with their options where the page gives them: anything else the double refuses, as it
 * refuses an unknown field of a request. `beep`'s options are TwiML's (the page's list was not read whole).
 */
const BOOLEAN = ['true', 'false'];
const DIAL_ATTRIBUTES: Record<string, string[] | null> = {
  action: null,
  method: ['GET', 'POST'],
  callerId: null,
  fromDisplayName: null,
  hangupOnStar: BOOLEAN,
  timeout: null,
  timeLimit: null,
  record: null,
};
const CONFERENCE_ATTRIBUTES: Record<string, string[] | null> = {
  muted: BOOLEAN,
  startConferenceOnEnter: BOOLEAN,
  endConferenceOnExit: BOOLEAN,
  maxParticipants: null,
  beep: ['true', 'false', 'onEnter', 'onExit'],
};
/** <Play>'s attributes (texml-verbs/play, read 2026-12-04); `digits` is "0-9, *, #, and w (for a 0.5 second pause)". */
const PLAY_ATTRIBUTES: Record<string, string[] | null> = {
  loop: null,
  mediaStorage: BOOLEAN,
  digits: null,
  failoverUrl: null,
  continueOnError: BOOLEAN,
  ringTone: null,
};
const attributeProblems = (given: Record<string, string>, published: Record<string, string[] | null>) =>
  Object.entries(given)
    .filter(([name, value]) => !(name in published) || (published[name] && !published[name]!.includes(value)))
    .map(([name, value]) => `${name}="${value}"`);
const attribute = (attributes: string, name: string) => new RegExp(`\\b${name}="([^"]*)"`).exec(attributes)?.[1]?.replace(/&amp;/g, '&') ?? null;
const unescape = (text: string) =>
  text
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&apos;/g, "'")
    .replace(/&amp;/g, '&');

export async function startFakeTelnyx(): Promise<FakeTelnyx> {
  const accountSid = randomUUID();
  const apiKey = `KEY${randomBytes(16).toString('hex').toUpperCase()}`;
  const { publicKey, privateKey } = generateKeyPairSync('ed25519');
  const forger = generateKeyPairSync('ed25519').privateKey;
  const publicBase64 = publicKey.export({ format: 'der', type: 'spki' }).subarray(12).toString('base64');
  let decide: (to: string, body: Record<string, unknown>) => TelnyxCallScript = () => ({ outcome: 'answered' });
  let faults: FakeTelnyxFaults = {};
  const calls: FakeTelnyxCall[] = [];
  const recordings: FakeTelnyxRecording[] = [];
  const recordingCallbacks: FakeTelnyxRecordingCallback[] = [];
  /** Conference rooms by name: who is in each (and whether their exit ends it), whether it started, whether it ended. */
  const rooms = new Map<string, { participants: { sid: string; endsOnExit: boolean }[]; started: boolean; ended: boolean }>();
  /** What a call's life waits on, woken by what changes it: an update, an end, a room's end, the hold's end. */
  const waiting = new Map<string, (() => void)[]>();
  const lifeOf = new Map<string, { holdOver: boolean; ending: boolean; canceled: boolean }>();
  const changed = (call: FakeTelnyxCall) => new Promise<void>((resolve) => waiting.set(call.sid, [...(waiting.get(call.sid) ?? []), resolve]));
  const wake = (call: FakeTelnyxCall) => {
    const list = waiting.get(call.sid) ?? [];
    waiting.delete(call.sid);
    for (const resolve of list) resolve();
  };
  const until = async (call: FakeTelnyxCall, done: () => boolean) => {
    while (!done()) await changed(call);
  };
  const state = (call: FakeTelnyxCall) => lifeOf.get(call.sid) ?? { holdOver: false, ending: false, canceled: false };
  /** The caller hung up, or UpdateCall ended the call: its TeXML is followed no further. */
  const over = (call: FakeTelnyxCall) => state(call).holdOver || state(call).ending;
  const inRoom = (call: FakeTelnyxCall, name: string) => rooms.get(name)?.participants.some((participant) => participant.sid === call.sid) ?? false;
  /** The call leaves its room (a new document, or its end); a participant whose exit ends the room drops everyone else from it. */
  const leaveRooms = (call: FakeTelnyxCall) => {
    for (const room of rooms.values()) {
      const leaving = room.participants.find((participant) => participant.sid === call.sid);
      if (!leaving) continue;
      room.participants = room.participants.filter((participant) => participant !== leaving);
      if (!leaving.endsOnExit) continue;
      room.ended = true;
      const dropped = room.participants;
      room.participants = [];
      for (const participant of dropped) {
        const other = calls.find((each) => each.sid === participant.sid);
        if (other) wake(other);
      }
    }
  };
  let origin = '';
  const refusals: { method: string; path: string; status: number; problem: string }[] = [];
  const lives: Promise<void>[] = [];

  const signedHeaders = (body: string, timestamp = Math.floor(Date.now() / 1000)) => ({
    'content-type': 'application/x-www-form-urlencoded',
    'telnyx-timestamp': String(timestamp),
    'telnyx-signature-ed25519': sign(null, Buffer.from(`${timestamp}|${body}`), faults.forgeSignatures ? forger : privateKey).toString('base64'),
  });
  const post = async (url: string, fields: Record<string, string>) => {
    const body = new URLSearchParams(fields).toString();
    const res = await fetch(url, { method: 'POST', headers: signedHeaders(body), body });
    return { status: res.status, text: await res.text() };
  };
  const callFields = (call: FakeTelnyxCall): Record<string, string> => ({
    AccountSid: accountSid,
    CallSid: call.sid,
    CallSidLegacy: call.sid,
    ConnectionId: '1234567890',
    From: call.from,
    To: call.to,
    CallStatus: call.status,
    Timestamp: new Date().toISOString(),
  });
  const report = async (call: FakeTelnyxCall, event: string) => {
    if (!call.statusCallback || !call.statusCallbackEvents.includes(event)) return;
    await post(call.statusCallback, {
      ...callFields(call),
      CallbackSource: 'call-progress-events',
      ...(call.duration !== null ? { CallDuration: String(call.duration) } : {}),
    }).catch(() => undefined);
  };

  /**
   * Follows the TeXML of one document, then of each it leads to, as a caller on the line. With
   * detection in the background, its verdicts are posted while the first document plays; a
   * document UpdateCall gave replaces what the call does from then on, at the verb it is at.
   */
  async function follow(call: FakeTelnyxCall, script: TelnyxCallScript, detect?: () => Promise<void>): Promise<void> {
    const turns = [...(script.turns ?? [])];
    let next: { url: string } | { texml: string; from: string } | null = call.texml !== null ? { texml: call.texml, from: 'InitiateCall' } : { url: call.url };
    let extra: Record<string, string> = call.answeredBy ? { AnsweredBy: call.answeredBy } : {};
    for (let steps = 0; next && steps < 50 && !over(call); steps++) {
      // A new document moves the call out of any room it was in.
      leaveRooms(call);
      let text: string;
      const source = 'texml' in next ? next.from : next.url;
      if ('texml' in next) {
        text = next.texml;
        call.documents.push({ url: next.from, status: 200, texml: text });
      } else {
        const answer = await post(next.url, { ...callFields(call), ...extra }).catch(() => ({ status: 0, text: '' }));
        call.documents.push({ url: next.url, status: answer.status, texml: answer.text });
        text = answer.text;
      }
      next = null;
      extra = {};
      if (detect) {
        const verdicts = detect;
        detect = undefined;
        await verdicts();
      }
      let url: string | null = null;
      for (const [, verb, attributes = '', inner = ''] of text.matchAll(VERB)) {
        if (call.pendingTexml !== null || over(call)) break;
        if (verb === 'Say') call.heard.push(unescape(inner));
        else if (verb === 'Play') {
          const given = attributesOf(attributes);
          const wrong = attributeProblems(given, PLAY_ATTRIBUTES);
          if (given.digits !== undefined && !/^[0-9*#w]+$/.test(given.digits)) wrong.push(`digits="${given.digits}"`);
          if (wrong.length > 0) refusals.push({ method: 'TeXML', path: '<Play>', status: 0, problem: wrong.join(', ') });
          else if (given.digits !== undefined) call.pressed.push(given.digits);
        } else if (verb === 'Dial') {
          const after = await dial(call, attributes, inner);
          if (after) next = after;
        } else if (verb === 'Connect') await connect(call, script, inner, source);
        else if (verb === 'Hangup') call.hungUp = true;
        else if (verb === 'Redirect') url = unescape(inner);
        else if (verb === 'Start') await startNoun(call, inner);
        else if (verb === 'Gather') {
          for (const [, , , said = ''] of inner.matchAll(VERB)) call.heard.push(unescape(said));
          const turn = turns.shift() ?? null;
          if (turn === null) continue;
          url = attribute(attributes, 'action');
          extra = typeof turn === 'string' ? { SpeechResult: turn } : { Digits: turn.digits };
        }
        if (url || next || call.hungUp) break;
      }
      if (url) next = { url };
      if (call.pendingTexml !== null) {
        next = { texml: call.pendingTexml, from: 'UpdateCall' };
        call.pendingTexml = null;
      }
    }
  }

  /** <Connect><Stream>: noted for the test to open; a call held on the line stays at it until an update or its end. */
  async function connect(call: FakeTelnyxCall, script: TelnyxCallScript, inner: string, from: string): Promise<void> {
    const stream = /<Stream\b([^>]*?)(?:\/>|>([\s\S]*?)<\/Stream>)/.exec(inner);
    if (!stream) return;
    const parameters = Object.fromEntries(
      [...(stream[2] ?? '').matchAll(/<Parameter\b([^>]*?)\/?>/g)].map((parameter) => {
        const named = attributesOf(parameter[1] ?? '');
        return [named.name ?? '', named.value ?? ''];
      }),
    );
    call.streams.push({ url: attributesOf(stream[1] ?? '').url ?? '', parameters, from });
    // Without a hold the stream is as if it ended at once: the call goes on to its next verb.
    if (script.holdUntil) await until(call, () => call.pendingTexml !== null || over(call));
  }

  /**
   * <Dial>: to a room (<Conference>), where the call waits until it is moved, ends, or the room ends (a participant whose exit
   * ends it left: the <Dial action> is then posted, completed); or to a <Number> or <Sip> (or a number as its text), whose
   * outcome, the script's `dial`, is posted to the action. What the action answers is what the call does next.
   */
  async function dial(call: FakeTelnyxCall, attributes: string, inner: string): Promise<{ texml: string; from: string } | null> {
    const options = attributesOf(attributes);
    const wrong = attributeProblems(options, DIAL_ATTRIBUTES);
    if (wrong.length > 0) refusals.push({ method: 'TeXML', path: '<Dial>', status: 0, problem: wrong.join(', ') });
    // method defaults to POST (the Dial page); the double asks an action by POST only.
    if (options.action && (options.method ?? 'POST') !== 'POST')
      refusals.push({ method: 'TeXML', path: '<Dial>', status: 0, problem: 'the double asks an action by POST only' });
    const conference = /<Conference\b([^>]*?)>([\s\S]*?)<\/Conference>/.exec(inner);
    let fields: Record<string, string>;
    if (conference) {
      const given = attributesOf(conference[1] ?? '');
      const wrongNoun = attributeProblems(given, CONFERENCE_ATTRIBUTES);
      if (wrongNoun.length > 0) refusals.push({ method: 'TeXML', path: '<Conference>', status: 0, problem: wrongNoun.join(', ') });
      const name = unescape(conference[2]!.trim());
      const existing = rooms.get(name);
      const room = existing && !existing.ended ? existing : { participants: [], started: false, ended: false };
      rooms.set(name, room);
      room.participants.push({ sid: call.sid, endsOnExit: given.endConferenceOnExit === 'true' });
      // startConferenceOnEnter defaults to true.
      room.started ||= given.startConferenceOnEnter !== 'false';
      const joined = Date.now();
      await until(call, () => call.pendingTexml !== null || over(call) || !inRoom(call, name));
      if (call.pendingTexml !== null || over(call)) return null;
      // Dropped: the room ended. Without an action, nothing follows: the call ends.
      if (!options.action) {
        lifeOf.set(call.sid, { ...state(call), ending: true });
        return null;
      }
      fields = { DialCallStatus: 'completed', DialCallDuration: String(Math.round((Date.now() - joined) / 1000)) };
    } else {
      call.transfers.push(unescape(inner.replace(/<[^>]+>/g, '').trim()));
      if (!options.action) return null;
      const outcome = scriptOf(call).dial ?? { status: 'completed' };
      const answered = outcome.status === 'completed' || outcome.status === 'answered';
      fields = {
        DialCallSid: `v3:${randomBytes(24).toString('base64url')}`,
        DialCallStatus: outcome.status,
        DialCallDuration: String(outcome.durationSeconds ?? (answered ? 42 : 0)),
      };
    }
    const sent = { ...callFields(call), ...fields };
    const answer = await post(options.action!, sent).catch(() => ({ status: 0, text: '' }));
    call.dialReports.push({ url: options.action!, fields: sent, status: answer.status });
    return answer.status === 200 ? { texml: answer.text, from: options.action! } : null;
  }

  const mediaUrl = (recording: FakeTelnyxRecording) => `${origin}/media/${recording.sid}.wav?token=${recording.token}`;
  async function beginRecording(call: FakeTelnyxCall, target: RecordingTarget, source: FakeTelnyxRecording['source']): Promise<void> {
    if (call.recording) return;
    const channels = target.channels === 'dual' ? 2 : 1;
    const recording: FakeTelnyxRecording = {
      sid: randomUUID(),
      callSid: call.sid,
      channels,
      durationSeconds: 0,
      wav: toneWav(channels, 1),
      token: randomBytes(12).toString('hex'),
      startTime: new Date(),
      deleted: false,
      source,
    };
    recordings.push(recording);
    call.recording = { kept: recording, target };
    await reportRecording(call, recording, target, 'in-progress');
  }
  /**
   * <Start><Recording> as developers.telnyx.com publishes it (texml-verbs/recording, read 2026-12-02):
   * an attribute it does not name, or a value outside its options, is a refusal and starts nothing.
   * The double keeps WAV only, so it asks for format="wav".
   */
  const RECORDING_ATTRIBUTES: Record<string, string[] | null> = {
    recordingStatusCallback: null,
    recordingStatusCallbackMethod: ['GET', 'POST'],
    recordingStatusCallbackEvent: null,
    channels: ['mono', 'single', 'dual'],
    track: ['inbound', 'outbound', 'both'],
    trim: ['trim-silence'],
    format: ['wav'],
  };
  async function startNoun(call: FakeTelnyxCall, inner: string): Promise<void> {
    const noun = /<Recording\b([^>]*?)\/?>/.exec(inner);
    if (!noun) return;
    const given = Object.fromEntries([...noun[1]!.matchAll(/\b(\w+)="([^"]*)"/g)].map(([, name, value]) => [name!, value!.replace(/&amp;/g, '&')]));
    const wrong = Object.entries(given).filter(
      ([name, value]) => !(name in RECORDING_ATTRIBUTES) || (RECORDING_ATTRIBUTES[name] && !RECORDING_ATTRIBUTES[name]!.includes(value)),
    );
    const events = (given.recordingStatusCallbackEvent ?? 'completed').split(' ');
    if (events.some((event) => !['in-progress', 'completed', 'absent'].includes(event)))
      wrong.push(['recordingStatusCallbackEvent', given.recordingStatusCallbackEvent!]);
    if (given.format !== 'wav') wrong.push(['format', given.format ?? '(mp3, the default)']);
    if (wrong.length > 0) {
      refusals.push({ method: 'TeXML', path: '<Start><Recording>', status: 0, problem: wrong.map(([name, value]) => `${name}="${value}"`).join(', ') });
      return;
    }
    await beginRecording(
      call,
      { channels: given.channels === 'dual' ? 'dual' : 'mono', callback: given.recordingStatusCallback ?? null, events },
      'StartCallRecordingAPI',
    );
  }
  /** TexmlRecordingInProgressWebhook, TexmlRecordingCompletedWebhook: form-encoded, signed like every TeXML callback. */
  async function reportRecording(
    call: FakeTelnyxCall,
    recording: FakeTelnyxRecording,
    target: RecordingTarget,
    status: 'in-progress' | 'completed',
  ): Promise<void> {
    const { callback, events } = target;
    if (!callback || !events.includes(status)) return;
    const fields: Record<string, string> = {
      AccountSid: accountSid,
      CallSid: call.sid,
      CallSidLegacy: call.sid,
      ConnectionId: '1234567890',
      RecordingChannels: String(recording.channels),
      RecordingSid: recording.sid,
      RecordingSource: recording.source,
      RecordingStatus: status,
      ...(status === 'completed' ? { RecordingDuration: String(recording.durationSeconds), RecordingUrl: mediaUrl(recording) } : {}),
    };
    const body = new URLSearchParams(fields).toString();
    const sent = await fetch(callback, { method: 'POST', headers: signedHeaders(body), body }).catch(() => null);
    recordingCallbacks.push({ url: callback, body, fields, status: sent?.status ?? 0 });
    await sent?.text();
  }
  const recordingResource = (recording: FakeTelnyxRecording) => ({
    account_sid: accountSid,
    call_sid: recording.callSid,
    channels: recording.channels,
    date_created: recording.startTime.toISOString(),
    date_updated: recording.startTime.toISOString(),
    start_time: recording.startTime.toISOString(),
    duration: String(recording.durationSeconds),
    sid: recording.sid,
    source: recording.source,
    status: 'completed',
    error_code: null,
    uri: `/v2/texml/Accounts/${accountSid}/Recordings/${recording.sid}.json`,
    media_url: mediaUrl(recording),
  });

  const scripts = new Map<string, TelnyxCallScript>();
  const scriptOf = (call: FakeTelnyxCall): TelnyxCallScript => scripts.get(call.sid) ?? { outcome: 'answered' };

  async function live(call: FakeTelnyxCall, script: TelnyxCallScript): Promise<void> {
    scripts.set(call.sid, script);
    lifeOf.set(call.sid, { holdOver: false, ending: false, canceled: false });
    await new Promise((resolve) => setImmediate(resolve));
    call.status = 'initiated';
    await report(call, 'initiated');
    if (!state(call).canceled) {
      call.status = 'ringing';
      await report(call, 'ringing');
    }
    if (script.ringUntil && !state(call).canceled) await Promise.race([script.ringUntil, until(call, () => state(call).canceled)]);
    if (state(call).canceled) {
      // UpdateCall's Status=completed while it rang: it ends canceled, as TwiML words it (CallResource.status has canceled).
      call.status = 'canceled';
      call.duration = 0;
    } else if (script.outcome === 'busy' || script.outcome === 'no-answer' || script.outcome === 'failed') {
      call.status = script.outcome;
    } else {
      call.status = 'in-progress';
      void script.holdUntil?.then(() => {
        lifeOf.set(call.sid, { ...state(call), holdOver: true });
        wake(call);
      });
      const callback = call.verdictCallback;
      // Synchronous detection decides before the answer URL is asked; in the background, while its TeXML plays.
      const detect = scriptedDetection(call, script, {
        synchronous: call.machineDetection !== null && !callback,
        send: callback
          ? async (verdict, detectionMs) => {
              // TexmlCallAmdWebhook: form-encoded and signed like every TeXML callback.
              const sent = await post(callback, {
                AccountSid: accountSid,
                AnsweredBy: verdict,
                CallSid: call.sid,
                CallSidLegacy: call.sid,
                ConnectionId: '1234567890',
                MachineDetectionDuration: String(detectionMs),
              }).catch(() => ({ status: 0, text: '' }));
              call.verdicts.push({ answeredBy: verdict, status: sent.status });
            }
          : null,
      });
      await report(call, 'answered');
      if (call.record) await beginRecording(call, call.record, 'OutboundAPI');
      await follow(call, script, detect);
      // A call its TeXML hung up (or UpdateCall ended) ends now; else when the caller hangs up.
      if (script.holdUntil && !call.hungUp) await until(call, () => over(call));
      call.status = 'completed';
      call.duration = script.durationSeconds ?? 1;
      if (call.recording) {
        call.recording.kept.durationSeconds = call.duration;
        await reportRecording(call, call.recording.kept, call.recording.target, 'completed');
      }
    }
    call.endTime = new Date();
    await report(call, 'completed');
    // Gone: out of any room (after its own end was told), which a participant whose exit ends it ends for all.
    leaveRooms(call);
  }

  const resource = (call: FakeTelnyxCall) => ({
    account_sid: accountSid,
    sid: call.sid,
    from: call.from,
    to: call.to,
    status: call.status === 'initiated' || call.status === 'queued' ? 'ringing' : call.status,
    direction: 'outbound' as const,
    date_created: rfc2822(call.startTime),
    date_updated: rfc2822(call.endTime ?? call.startTime),
    start_time: rfc2822(call.startTime),
    ...(call.endTime ? { end_time: rfc2822(call.endTime) } : {}),
    ...(call.duration !== null ? { duration: String(call.duration) } : {}),
    // CallResource.answered_by is published as human, machine or not_sure.
    ...(call.answeredBy
      ? { answered_by: call.answeredBy.startsWith('machine') || call.answeredBy === 'fax' ? 'machine' : call.answeredBy === 'human' ? 'human' : 'not_sure' }
      : {}),
    uri: `/v2/texml/Accounts/${accountSid}/Calls/${call.sid}.json`,
  });
  const answer = (res: ServerResponse, kind: 'call' | 'calls' | 'initiated' | 'recording', body: unknown) => {
    const problem = answerProblem(kind, body);
    if (problem) throw new Error(`the double's own ${kind} answer breaks Telnyx's schema: ${problem}`);
    json(res, 200, body);
  };
  const refuse = (req: IncomingMessage, res: ServerResponse, status: number, problem: string, code = '10015') => {
    refusals.push({ method: req.method ?? '', path: (req.url ?? '').split('?')[0]!, status, problem });
    json(res, status, { errors: [{ code, title: status === 401 ? 'Authentication failed' : 'Invalid parameter', detail: problem }] });
  };

  const server: Server = createServer(async (req, res) => {
    try {
      const target = new URL(req.url ?? '/', 'http://telnyx.test');
      const text = await bodyOf(req);
      // A recording's media_url: no API key, its token instead (as a short-lived URL Telnyx gives).
      const media = /^\/media\/([^/]+)\.wav$/.exec(target.pathname);
      if (media) {
        const recording = recordings.find((each) => each.sid === media[1] && each.token === target.searchParams.get('token') && !each.deleted);
        if (faults.recordingStatus) return refuse(req, res, faults.recordingStatus, 'The recording cannot be read now');
        if (!recording || req.method !== 'GET') return refuse(req, res, 404, 'No such recording media', '10005');
        res.writeHead(200, { 'content-type': 'audio/wav', 'content-length': String(recording.wav.length) });
        res.end(recording.wav);
        return;
      }
      if (faults.rejectCredentials || req.headers.authorization !== `Bearer ${apiKey}`) {
        refuse(req, res, 401, 'The API key is missing or wrong', '10009');
        return;
      }
      const recordingPath = /^\/v2\/texml\/Accounts\/([^/]+)\/Recordings\/([^/]+)\.json$/.exec(target.pathname);
      if (recordingPath && decodeURIComponent(recordingPath[1]!) === accountSid) {
        const recordingSid = decodeURIComponent(recordingPath[2]!);
        const problem = recordingRequestProblem(req.method ?? '', recordingSid, target.searchParams);
        if (problem) return refuse(req, res, req.method === 'GET' || req.method === 'DELETE' ? 422 : 405, problem);
        if (faults.recordingStatus) return refuse(req, res, faults.recordingStatus, 'The recording cannot be read now');
        const recording = recordings.find((each) => each.sid === recordingSid && !each.deleted);
        // call-scripting_NotFoundResponse: { errors: [{ detail }] }.
        if (!recording) return json(res, 404, { errors: [{ detail: 'Resource not found' }] });
        if (req.method === 'DELETE') {
          recording.deleted = true;
          res.writeHead(204).end();
          return;
        }
        return answer(res, 'recording', recordingResource(recording));
      }
      const match = /^\/v2\/texml\/Accounts\/([^/]+)\/Calls(?:\/([^/]+))?$/.exec(target.pathname);
      if (!match || decodeURIComponent(match[1]!) !== accountSid) {
        refuse(req, res, 404, `No such resource: ${target.pathname}`, '10005');
        return;
      }
      const sid = match[2] ? decodeURIComponent(match[2]) : null;
      if (!sid && req.method === 'POST') {
        if (!/^application\/json/.test(req.headers['content-type'] ?? '')) return refuse(req, res, 415, 'InitiateTexmlCall takes application/json');
        const body = JSON.parse(text) as Record<string, unknown>;
        const problem = initiateCallProblem(body);
        if (problem) return refuse(req, res, 422, problem);
        if (faults.createStatus) return refuse(req, res, faults.createStatus, 'Telnyx could not take the call now');
        const call: FakeTelnyxCall = {
          sid: `v3:${randomBytes(24).toString('base64url')}`,
          to: String(body.To),
          from: String(body.From),
          url: String(body.Url ?? ''),
          statusCallback: typeof body.StatusCallback === 'string' ? body.StatusCallback : null,
          statusCallbackEvents: typeof body.StatusCallbackEvent === 'string' ? body.StatusCallbackEvent.split(' ') : ['completed'],
          machineDetection: body.MachineDetection === 'Enable' || body.MachineDetection === 'DetectMessageEnd' ? String(body.MachineDetection) : null,
          verdictCallback: body.AsyncAmd === true && typeof body.AsyncAmdStatusCallback === 'string' ? body.AsyncAmdStatusCallback : null,
          verdicts: [],
          record:
            body.Record === true
              ? {
                  channels: body.RecordingChannels === 'dual' ? 'dual' : 'mono',
                  callback: typeof body.RecordingStatusCallback === 'string' ? body.RecordingStatusCallback : null,
                  events: typeof body.RecordingStatusCallbackEvent === 'string' ? body.RecordingStatusCallbackEvent.split(' ') : ['completed'],
                }
              : null,
          recording: null,
          pendingTexml: null,
          texml: typeof body.Texml === 'string' ? body.Texml : null,
          timeoutSeconds: typeof body.Timeout === 'number' ? body.Timeout : null,
          updates: [],
          dialReports: [],
          streams: [],
          status: 'queued',
          answeredBy: null,
          duration: null,
          startTime: new Date(),
          endTime: null,
          documents: [],
          heard: [],
          transfers: [],
          pressed: [],
          hungUp: false,
        };
        calls.push(call);
        lives.push(live(call, decide(call.to, body)).catch(() => undefined));
        answer(res, 'initiated', { from: call.from, to: call.to, status: 'queued' });
        return;
      }
      if (!sid && req.method === 'GET') {
        const problem = listCallsProblem(target.searchParams);
        if (problem) return refuse(req, res, 422, problem);
        const to = target.searchParams.get('To');
        const from = target.searchParams.get('From');
        const found = calls.filter((call) => (!to || call.to === to) && (!from || call.from === from));
        const size = Number(target.searchParams.get('PageSize') ?? 20);
        answer(res, 'calls', {
          calls: found.slice(0, size).map(resource),
          page: 0,
          page_size: size,
          start: 0,
          end: Math.max(0, Math.min(found.length, size) - 1),
        });
        return;
      }
      const call = calls.find((each) => each.sid === sid);
      if (!call) return refuse(req, res, 404, `No call ${sid}`, '10005');
      if (req.method === 'GET') return answer(res, 'call', resource(call));
      if (req.method === 'POST') {
        const form = new URLSearchParams(text);
        const problem = updateCallProblem(form);
        if (problem) return refuse(req, res, 422, problem);
        if (form.has('Texml')) {
          if (call.status !== 'in-progress') return refuse(req, res, 422, 'The call is not in progress: its TeXML cannot be replaced', '90018');
          if (faults.updateStatus) return refuse(req, res, faults.updateStatus, 'The call could not be updated now', '90000');
          call.updates.push(Object.fromEntries(form));
          call.pendingTexml = form.get('Texml');
          wake(call);
        } else if (form.has('Status')) {
          // UpdateCallRequest publishes one Status, completed ("ends the call"): a ringing call then ends canceled, one in progress completed.
          if (form.get('Status') !== 'completed') return refuse(req, res, 422, '/Status: only completed is published (it ends the call)');
          call.updates.push(Object.fromEntries(form));
          if (['queued', 'initiated', 'ringing'].includes(call.status)) lifeOf.set(call.sid, { ...state(call), canceled: true });
          else if (call.status === 'in-progress') lifeOf.set(call.sid, { ...state(call), ending: true });
          wake(call);
        }
        return answer(res, 'call', resource(call));
      }
      refuse(req, res, 405, `${req.method} is not published for ${target.pathname}`);
    } catch (error) {
      json(res, 500, { errors: [{ code: '90000', title: 'double failed', detail: error instanceof Error ? error.message : String(error) }] });
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  origin = `http://127.0.0.1:${port}`;
  return {
    url: `http://127.0.0.1:${port}/v2`,
    accountSid,
    apiKey,
    publicKey: publicBase64,
    script: (next) => void (decide = next),
    faults: (next) => void (faults = next),
    calls: () => calls,
    room: (name) => {
      const room = rooms.get(name);
      return room ? { participants: room.participants.map((participant) => participant.sid), started: room.started, ended: room.ended } : null;
    },
    recordings: () => recordings,
    recordingCallbacks: () => recordingCallbacks,
    refusals: () => refusals,
    signedHeaders,
    settled: async () => void (await Promise.all(lives)),
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
