import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomBytes, randomUUID } from 'node:crypto';
import twilio from 'twilio';
import { ACCOUNT_SID, createCallFormProblem, createCallRecordingProblem, DELETE_RECORDING_STATUS, RECORDING_SID } from './twilio-recordings-spec.js';
import { CALL_SID, createCallDetectionProblem, updateCallProblem } from './twilio-calls-spec.js';
import { twimlProblem } from './twiml-check.js';
import { type DetectionScript, scriptedDetection } from './scripted-detection.js';

// A Twilio Programmable Voice double on loopback, for the subset the gateway uses: Basic auth, the
// account, creating, fetching and listing calls, and each call's life told as signed status
// callbacks (form-encoded, X-Twilio-Signature over the URL and the fields, as Twilio signs them).
// Point the gateway at it with TWILIO_API_BASE_URL (config.telephony.twilioApiBaseUrl = fake.url).
// Recordings: `Record` on a created call (its Record* parameters checked against Twilio's published
// CreateCall schema, twilio-recordings-spec.ts) or `<Start><Recording>` in a call's TwiML starts one
// at that point; it reports to its RecordingStatusCallback (signed), and its audio is served at
// `/Recordings/{Sid}.wav|.mp3` behind the account's Basic auth and deleted at `/Recordings/{Sid}.json`.
// Machine detection: `MachineDetection` alone answers the answer URL with `AnsweredBy` (synchronous);
// with `AsyncAmd=true` the answer URL is asked at once and each scripted verdict is posted, signed, to
// `AsyncAmdStatusCallback` once the answer's TwiML arrived, before it plays. A live call is updated with
// `POST /Calls/{Sid}.json` (checked against Twilio's published UpdateCall, twilio-calls-spec.ts): new
// `Twiml` (checked, twiml-check.ts) or a `Url` (fetched signed, POST or its `Method`) replaces what the
// call does from then on, as Twilio's "Modify a call in progress" says ("immediately change the TwiML
// it's using"), whoever placed the call: one whose document the double is running takes it at its next
// verb; one waiting in a conference room, on a `<Connect><Stream>` or held after its last verb runs it
// at once (its callee's remaining turns go on), and a redirect that ends in `<Hangup/>` ends the call.
// `Status=completed` hangs it up. A `<Dial action>` posts its outcome (DialCallStatus, DialCallDuration; the script's `dial`)
// to its action, signed, and follows the TwiML answered; a `<Connect><Stream>` it reaches is kept in the
// call's `streams` (the URL and its parameters), for the test to open as Twilio would. `<Play digits>`
// keeps the keys in the call's `pressed`; every document the gateway answers is checked (twiml-check.ts). `updateStatus`
// makes UpdateCall refuse.

export type CallOutcome = 'answered' | 'busy' | 'no-answer' | 'failed' | 'voicemail';

/** How one created call lives: its outcome, the duration reported, and how long each step takes. */
export interface CallScript extends DetectionScript {
  outcome: CallOutcome;
  /** CallDuration reported on completed (answered, voicemail); default 1. */
  durationSeconds?: number;
  /** Milliseconds between two steps of the call (initiated, ringing, answered, ended); default 20. */
  stepMs?: number;
  /** What the caller answers each `<Gather>`, in order: words (SpeechResult), keys ({ digits }), or null for silence; silence once they run out. */
  turns?: CallerTurn[];
  /**
   * An answered call stays in progress until this settles, then ends: a test that must act while the
   * call lasts (open its media stream) says when it is done, instead of racing the steps' timers.
   */
  holdUntil?: Promise<void>;
  /** The call rings until this settles (or UpdateCall's Status=canceled ends it there), then goes on as its outcome says. */
  ringUntil?: Promise<void>;
  /** How a `<Dial action>` of the call ends (its DialCallStatus and DialCallDuration); default completed after 42 s. */
  dial?: { status: 'completed' | 'answered' | 'busy' | 'no-answer' | 'failed' | 'canceled'; durationSeconds?: number };
}

export type CallerTurn = string | { digits: string } | null;

export interface FakeTwilioFaults {
  /** Every status callback is sent twice. */
  duplicate?: boolean;
  /** The callbacks of a call are held until it ends, then sent newest first. */
  reorder?: boolean;
  /** Milliseconds added before each callback is sent. */
  delayMs?: number;
  /** Callbacks not sent at all: every one (true) or those of these Twilio statuses; GET of the call still tells the state. */
  drop?: boolean | string[];
  /** Creating a call answers this 5xx status (the call is not created). */
  createStatus?: number;
  /** Creating a call never answers (until close). */
  hangCreate?: boolean;
  /** Every request answers this 5xx status (Twilio down). */
  unavailable?: number;
  /** Every request answers 401, as for a wrong auth token. */
  rejectCredentials?: boolean;
  /** More creates than this within one second answer 429 (Twilio's 20429). */
  maxCallsPerSecond?: number;
  /** Recordings end with this status (and Twilio's ErrorCode 16104 for failed) rather than completed; they keep no audio. */
  recordingStatus?: 'failed' | 'absent';
  /** Recording downloads and deletes answer 404, as for a recording lost (or deleted) at Twilio. */
  recordingMissing?: boolean;
  /** Recording downloads and deletes answer this 5xx status. */
  recordingStatusCode?: number;
  /** UpdateCall answers this 4xx or 5xx status (the call is not updated). */
  updateStatus?: number;
}

/** A recording the double keeps: what Twilio's Recording resource says, and its audio. */
export interface FakeRecording {
  sid: string;
  callSid: string;
  /** `OutboundAPI` (Record on the call) or `StartCallRecordingTwiML` (`<Start><Recording>`). */
  source: string;
  channels: 'mono' | 'dual';
  status: string;
  durationSeconds: number;
  statusCallback: string | null;
  statusCallbackEvents: string[];
  deleted: boolean;
  /** The query each download of it came with (RequestedChannels for a dual one). */
  downloads: { format: string; query: Record<string, string> }[];
}

export interface RecordedRequest {
  method: string;
  path: string;
  query: Record<string, string>;
  form: Record<string, string>;
  headers: IncomingMessage['headers'];
  at: number;
}

export interface DeliveredCallback {
  callSid: string;
  url: string;
  params: Record<string, string>;
  signature: string;
  status: number | null;
  at: number;
}

export interface FakeCall {
  sid: string;
  to: string;
  from: string;
  url: string;
  /** The TwiML a create gave instead of a Url (run once answered). */
  createdTwiml?: string | null;
  statusCallback: string | null;
  statusCallbackEvents: string[];
  machineDetection: string | null;
  /** AsyncAmd's callback (AsyncAmdStatusCallback), when the create asked for detection in the background. */
  asyncAmd: { callback: string; method: string } | null;
  /** Every UpdateCall form the call took, in order. */
  updates: Record<string, string>[];
  /** TwiML an update gave the call while the double was running its document, not yet played: it replaces what the call was doing, at its next verb. */
  pendingTwiml: string | null;
  /** Twilio's status words: queued, initiated, ringing, in-progress, completed, busy, no-answer, failed. */
  status: string;
  answeredBy: string | null;
  duration: number | null;
  dateCreated: Date;
  dateUpdated: Date;
  startTime: Date | null;
  endTime: Date | null;
  /** What the answer URL answered (TwiML) when the call was answered. */
  twiml: string | null;
  twimlStatus: number | null;
  /** Every TwiML document the call fetched, in order (answer, gathers, redirects). */
  documents: { url: string; status: number | null; twiml: string }[];
  /** What the caller heard (`<Say>` texts, those inside a `<Gather>` too), in order. */
  heard: string[];
  /** Numbers a `<Dial>` bridged the call to. */
  transfers: string[];
  /** The keys each `<Play digits>` pressed on the call, in order. */
  pressed: string[];
  /** Every `<Dial action>` report the double sent: the form it posted and the status it was answered. */
  dialReports: { url: string; params: Record<string, string>; status: number | null }[];
  /** An adopted call (a test's own, `adopt`): its updates are played at once, as its TwiML is not being followed. */
  adopted: { script: CallScript } | null;
  /** Whether the TwiML ended with `<Hangup/>` (rather than running out of verbs or a `<Dial>`). */
  hungUp: boolean;
  /** Every `<Connect><Stream>` the call's TwiML reached: the stream URL and its `<Parameter>`s, where the document came from (a test opens it). */
  streams: { url: string; parameters: Record<string, string>; from: string }[];
  direction: 'outbound-api' | 'inbound';
  /** `Record` on the create: how to record the call once it is answered (null: not from the start). */
  record: { channels: 'mono' | 'dual'; statusCallback: string | null; events: string[] } | null;
}

/** A call placed to one of the account's numbers, as Twilio's "A call comes in" webhook sees it. */
export interface IncomingCall {
  to: string;
  from: string;
  /** The number's voice URL ("A call comes in"). */
  url: string;
  /** The number's status callback URL; reports completed when the call ends. */
  statusCallback?: string;
  turns?: CallerTurn[];
  durationSeconds?: number;
}

export interface FakeTwilio {
  url: string;
  accountSid: string;
  /** The auth token it accepts now (rotate changes it). */
  readonly authToken: string;
  /** Replaces the accepted auth token, as rotating it in Twilio's console does; callbacks are signed with the new one. */
  rotate(authToken: string): void;
  /** Decides each new call's life from its To number (and the whole create form). */
  script(decide: (to: string, form: Record<string, string>) => CallScript): void;
  /** Replaces the faults in force (none by default). */
  faults(faults: FakeTwilioFaults): void;
  calls(): FakeCall[];
  /** The recordings made, deleted ones too. */
  recordings(): FakeRecording[];
  requests(): RecordedRequest[];
  callbacks(): DeliveredCallback[];
  /** A caller dials one of the account's numbers: the voice URL is fetched, its TwiML followed, the end reported; resolves with the call once it ended. */
  dialIn(call: IncomingCall): Promise<FakeCall>;
  /**
   * A call already in progress at the double, as a test's own (a call row inserted with this CallSid,
   * its media stream opened by the test): UpdateCall takes it, and its new TwiML is played at once.
   */
  adopt(call: { sid: string; to: string; from: string; script?: CallScript }): FakeCall;
  /** Why each UpdateCall the double refused for its TwiML would not run (none expected). */
  twimlProblems(): string[];
  /** A conference room (`<Dial><Conference>`): the calls in it now, and whether it started (the caller and the person bridged). */
  room(name: string): { participants: string[]; started: boolean } | null;
  /** Resolves when every call created so far has ended and its callbacks were sent. */
  settled(): Promise<void>;
  close(): Promise<void>;
}

const API = '/2010-04-01';
/** The document a call runs next: a URL to fetch (POST, or GET for an update's Method=GET), or TwiML given inline. */
type NextDocument = { url: string; params: Record<string, string>; method?: 'POST' | 'GET' } | { twiml: string; from: string };
const rfc2822 = (date: Date) => date.toUTCString().replace('GMT', '+0000');
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function twilioError(res: ServerResponse, status: number, code: number, message: string): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ code, message, more_info: `https://www.twilio.com/docs/errors/${code}`, status }));
}

/** A short WAV of silence (16-bit PCM, 8 kHz) standing for a recording's audio. */
function fakeWav(channels: number, seconds: number): Buffer {
  const data = Buffer.alloc(Math.max(1, Math.min(seconds, 5)) * 8000 * 2 * channels);
  const header = Buffer.alloc(44);
  header.write('RIFF', 0, 'ascii');
  header.writeUInt32LE(36 + data.length, 4);
  header.write('WAVEfmt ', 8, 'ascii');
  header.writeUInt32LE(16, 16);
  header.writeUInt16LE(1, 20);
  header.writeUInt16LE(channels, 22);
  header.writeUInt32LE(8000, 24);
  header.writeUInt32LE(8000 * 2 * channels, 28);
  header.writeUInt16LE(2 * channels, 32);
  header.writeUInt16LE(16, 34);
  header.write('data', 36, 'ascii');
  header.writeUInt32LE(data.length, 40);
  return Buffer.concat([header, data]);
}

function json(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

export async function startFakeTwilio(options: { accountSid?: string; authToken?: string } = {}): Promise<FakeTwilio> {
  const accountSid = options.accountSid ?? `AC${randomBytes(16).toString('hex')}`;
  let authToken = options.authToken ?? randomBytes(16).toString('hex');
  let decide: (to: string, form: Record<string, string>) => CallScript = () => ({ outcome: 'answered' });
  let faults: FakeTwilioFaults = {};
  const calls = new Map<string, FakeCall>();
  const requests: RecordedRequest[] = [];
  const delivered: DeliveredCallback[] = [];
  const lives: Promise<void>[] = [];
  const creates: number[] = [];
  const recordings = new Map<string, FakeRecording>();
  /** The recordings of a call now being recorded, to be ended with it. */
  const recording = new Map<string, FakeRecording[]>();
  /** How to end each call still ringing (UpdateCall Status=canceled). */
  const cancels = new Map<string, () => void>();
  /** Conference rooms by name: who is in each (and whether they start it), and whether it started (someone who starts it came). */
  const rooms = new Map<string, { participants: { sid: string; starts: boolean }[]; started: boolean }>();
  /** The calls whose TwiML the double is running now (a fetch, a `<Say>`, a `<Gather>`, a `<Dial action>` under way). */
  const followed = new Set<string>();
  /** What each created call's callee has left to say at its `<Gather>`s: one list for the call's whole life, whatever document it is in. */
  const turnsLeft = new Map<string, CallerTurn[]>();
  /** A Url an update gave a call being followed: fetched at its next verb, as pendingTwiml is played. */
  const pendingUrls = new Map<string, NextDocument>();
  /** The TwiML an update started on a created call that was not being followed (the call's life waits for it before it ends). */
  const redirected = new Map<string, Promise<void>>();
  /** Ends the hold (holdUntil) of a call whose redirected TwiML hung up: `<Hangup/>` ends a call. */
  const hangUps = new Map<string, () => void>();
  /** How each call's `<Dial action>` ends, from its script. */
  const dials = new Map<string, NonNullable<CallScript['dial']>>();
  /** Why the TwiML of each UpdateCall refused would not run (twiml-check.ts). */
  const twimlProblems: string[] = [];
  let sequence = 0;

  const resource = (call: FakeCall) => ({
    sid: call.sid,
    account_sid: accountSid,
    date_created: rfc2822(call.dateCreated),
    date_updated: rfc2822(call.dateUpdated),
    parent_call_sid: null,
    to: call.to,
    to_formatted: call.to,
    from: call.from,
    from_formatted: call.from,
    phone_number_sid: null,
    status: call.status,
    start_time: call.startTime ? rfc2822(call.startTime) : null,
    end_time: call.endTime ? rfc2822(call.endTime) : null,
    duration: call.duration === null ? null : String(call.duration),
    price: null,
    price_unit: 'USD',
    direction: 'outbound-api',
    answered_by: call.answeredBy,
    api_version: '2010-04-01',
    forwarded_from: null,
    group_sid: null,
    caller_name: null,
    queue_time: '0',
    trunk_sid: null,
    uri: `${API}/Accounts/${accountSid}/Calls/${call.sid}.json`,
    subresource_uris: {},
  });

  /** A signed request to the gateway: POST with the fields as a form, or GET with them in the query (Twilio then signs the URL alone). */
  const signedPost = async (
    url: string,
    params: Record<string, string>,
    method: 'POST' | 'GET' = 'POST',
  ): Promise<{ status: number | null; text: string; signature: string }> => {
    const target = method === 'GET' ? `${url}${url.includes('?') ? '&' : '?'}${new URLSearchParams(params).toString()}` : url;
    const signature = twilio.getExpectedTwilioSignature(authToken, target, method === 'GET' ? {} : params);
    try {
      const headers: Record<string, string> = {
        'x-twilio-signature': signature,
        // One token per request: Twilio repeats a request's token only on its own retries of that request.
        'i-twilio-idempotency-token': randomUUID(),
        'user-agent': 'TwilioProxy/1.1',
      };
      if (method === 'POST') headers['content-type'] = 'application/x-www-form-urlencoded; charset=utf-8';
      const response = await fetch(target, { method, headers, ...(method === 'POST' ? { body: new URLSearchParams(params).toString() } : {}) });
      return { status: response.status, text: await response.text(), signature };
    } catch {
      return { status: null, text: '', signature };
    }
  };

  const baseParams = (call: FakeCall): Record<string, string> => ({
    AccountSid: accountSid,
    ApiVersion: '2010-04-01',
    CallSid: call.sid,
    CallStatus: call.status,
    Called: call.to,
    Caller: call.from,
    Direction: call.direction,
    From: call.from,
    To: call.to,
  });

  const decode = (text: string) =>
    text
      .replace(/&lt;/g, '<')
      .replace(/&gt;/g, '>')
      .replace(/&quot;/g, '"')
      .replace(/&apos;/g, "'")
      .replace(/&#39;/g, "'")
      .replace(/&amp;/g, '&');
  const attributes = (text: string) => Object.fromEntries([...text.matchAll(/(\w+)="([^"]*)"/g)].map((match) => [match[1]!, decode(match[2]!)]));

  /**
   * Follows the call's TwiML as Twilio does: `<Say>` is heard, `<Gather>` posts the caller's next
   * turn to its action (or, on silence, goes on to the next verb), `<Redirect>` fetches its URL,
   * `<Dial>` bridges (the call ends when the bridge does), `<Hangup/>` ends the call.
   */
  const follow = async (call: FakeCall, first: NextDocument, turns: CallerTurn[], afterAnswer?: () => Promise<void>) => {
    followed.add(call.sid);
    try {
      await run(call, first, turns, afterAnswer);
    } finally {
      followed.delete(call.sid);
    }
  };

  const run = async (call: FakeCall, first: NextDocument, turns: CallerTurn[], afterAnswer?: () => Promise<void>) => {
    let next: NextDocument | null = first;
    for (let hops = 0; next && hops < 60; hops++) {
      let text: string;
      const source = 'twiml' in next ? next.from : next.url;
      // A new document moves the call out of any conference room it was in.
      for (const entry of rooms.values()) entry.participants = entry.participants.filter((participant) => participant.sid !== call.sid);
      if ('twiml' in next) {
        text = next.twiml;
        call.documents.push({ url: next.from, status: 200, twiml: text });
      } else {
        const answer = await signedPost(next.url, next.params, next.method);
        call.documents.push({ url: next.url, status: answer.status, twiml: answer.text });
        const first = call.twiml === null;
        if (first) {
          call.twiml = answer.text;
          call.twimlStatus = answer.status;
        }
        if (answer.status !== 200) break;
        text = answer.text;
        // Every document the gateway answers is checked as an update's is.
        const refusal = twimlProblem(text);
        if (refusal) twimlProblems.push(`${next.url}: ${refusal}`);
        if (first && afterAnswer) await afterAnswer();
      }
      next = null;
      // An update of the live call replaces what this document would have done.
      if (call.pendingTwiml !== null) {
        next = { twiml: call.pendingTwiml, from: 'UpdateCall' };
        call.pendingTwiml = null;
        continue;
      }
      const redirect = pendingUrls.get(call.sid);
      if (redirect) {
        pendingUrls.delete(call.sid);
        next = redirect;
        continue;
      }
      const body = /<Response>([\s\S]*)<\/Response>/.exec(text)?.[1] ?? '';
      for (const verb of body.matchAll(/<(Say|Play|Gather|Redirect|Dial|Hangup|Connect|Pause|Start)\b([^>]*?)(?:\/>|>([\s\S]*?)<\/\1>)/g)) {
        const [, name, attrs, inner = ''] = verb;
        const options = attributes(attrs ?? '');
        if (name === 'Say') call.heard.push(decode(inner));
        else if (name === 'Play' && options.digits !== undefined) call.pressed.push(options.digits);
        else if (name === 'Start') {
          const noun = /<Recording\b([^>]*?)\/?>/.exec(inner);
          if (noun) {
            const recordingOptions = attributes(noun[1] ?? '');
            await startRecording(call, 'StartCallRecordingTwiML', {
              channels: recordingOptions.channels === 'dual' ? 'dual' : 'mono',
              statusCallback: recordingOptions.recordingStatusCallback ?? null,
              events: (recordingOptions.recordingStatusCallbackEvent ?? 'completed').split(' ').filter(Boolean),
            });
          }
        } else if (name === 'Gather') {
          for (const say of inner.matchAll(/<Say\b[^>]*>([\s\S]*?)<\/Say>/g)) call.heard.push(decode(say[1]!));
          const turn = turns.shift() ?? null;
          if (turn === null) continue;
          const heard: Record<string, string> = typeof turn === 'string' ? { SpeechResult: turn, Confidence: '0.9' } : { Digits: turn.digits };
          next = { url: options.action!, params: { ...baseParams(call), ...heard } };
          break;
        } else if (name === 'Redirect') {
          next = { url: decode(inner.trim()), params: baseParams(call) };
          break;
        } else if (name === 'Dial' && /<Conference\b/.test(inner)) {
          // A conference room: the call waits in it (hold music) until one who starts it is there too; it stays until moved or ended.
          const noun = /<Conference\b([^>]*?)>([\s\S]*?)<\/Conference>/.exec(inner);
          const room = decode(noun?.[2]?.trim() ?? '');
          const starts = attributes(noun?.[1] ?? '').startConferenceOnEnter !== 'false';
          const entry = rooms.get(room) ?? { participants: [], started: false };
          entry.participants.push({ sid: call.sid, starts });
          entry.started ||= starts;
          rooms.set(room, entry);
          break;
        } else if (name === 'Dial') {
          call.transfers.push(decode(inner.replace(/<[^>]+>/g, '').trim()));
          if (options.action) {
            // Twilio asks the action once the dialled party's leg ends, and goes on with what it answers.
            const dial: NonNullable<CallScript['dial']> = dials.get(call.sid) ?? { status: 'completed' };
            const params = {
              ...baseParams(call),
              DialCallSid: `CA${randomBytes(16).toString('hex')}`,
              DialCallStatus: dial.status,
              DialCallDuration: String(dial.durationSeconds ?? (dial.status === 'completed' || dial.status === 'answered' ? 42 : 0)),
            };
            const answer = await signedPost(options.action, params);
            call.dialReports.push({ url: options.action, params, status: answer.status });
            // What the action answers is TwiML Twilio runs next: checked as an update's is.
            const refusal = answer.status === 200 ? twimlProblem(answer.text) : null;
            if (refusal) twimlProblems.push(`the <Dial action>'s answer: ${refusal}`);
            if (answer.status === 200) next = { twiml: answer.text, from: options.action };
          }
          break;
        } else if (name === 'Hangup') {
          call.hungUp = true;
          break;
        } else if (name === 'Connect') {
          const stream = /<Stream\b([^>]*?)(?:\/>|>([\s\S]*?)<\/Stream>)/.exec(inner);
          if (stream) {
            const parameters = Object.fromEntries(
              [...(stream[2] ?? '').matchAll(/<Parameter\b([^>]*?)\/?>/g)].map((parameter) => {
                const named = attributes(parameter[1] ?? '');
                return [named.name ?? '', named.value ?? ''];
              }),
            );
            call.streams.push({ url: attributes(stream[1] ?? '').url ?? '', parameters, from: source });
          }
          break;
        }
      }
    }
  };

  /** A recording's callback, signed like a call's; sent when its event was asked for (a failure always is). */
  const recordingCallback = async (call: FakeCall, item: FakeRecording, event: string, extra: Record<string, string> = {}) => {
    if (!item.statusCallback || (event !== 'failed' && !item.statusCallbackEvents.includes(event))) return;
    if (faults.delayMs) await sleep(faults.delayMs);
    const params = {
      AccountSid: accountSid,
      CallSid: call.sid,
      RecordingSid: item.sid,
      RecordingUrl: `${url}${API}/Accounts/${accountSid}/Recordings/${item.sid}`,
      RecordingStatus: event,
      RecordingChannels: item.channels === 'dual' ? '2' : '1',
      RecordingSource: item.source,
      RecordingStartTime: rfc2822(new Date()),
      ...extra,
    };
    const times = faults.duplicate ? 2 : 1;
    for (let i = 0; i < times; i++) {
      const { status, signature } = await signedPost(item.statusCallback, params);
      delivered.push({ callSid: call.sid, url: item.statusCallback, params, signature, status, at: Date.now() });
    }
  };

  const startRecording = async (call: FakeCall, source: string, how: { channels: 'mono' | 'dual'; statusCallback: string | null; events: string[] }) => {
    const item: FakeRecording = {
      sid: `RE${randomBytes(16).toString('hex')}`,
      callSid: call.sid,
      source,
      channels: how.channels,
      status: 'in-progress',
      durationSeconds: 0,
      statusCallback: how.statusCallback,
      statusCallbackEvents: how.events,
      deleted: false,
      downloads: [],
    };
    recordings.set(item.sid, item);
    recording.set(call.sid, [...(recording.get(call.sid) ?? []), item]);
    await recordingCallback(call, item, 'in-progress');
  };

  /** The call ended: its recordings end too, completed (or as the fault says) with the call's duration. */
  const endRecordings = async (call: FakeCall) => {
    for (const item of recording.get(call.sid) ?? []) {
      item.status = faults.recordingStatus ?? 'completed';
      item.durationSeconds = call.duration ?? 0;
      const failed = item.status === 'failed' ? { ErrorCode: '16104' } : { ErrorCode: '0' };
      await recordingCallback(call, item, item.status, { RecordingDuration: String(item.durationSeconds), ...failed });
    }
    recording.delete(call.sid);
  };

  const sendCallback = async (call: FakeCall, params: Record<string, string>) => {
    if (faults.delayMs) await sleep(faults.delayMs);
    const times = faults.duplicate ? 2 : 1;
    for (let i = 0; i < times; i++) {
      const { status, signature } = await signedPost(call.statusCallback!, params);
      delivered.push({ callSid: call.sid, url: call.statusCallback!, params, signature, status, at: Date.now() });
    }
  };

  /** An AsyncAmdStatusCallback: the fields Twilio's guide lists, signed like every callback. */
  const sendVerdict = async (call: FakeCall, answeredBy: string, detectionMs: number) => {
    if (!call.asyncAmd) return;
    const params = { AccountSid: accountSid, CallSid: call.sid, AnsweredBy: answeredBy, MachineDetectionDuration: String(detectionMs) };
    const { status, signature } = await signedPost(call.asyncAmd.callback, params);
    delivered.push({ callSid: call.sid, url: call.asyncAmd.callback, params, signature, status, at: Date.now() });
  };

  /** `POST …/Calls/{Sid}.json`: UpdateCall, as Twilio publishes it; only a live call takes new TwiML (21220 otherwise). */
  const updateCall = (res: ServerResponse, call: FakeCall | undefined, body: URLSearchParams) => {
    const problem = updateCallProblem(body);
    if (problem) return twilioError(res, 400, 20001, problem);
    if (!call) return twilioError(res, 404, 20404, 'The requested resource was not found');
    const form = Object.fromEntries(body);
    // Status=canceled ends a call still queued or ringing (Twilio's UpdateCall); the call's life sees it as it rings.
    if (form.Status === 'canceled' && ['queued', 'initiated', 'ringing'].includes(call.status)) {
      call.updates.push(form);
      cancels.get(call.sid)?.();
      return json(res, 200, resource(call));
    }
    if (call.status !== 'in-progress') return twilioError(res, 400, 21220, 'Call is not in-progress. Cannot redirect.');
    if (faults.updateStatus) return twilioError(res, faults.updateStatus, faults.updateStatus >= 500 ? 20500 : 21220, 'The call could not be updated');
    const twimlRefusal = form.Twiml !== undefined ? twimlProblem(form.Twiml) : null;
    if (twimlRefusal) {
      twimlProblems.push(twimlRefusal);
      return twilioError(res, 400, 12100, `Document parse failure: ${twimlRefusal}`);
    }
    call.updates.push(form);
    call.dateUpdated = new Date();
    const twiml = form.Twiml ?? (form.Status === 'completed' || form.Status === 'canceled' ? '<Response><Hangup/></Response>' : null);
    const document: NextDocument | null =
      twiml !== null
        ? { twiml, from: 'UpdateCall' }
        : form.Url
          ? { url: form.Url, params: baseParams(call), method: form.Method === 'GET' ? 'GET' : 'POST' }
          : null;
    if (document === null) return json(res, 200, resource(call));
    // An adopted call plays it now. A call whose TwiML the double is running takes it at its next verb.
    if (call.adopted) lives.push(follow(call, document, [...(call.adopted.script.turns ?? [])]));
    else if (followed.has(call.sid)) {
      if ('twiml' in document) call.pendingTwiml = document.twiml;
      else pendingUrls.set(call.sid, document);
    } else {
      // Any other live call is redirected at once, as Twilio does ("Modify a call in progress": the call
      // immediately runs the new TwiML), whoever placed it and whatever it was doing: waiting in a
      // conference room, on a <Connect><Stream>, or held after its last verb. Its callee's turns go on
      // where they were; a redirect that hangs up ends the call.
      const redirect = follow(call, document, turnsLeft.get(call.sid) ?? []).then(() => {
        if (call.hungUp) hangUps.get(call.sid)?.();
      });
      redirected.set(call.sid, redirect);
      lives.push(redirect);
    }
    return json(res, 200, resource(call));
  };

  /** Plays a call's life: each step moves the resource, then its callback is sent (or held, or dropped). */
  const live = async (call: FakeCall, script: CallScript) => {
    if (script.dial) dials.set(call.sid, script.dial);
    const stepMs = script.stepMs ?? 20;
    const amd = call.machineDetection !== null;
    const held: Record<string, string>[] = [];
    const step = async (status: string, event: string, extra: Record<string, string> = {}) => {
      await sleep(stepMs);
      call.status = status;
      call.dateUpdated = new Date();
      const final = !['initiated', 'ringing', 'in-progress'].includes(status);
      if (!call.statusCallback || (!final && !call.statusCallbackEvents.includes(event))) return;
      const dropped = faults.drop === true || (Array.isArray(faults.drop) && faults.drop.includes(status));
      if (dropped) return;
      const params = {
        ...baseParams(call),
        ...extra,
        CallbackSource: 'call-progress-events',
        SequenceNumber: String(sequence++),
        Timestamp: rfc2822(call.dateUpdated),
      };
      if (faults.reorder) held.push(params);
      else await sendCallback(call, params);
    };
    // Canceled while queued, initiated or ringing (UpdateCall Status=canceled): it ends canceled, having rung or not.
    let canceled = false;
    const cancel = new Promise<void>((resolve) => cancels.set(call.sid, () => ((canceled = true), resolve())));
    await step('initiated', 'initiated');
    if (canceled) {
      cancels.delete(call.sid);
      call.endTime = new Date();
      await step('canceled', 'completed', { CallDuration: '0' });
    } else if (script.outcome === 'failed') {
      cancels.delete(call.sid);
      call.endTime = new Date();
      await step('failed', 'completed', { CallDuration: '0' });
    } else {
      await step('ringing', 'ringing');
      if (script.ringUntil && !canceled) await Promise.race([script.ringUntil, cancel]);
      cancels.delete(call.sid);
      if (canceled) {
        call.endTime = new Date();
        await step('canceled', 'completed', { CallDuration: '0' });
      } else if (script.outcome === 'busy' || script.outcome === 'no-answer') {
        call.endTime = new Date();
        await step(script.outcome, 'completed', { CallDuration: '0' });
      } else {
        call.startTime = new Date();
        // Synchronous detection decides before the answer URL is asked; asynchronous, while its TwiML plays.
        call.answeredBy = null;
        const detect = scriptedDetection(call, script, {
          synchronous: amd && !call.asyncAmd,
          send: call.asyncAmd ? (verdict, detectionMs) => sendVerdict(call, verdict, detectionMs) : null,
        });
        const atAnswer: Record<string, string> = call.answeredBy ? { AnsweredBy: call.answeredBy } : {};
        call.status = 'in-progress';
        if (call.record) await startRecording(call, 'OutboundAPI', call.record);
        // Twilio asks the answer URL what to do as soon as the call is answered, and follows what it says.
        const answer = call.createdTwiml ? { twiml: call.createdTwiml, from: 'CreateCall' } : { url: call.url, params: { ...baseParams(call), ...atAnswer } };
        const turns = [...(script.turns ?? [])];
        turnsLeft.set(call.sid, turns);
        const hungUp = new Promise<void>((resolve) => hangUps.set(call.sid, resolve));
        await follow(call, answer, turns, detect);
        const answeredBy: Record<string, string> = call.answeredBy ? { AnsweredBy: call.answeredBy } : {};
        await step('in-progress', 'answered', answeredBy);
        if (script.holdUntil) await Promise.race([script.holdUntil, hungUp]);
        // TwiML an update started runs to its end before the call ends (a later update may have replaced it).
        for (let seen: Promise<void> | undefined; redirected.get(call.sid) !== seen;) await (seen = redirected.get(call.sid));
        hangUps.delete(call.sid);
        redirected.delete(call.sid);
        call.duration = script.durationSeconds ?? 1;
        call.endTime = new Date();
        await endRecordings(call);
        await step('completed', 'completed', { ...answeredBy, CallDuration: String(call.duration), Duration: String(Math.ceil(call.duration / 60)) });
      }
    }
    for (const params of held.reverse()) await sendCallback(call, params);
  };

  /** `GET …/Recordings/{Sid}.wav|.mp3` (the audio), `GET …/Recordings/{Sid}.json` (the resource), `DELETE …/Recordings/{Sid}.json`. */
  const recordingRequest = (req: IncomingMessage, res: ServerResponse, account: string, sid: string, extension: string, query: Record<string, string>) => {
    const notFound = () => twilioError(res, 404, 20404, `The requested resource ${req.url} was not found`);
    if (!ACCOUNT_SID.test(account) || account !== accountSid || !RECORDING_SID.test(sid)) return notFound();
    if (faults.recordingStatusCode) return twilioError(res, faults.recordingStatusCode, 20500, 'Internal Server Error');
    const item = recordings.get(sid);
    if (!item || item.deleted || faults.recordingMissing) return notFound();
    if (req.method === 'DELETE' && extension === 'json') {
      item.deleted = true;
      res.writeHead(DELETE_RECORDING_STATUS);
      return res.end();
    }
    if (req.method !== 'GET') return twilioError(res, 405, 20004, 'Method not allowed');
    if (extension === 'json') {
      return json(res, 200, {
        sid,
        account_sid: accountSid,
        call_sid: item.callSid,
        status: item.status,
        channels: item.channels === 'dual' ? 2 : 1,
        duration: String(item.durationSeconds),
        source: item.source,
        uri: `${API}/Accounts/${accountSid}/Recordings/${sid}.json`,
      });
    }
    if (item.status !== 'completed') return notFound();
    item.downloads.push({ format: extension, query });
    const channelCount = item.channels === 'dual' && query.RequestedChannels === '2' ? 2 : 1;
    const body =
      extension === 'wav'
        ? fakeWav(channelCount, item.durationSeconds)
        : Buffer.concat([Buffer.from('ID3\u0004\u0000\u0000\u0000\u0000\u0000\u0000', 'latin1'), randomBytes(2048)]);
    res.writeHead(200, { 'content-type': extension === 'wav' ? 'audio/x-wav' : 'audio/mpeg', 'content-length': String(body.length) });
    res.end(body);
  };

  const authorized = (req: IncomingMessage): boolean => {
    if (faults.rejectCredentials) return false;
    const header = req.headers.authorization ?? '';
    if (!header.startsWith('Basic ')) return false;
    return Buffer.from(header.slice(6), 'base64').toString('utf8') === `${accountSid}:${authToken}`;
  };

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const url = new URL(req.url ?? '/', 'http://fake');
    const form = Object.fromEntries(new URLSearchParams(Buffer.concat(chunks).toString('utf8')));
    const query = Object.fromEntries(url.searchParams);
    requests.push({ method: req.method ?? '', path: url.pathname, query, form, headers: req.headers, at: Date.now() });
    // The form may repeat a key (StatusCallbackEvent): keep every value.
    const events = new URLSearchParams(Buffer.concat(chunks).toString('utf8')).getAll('StatusCallbackEvent');

    if (faults.unavailable) return twilioError(res, faults.unavailable, 20500, 'Service Unavailable');
    if (!authorized(req)) return twilioError(res, 401, 20003, 'Authenticate');
    const media = /^\/2010-04-01\/Accounts\/([^/]+)\/Recordings\/([^/.]+)\.(wav|mp3|json)$/.exec(url.pathname);
    if (media) return recordingRequest(req, res, media[1]!, media[2]!, media[3]!, query);
    const match = /^\/2010-04-01\/Accounts\/([^/]+?)(?:\/Calls(?:\/([^/]+?))?)?\.json$/.exec(url.pathname);
    if (!match) return twilioError(res, 404, 20404, `The requested resource ${url.pathname} was not found`);
    const sid = match[1];
    const callSid = match[2];
    if (sid !== accountSid) return twilioError(res, 404, 20404, `The requested resource ${url.pathname} was not found`);
    const isCalls = url.pathname.includes('/Calls');

    if (!isCalls && req.method === 'GET') {
      return json(res, 200, {
        sid: accountSid,
        owner_account_sid: accountSid,
        friendly_name: 'Fake Twilio account',
        status: 'active',
        type: 'Full',
        date_created: rfc2822(new Date(0)),
        date_updated: rfc2822(new Date(0)),
        uri: `${API}/Accounts/${accountSid}.json`,
        subresource_uris: { calls: `${API}/Accounts/${accountSid}/Calls.json` },
      });
    }
    if (isCalls && !callSid && req.method === 'POST') {
      if (faults.hangCreate) return; // never answered; close() ends the socket
      if (faults.createStatus) return twilioError(res, faults.createStatus, 20500, 'Internal Server Error');
      const now = Date.now();
      while (creates.length > 0 && creates[0]! <= now - 1000) creates.shift();
      if (faults.maxCallsPerSecond !== undefined && creates.length >= faults.maxCallsPerSecond) {
        return twilioError(res, 429, 20429, 'Too Many Requests');
      }
      if (!form.To) return twilioError(res, 400, 21201, "No 'To' number is specified");
      if (!form.From) return twilioError(res, 400, 21213, "No 'From' number is specified");
      if (!form.Url && !form.Twiml) return twilioError(res, 400, 21205, 'Url parameter is required.');
      const formProblem = createCallFormProblem(new URLSearchParams(Buffer.concat(chunks).toString('utf8')));
      if (formProblem) return twilioError(res, 400, 20001, formProblem);
      // A created call's own TwiML is TwiML Twilio runs: checked as an update's is.
      const createdTwiml = form.Twiml !== undefined ? twimlProblem(form.Twiml) : null;
      if (createdTwiml) {
        twimlProblems.push(`CreateCall: ${createdTwiml}`);
        return twilioError(res, 400, 12100, `Document parse failure: ${createdTwiml}`);
      }
      const recordProblem = createCallRecordingProblem(new URLSearchParams(Buffer.concat(chunks).toString('utf8')));
      if (recordProblem) return twilioError(res, 400, 21236, recordProblem);
      const detectionProblem = createCallDetectionProblem(new URLSearchParams(Buffer.concat(chunks).toString('utf8')));
      if (detectionProblem) return twilioError(res, 400, 20001, detectionProblem);
      creates.push(now);
      const call: FakeCall = {
        sid: `CA${randomBytes(16).toString('hex')}`,
        to: form.To,
        from: form.From,
        url: form.Url ?? '',
        createdTwiml: form.Twiml ?? null,
        statusCallback: form.StatusCallback ?? null,
        statusCallbackEvents: events.length > 0 ? events : ['completed'],
        machineDetection: form.MachineDetection ?? null,
        asyncAmd:
          form.AsyncAmd === 'true' && form.AsyncAmdStatusCallback
            ? { callback: form.AsyncAmdStatusCallback, method: form.AsyncAmdStatusCallbackMethod ?? 'POST' }
            : null,
        updates: [],
        pendingTwiml: null,
        status: 'queued',
        answeredBy: null,
        duration: null,
        dateCreated: new Date(now),
        dateUpdated: new Date(now),
        startTime: null,
        endTime: null,
        twiml: null,
        twimlStatus: null,
        documents: [],
        heard: [],
        transfers: [],
        pressed: [],
        dialReports: [],
        adopted: null,
        hungUp: false,
        streams: [],
        direction: 'outbound-api',
        record:
          form.Record === 'true'
            ? {
                channels: form.RecordingChannels === 'dual' ? 'dual' : 'mono',
                statusCallback: form.RecordingStatusCallback ?? null,
                events: new URLSearchParams(Buffer.concat(chunks).toString('utf8'))
                  .getAll('RecordingStatusCallbackEvent')
                  .flatMap((value) => value.split(' '))
                  .filter(Boolean),
              }
            : null,
      };
      if (call.record && call.record.events.length === 0) call.record.events = ['completed'];
      calls.set(call.sid, call);
      lives.push(live(call, decide(call.to, form)));
      return json(res, 201, resource(call));
    }
    if (isCalls && callSid && req.method === 'POST') {
      if (!CALL_SID.test(callSid)) return twilioError(res, 404, 20404, `The requested resource ${url.pathname} was not found`);
      return updateCall(res, calls.get(callSid), new URLSearchParams(Buffer.concat(chunks).toString('utf8')));
    }
    if (isCalls && callSid && req.method === 'GET') {
      const call = calls.get(callSid);
      if (!call) return twilioError(res, 404, 20404, `The requested resource ${url.pathname} was not found`);
      return json(res, 200, resource(call));
    }
    if (isCalls && !callSid && req.method === 'GET') {
      const since = query['StartTime>'] ? new Date(query['StartTime>']) : null;
      const pageSize = Number(query.PageSize ?? 50);
      const found = [...calls.values()]
        .filter((call) => (!query.To || call.to === query.To) && (!query.From || call.from === query.From))
        .filter((call) => !since || call.dateCreated.getTime() >= since.getTime())
        .sort((a, b) => b.dateCreated.getTime() - a.dateCreated.getTime())
        .slice(0, pageSize);
      const uri = `${API}/Accounts/${accountSid}/Calls.json${url.search}`;
      return json(res, 200, {
        calls: found.map(resource),
        end: Math.max(found.length - 1, 0),
        first_page_uri: uri,
        next_page_uri: null,
        page: 0,
        page_size: pageSize,
        previous_page_uri: null,
        start: 0,
        uri,
      });
    }
    return twilioError(res, 405, 20004, 'Method not allowed');
  };

  const server: Server = createServer((req, res) => {
    handle(req, res).catch(() => twilioError(res, 500, 20500, 'Internal Server Error'));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  return {
    url,
    accountSid,
    get authToken() {
      return authToken;
    },
    rotate: (next) => void (authToken = next),
    script: (next) => void (decide = next),
    async dialIn(incoming) {
      const now = new Date();
      const call: FakeCall = {
        sid: `CA${randomBytes(16).toString('hex')}`,
        to: incoming.to,
        from: incoming.from,
        url: incoming.url,
        statusCallback: incoming.statusCallback ?? null,
        statusCallbackEvents: ['completed'],
        machineDetection: null,
        asyncAmd: null,
        updates: [],
        pendingTwiml: null,
        status: 'in-progress',
        answeredBy: null,
        duration: null,
        dateCreated: now,
        dateUpdated: now,
        startTime: now,
        endTime: null,
        twiml: null,
        twimlStatus: null,
        documents: [],
        heard: [],
        transfers: [],
        pressed: [],
        dialReports: [],
        adopted: null,
        hungUp: false,
        streams: [],
        direction: 'inbound',
        record: null,
      };
      calls.set(call.sid, call);
      const life = (async () => {
        await follow(call, { url: incoming.url, params: baseParams(call) }, [...(incoming.turns ?? [])]);
        call.status = 'completed';
        call.duration = incoming.durationSeconds ?? 1;
        call.endTime = new Date();
        await endRecordings(call);
        if (call.statusCallback) {
          await sendCallback(call, {
            ...baseParams(call),
            CallDuration: String(call.duration),
            SequenceNumber: String(sequence++),
            Timestamp: rfc2822(call.endTime),
          });
        }
      })();
      lives.push(life);
      await life;
      return call;
    },
    adopt({ sid, to, from, script = { outcome: 'answered' } }) {
      const now = new Date();
      const call: FakeCall = {
        sid,
        to,
        from,
        url: '',
        statusCallback: null,
        statusCallbackEvents: [],
        machineDetection: null,
        asyncAmd: null,
        updates: [],
        pendingTwiml: null,
        status: 'in-progress',
        answeredBy: null,
        duration: null,
        dateCreated: now,
        dateUpdated: now,
        startTime: now,
        endTime: null,
        twiml: null,
        twimlStatus: null,
        documents: [],
        heard: [],
        transfers: [],
        pressed: [],
        dialReports: [],
        adopted: { script },
        hungUp: false,
        streams: [],
        direction: 'outbound-api',
        record: null,
      };
      if (script.dial) dials.set(sid, script.dial);
      calls.set(sid, call);
      return call;
    },
    twimlProblems: () => [...twimlProblems],
    room(name) {
      const entry = rooms.get(name);
      return entry ? { participants: entry.participants.map((participant) => participant.sid), started: entry.started } : null;
    },
    faults: (next) => void (faults = { ...next }),
    calls: () => [...calls.values()],
    recordings: () => [...recordings.values()],
    requests: () => [...requests],
    callbacks: () => [...delivered],
    async settled() {
      for (let seen = 0; seen < lives.length;) {
        const batch = lives.slice(seen);
        seen = lives.length;
        await Promise.all(batch);
      }
    },
    async close() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
