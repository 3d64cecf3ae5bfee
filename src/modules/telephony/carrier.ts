import type { FlowEdge, FlowNode } from '../programs/call-flow.types.js';
import type { CallStatus, CarrierKind, ProgramCarrier } from './telephony.enums.js';

/** The account a call is placed with: a connection's credentials, decrypted only for the call. */
export interface CarrierAccount {
  /** The carrier_connections row; null for the simulator. */
  connectionId: string | null;
  /** The carrier the connection is at; absent for the simulator. */
  kind?: CarrierKind;
  accountSid: string;
  authToken: string;
  /** The application the carrier places calls with (Telnyx: the TeXML Application's id); absent where the account alone does. */
  applicationId?: string | null;
  /** The public key the carrier signs webhooks with, where it signs with a key pair (Telnyx: the account's Ed25519 key, base64). */
  publicKey?: string | null;
  /** The SharedKey secret Twilio signs webhooks with when a Webhooks Rule matches them; null or absent: the auth token. */
  webhookKey?: string | null;
}

/** What of a carrier's request its signature covers beyond the URL and form fields. */
export interface SignedRequest {
  /** Twilio's `X-Twilio-Webhooks-Signature-Settings` (`key=…,algorithm=HMAC_SHA256`): signed with the SharedKey, by that algorithm. */
  settings?: string;
  /** The raw body, for a JSON request whose URL carries `bodySHA256`. */
  rawBody?: string;
}

export interface PlaceCallRequest {
  /** Our Call id; the carrier's callbacks carry it back in their URL. */
  callId: string;
  to: string;
  from: string | null;
  /** Where the carrier posts the call's progress (initiated, ringing, answered, completed). */
  statusCallbackUrl: string;
  /** Where the carrier asks what to do once the call is answered (TwiML for Twilio). */
  answerUrl: string;
  /** Ask the carrier to tell a machine from a person, so `voicemail` is a real outcome. */
  machineDetection: boolean;
  /**
   * With machineDetection: detect in the background and post the verdict here once a machine's
   * greeting ends (Twilio: AsyncAmd, DetectMessageEnd), so the answer is spoken to at once.
   */
  machineVerdictUrl?: string | null;
  /** 1 for the first call to this contact in the execution. */
  attempt: number;
  /**
   * Record the call from its answer (Twilio: `Record` on the call), reporting to this URL. Absent when
   * the program records only after a consent sentence: the answer's TwiML starts that recording.
   */
  recording?: { channels: 'mono' | 'dual'; statusCallbackUrl: string } | null;
  /** What the gateway knows of the call, for a simulated carrier that decides its outcome itself. */
  context?: CallContext;
}

/** The call's place in its execution; a real carrier never needs it. */
export interface CallContext {
  executionContactId: string | null;
  timeZone: string | null;
  agentId: string | null;
  flow: { nodes: FlowNode[]; edges: FlowEdge[] } | null;
  /** What the simulated caller says at ask nodes (null: its default lines). */
  utterances?: string[] | null;
  /** The program's recording setting, for a simulated carrier that leaves a generated recording. */
  recording?: { enabled: boolean; channels: 'mono' | 'dual'; consent: { sentence: string; refuseOn: string[] } | null } | null;
}

/** A report of a call's recording, in the gateway's words (RecordingStatus's values). */
export interface RecordingStatusEvent {
  carrierRecordingId: string;
  /** The call it records, when the carrier says (Twilio's CallSid). */
  carrierCallId: string | null;
  status: 'in_progress' | 'completed' | 'absent' | 'failed';
  durationSeconds: number | null;
  channels: 'mono' | 'dual' | null;
  /** Why it failed, in the carrier's words. */
  errorText: string | null;
}

/** A recording's audio as the carrier sends it, to be passed on as it arrives. */
export interface RecordingMedia {
  contentType: string;
  contentLength: number | null;
  body: ReadableStream<Uint8Array>;
}

/** What a carrier that keeps recordings implements besides CarrierAdapter (Twilio, Telnyx). */
export interface RecordingCarrier {
  /** The report a recording status callback carries, or null when its fields do not describe one. */
  parseRecordingCallback(params: Record<string, string>): RecordingStatusEvent | null;
  /** The recording's audio in this format, or null when the carrier has no such recording. Throws CarrierError. */
  openRecording(
    account: CarrierAccount,
    carrierRecordingId: string,
    format: 'wav' | 'mp3',
    channels: 'mono' | 'dual',
    signal?: AbortSignal,
  ): Promise<RecordingMedia | null>;
  /** Deletes the recording at the carrier: `missing` when it had none. Throws CarrierError. */
  deleteRecording(account: CarrierAccount, carrierRecordingId: string): Promise<'deleted' | 'missing'>;
}

/** Who picked up, as far as the carrier could tell. */
export type AnsweredBy = 'human' | 'machine' | 'unknown';

/** One report of a call's progress, in the carrier-neutral words of the state machine. */
export interface CallStatusEvent {
  carrierCallId: string;
  status: CallStatus;
  answeredBy: AnsweredBy | null;
  /** Seconds from answer to hang-up; with a final status. */
  durationSeconds: number | null;
  /** When the carrier saw it (its Timestamp), else when it arrived. */
  at: Date;
  /** Why the call failed, when the carrier says. */
  errorText?: string | null;
}

/** What the carrier says of a call right now; null from `fetchCall` when it has no such call. */
export type CarrierCallState = CallStatusEvent;

/** Facts of a call we hold, for `fetchCall` and `findCall`. */
export interface KnownCall {
  callId: string;
  carrierCallId: string | null;
  to: string;
  from: string | null;
  attempt: number;
  queuedAt: Date;
}

/**
 * Why the carrier did not do what was asked: `credentials` (it answered 401: the account SID or
 * auth token is wrong), `rejected` (it refused this request: a 4xx, e.g. an unverified caller ID;
 * retrying will not help), `unavailable` (5xx, a timeout or no answer: try again later).
 */
export class CarrierError extends Error {
  constructor(
    readonly kind: 'credentials' | 'rejected' | 'unavailable',
    message: string,
    readonly status: number | null = null,
  ) {
    super(message);
    this.name = 'CarrierError';
  }
}

/**
 * What a carrier adapter implements: the REST side of a carrier module (carriers/<kind>/; Twilio's
 * is carriers/twilio/twilio.carrier.ts); the simulator speaks the same protocol
 * (simulated-carrier.ts). Place a call with a status callback and machine detection, fetch a
 * call's state, find a call whose placement was never confirmed, check an account's credentials,
 * check a webhook's signature, and translate its status callbacks into `CallStatusEvent`s.
 */
export interface CarrierAdapter {
  readonly kind: ProgramCarrier;
  /** Creates the call at the carrier; answers its id, or null when its answer names none (the call's first callback will). Throws CarrierError. */
  placeCall(account: CarrierAccount, request: PlaceCallRequest): Promise<{ carrierCallId: string | null }>;
  /** The call's state at the carrier, or null when the carrier has no such call. Throws CarrierError. */
  fetchCall(account: CarrierAccount, call: KnownCall & { carrierCallId: string }): Promise<CarrierCallState | null>;
  /** A call to `to` from `from` created since `queuedAt`, for a placement whose answer was lost. Throws CarrierError. */
  findCall(account: CarrierAccount, call: KnownCall): Promise<CarrierCallState | null>;
  /** Resolves when the carrier accepts the credentials; throws CarrierError('credentials') when it answers 401. */
  verifyAccount(account: CarrierAccount): Promise<void>;
  // Webhooks (signatures, status callbacks) are the carrier module's `webhooks` (carriers/carrier-module.ts), not the REST side's.
  /** Replaces what a live call is doing with this call-control document (Twilio: TwiML). Throws CarrierError. */
  updateCall?(account: CarrierAccount, carrierCallId: string, document: { contentType: string; body: string }): Promise<void>;
  /** Places a call that runs this call-control document once answered (a warm transfer's leg to the person), reporting its end to `statusCallbackUrl`. Throws CarrierError. */
  dialLeg?(account: CarrierAccount, leg: DialLegRequest): Promise<{ carrierCallId: string }>;
  /** Ends a call we placed, ringing or answered (a warm transfer's leg left behind). Throws CarrierError. */
  endLeg?(account: CarrierAccount, carrierCallId: string): Promise<void>;
}

/** A warm transfer's leg: whom to call, from which number, what it runs once answered, how long it may ring, where its end is reported. */
export interface DialLegRequest {
  to: string;
  from: string;
  document: { contentType: string; body: string };
  timeoutSeconds: number;
  statusCallbackUrl: string;
}
