import type { VoiceAction } from '../../voice/voice-actions.js';
import type { AnsweredBy, CallStatusEvent, CarrierAccount, CarrierAdapter, RecordingCarrier } from '../carrier.js';
import type { CarrierDescriptor } from '../telephony.enums.js';
import type { CredentialFormats } from '../carrier-credentials.js';
import type { MediaFraming } from './media-link.js';
import type { MachineVerdict } from '../machine-verdict.js';

/** A carrier's webhook request as the routes hand it over: what any carrier's signature covers. */
export interface WebhookRequest {
  /** The URL the carrier requested: PUBLIC_URL (ws/wss for a media upgrade) + the raw request target. */
  url: string;
  header(name: string): string | undefined;
  /** The form fields (empty for a JSON body or an upgrade). */
  fields: Record<string, string>;
  /** The body exactly as it came, when the carrier signs it (a JSON webhook). */
  rawBody?: string;
}

/** How a transfer's dial ended, as its carrier reports it (Twilio: the `<Dial action>` request's DialCallStatus). */
export interface DialOutcome {
  /** The call that was transferred (the parent call's id at the carrier). */
  carrierCallId: string;
  /** The carrier's word: completed, answered, busy, no-answer, failed, canceled. */
  status: string;
  durationSeconds: number | null;
  /** The transferred call's own status as the report gives it (Twilio's CallStatus: in-progress while the caller is on the line); null when it does not say. */
  callStatus: string | null;
}

/** What a gather's answer request says the caller said or pressed. */
export interface GatherResult {
  speech: string | null;
  digits: string | null;
}

/** Who calls whom, as an inbound call's first request says: the carrier's call id and the numbers. */
export interface InboundCall {
  carrierCallId: string;
  from: string | null;
  to: string;
}

/** How a carrier's webhooks are checked and read. */
export interface CarrierWebhooks {
  /** Whether the request was signed with the account's key; false on anything the check throws on. */
  verify(request: WebhookRequest, account: CarrierAccount): boolean;
  /** The event a status webhook reports, or null when its fields describe none. */
  status(fields: Record<string, string>): CallStatusEvent | null;
  /** What the caller said or pressed, as a gather's answer request says it. */
  gathered(fields: Record<string, string>): GatherResult;
  /** The call an inbound call's request is for, or null when its fields name none. */
  inbound(fields: Record<string, string>): InboundCall | null;
  /** The carrier's id of the call a request is about (an inbound call's status callback names its call so), or null when it names none. */
  carrierCallIdOf(fields: Record<string, string>): string | null;
  /** Who answered, by the carrier's machine detection, as the answer request says; null when it does not say. */
  answeredBy(fields: Record<string, string>): AnsweredBy | null;
  /** The verdict an asynchronous machine-detection callback carries (voicemail-drop.ts), where the carrier sends one. */
  machineVerdict?(fields: Record<string, string>): MachineVerdict | null;
  /** The outcome a transfer's dial report carries, where the carrier can transfer a live call (transfer-webhooks.rest.ts); null when its fields say none. */
  dialOutcome?(fields: Record<string, string>): DialOutcome | null;
  /** How a warm transfer's own leg (the call to the person) ended, from its status callback; null while it has not. */
  legOutcome?(fields: Record<string, string>): DialOutcome | null;
  /** The carrier's key for one request (the same on each of its retries), when it sends one. */
  idempotencyKey(request: Pick<WebhookRequest, 'header'>): string | null;
  /** Whether a media stream upgrade is the carrier's, for a carrier that signs upgrades otherwise than `verify` checks (or not at all); absent: `verify`. */
  verifyUpgrade?(request: WebhookRequest, account: CarrierAccount): boolean;
}

/** Where the call-control document of one step of a call points back to. */
export interface CallControlContext {
  publicUrl: string;
  connectionId: string;
  callId: string;
}

/** A carrier's rendering of the carrier-neutral VoiceActions (TwiML for Twilio). */
export interface CallControl {
  render(actions: VoiceAction[], context: CallControlContext): { contentType: string; body: string };
  /** Whether `digits` actions are rendered, so a batch call's send_digits presses keys through the carrier (Twilio's `<Play digits>`, TeXML's). */
  readonly playsDigits?: boolean;
}

/**
 * Everything a carrier is, in one folder (`carriers/<kind>/index.ts`), listed once in
 * `carriers/built-in.ts`: its kind and what it is (`CarrierDescriptor`: the GraphQL enums' values),
 * the formats of its connections' credentials, its REST side, its webhooks, its call control and
 * its media framing. Routes are `/telephony/<kind>/{connectionId}/…`, looked up by kind.
 */
export interface CarrierModule extends CarrierDescriptor {
  /** The fields a connection of this kind takes, each in its format; a field not listed is refused (`carrier-credentials.ts`). */
  readonly credentials: CredentialFormats;
  /** REST: place, fetch and find calls, check the account; recordings where the carrier keeps them. */
  readonly adapter: CarrierAdapter & Partial<RecordingCarrier>;
  readonly webhooks: CarrierWebhooks;
  readonly callControl: CallControl;
  readonly media: MediaFraming;
}
