import type Telnyx from 'telnyx';
import {
  CarrierError,
  type AnsweredBy,
  type CallStatusEvent,
  type CarrierAccount,
  type CarrierAdapter,
  type CarrierCallState,
  type DialLegRequest,
  type KnownCall,
  type PlaceCallRequest,
  type RecordingCarrier,
  type RecordingMedia,
  type RecordingStatusEvent,
} from '../../carrier.js';
import { CallStatus } from '../../telephony.enums.js';
import { twimlCallStatusOf, wholeSeconds } from '../call-words.js';
import { MACHINE_DETECTION_TIMEOUT_S } from '../../machine-verdict.js';
import { openTelnyxMedia, telnyxRecordingEventOf, TELNYX_RECORDING_EVENTS } from './telnyx-recording.js';

/**
 * InitiateCallRequest's machine-detection fields: with a verdict URL, detection in the background
 * that waits for the end of a machine's greeting (TeXML's DetectMessageEnd, AsyncAmd), so the answer
 * URL is asked at once; without one, the synchronous `Enable`. Telnyx's timeout is in milliseconds.
 */
function machineDetectionOf(request: PlaceCallRequest): Record<string, string | number | boolean> {
  if (!request.machineDetection) return {};
  if (!request.machineVerdictUrl) return { MachineDetection: 'Enable' };
  return {
    MachineDetection: 'DetectMessageEnd',
    MachineDetectionTimeout: MACHINE_DETECTION_TIMEOUT_S * 1000,
    AsyncAmd: true,
    AsyncAmdStatusCallback: request.machineVerdictUrl,
    AsyncAmdStatusCallbackMethod: 'POST',
  };
}

/** InitiateCallRequest's recording of the whole call from its answer: Record, RecordingChannels (mono or dual, our words), its callback. */
function recordingOf(request: PlaceCallRequest): Record<string, string | boolean> {
  if (!request.recording) return {};
  return {
    Record: true,
    RecordingChannels: request.recording.channels,
    RecordingStatusCallback: request.recording.statusCallbackUrl,
    RecordingStatusCallbackMethod: 'POST',
    RecordingStatusCallbackEvent: TELNYX_RECORDING_EVENTS,
  };
}

/** Telnyx's REST API: the SDK builds every URL on it; TELNYX_API_BASE_URL replaces it. */
export const TELNYX_API_ORIGIN = 'https://api.telnyx.com/v2';

/** How long one request to Telnyx may take before the carrier counts as unavailable. */
export const TELNYX_TIMEOUT_MS = 10_000;

/** InitiateCallRequest's `Timeout`, how long a placed call may ring, as published: 5 to 120 seconds. */
export const TELNYX_RING_SECONDS = { min: 5, max: 120 } as const;

/** TeXML's status (Twilio's words: CallResource.status, the TeXML callbacks' CallStatus) in the state machine's; null when unknown. */
export function telnyxStatusOf(status: string | undefined | null): CallStatus | null {
  return twimlCallStatusOf(status);
}

/** Telnyx's answering-machine verdict (`human`, `machine`, `not_sure`, or machine_* as TeXML's AnsweredBy writes it); null when absent. */
export function telnyxAnsweredByOf(value: string | undefined | null): AnsweredBy | null {
  if (!value) return null;
  if (value === 'human') return 'human';
  return value === 'machine' || value.startsWith('machine_') || value === 'fax' ? 'machine' : 'unknown';
}

/** What the SDK threw, as a CarrierError: 401 credentials, 429 and 5xx unavailable, another 4xx rejected, no answer unavailable. */
export function telnyxErrorOf(error: unknown): CarrierError {
  if (error instanceof CarrierError) return error;
  const status = typeof (error as { status?: unknown })?.status === 'number' ? (error as { status: number }).status : null;
  const detail = (error as { error?: { errors?: { detail?: string; title?: string }[] } })?.error?.errors?.[0];
  const message = detail?.detail ?? detail?.title ?? (error instanceof Error ? error.message : String(error));
  if (status === 401 || status === 403) return new CarrierError('credentials', `Telnyx refused the API key: ${message}`, status);
  if (status !== null && status >= 400 && status < 500 && status !== 408 && status !== 429)
    return new CarrierError('rejected', `Telnyx refused the request: ${message}`, status);
  return new CarrierError('unavailable', `Telnyx did not answer: ${message}`, status);
}

/**
 * Telnyx through TeXML (docs/development/carriers.md says why TeXML rather than Call Control), with
 * the official `telnyx` SDK: no retries of its own (the campaign runner retries per its program),
 * 10 s per request. The account's `accountSid` is the TeXML account id, `authToken` the API key,
 * `applicationId` the TeXML Application whose number places the calls.
 */
export class TelnyxCarrier implements CarrierAdapter, RecordingCarrier {
  readonly kind = 'telnyx';
  private sdk: typeof Telnyx | null = null;

  private readonly apiBaseUrl: string;
  constructor(apiBaseUrl?: string) {
    this.apiBaseUrl = apiBaseUrl || TELNYX_API_ORIGIN;
  }

  private async client(account: CarrierAccount): Promise<Telnyx> {
    // Loaded on first use, as the Twilio SDK is: a gateway that never calls Telnyx never loads it.
    this.sdk ??= (await import('telnyx')).default;
    return new this.sdk({ apiKey: account.authToken, baseURL: this.apiBaseUrl, maxRetries: 0, timeout: TELNYX_TIMEOUT_MS, publicKey: null });
  }

  async placeCall(account: CarrierAccount, request: PlaceCallRequest): Promise<{ carrierCallId: string | null }> {
    if (!account.applicationId) throw new CarrierError('rejected', 'The Telnyx connection names no TeXML application to place calls with');
    const client = await this.client(account);
    try {
      const answer = await client.texml.accounts.calls.calls(account.accountSid, {
        body: {
          ApplicationSid: account.applicationId,
          To: request.to,
          ...(request.from ? { From: request.from } : {}),
          Url: request.answerUrl,
          UrlMethod: 'POST',
          StatusCallback: request.statusCallbackUrl,
          StatusCallbackMethod: 'POST',
          StatusCallbackEvent: 'initiated ringing answered completed' as 'completed',
          ...machineDetectionOf(request),
          ...recordingOf(request),
        } as never,
      });
      // The published answer carries no CallSid (InitiateCallResult: from, to, status): the call's
      // first signed request (its answer or a status callback, whose URL names our call) says it.
      const sid = (answer as { call_sid?: unknown; sid?: unknown }).call_sid ?? (answer as { sid?: unknown }).sid;
      return { carrierCallId: typeof sid === 'string' && sid ? sid : null };
    } catch (error) {
      throw telnyxErrorOf(error);
    }
  }

  /** Replaces what a live call does with a TeXML document (UpdateCall's `Texml`, form-encoded as published). */
  async updateCall(account: CarrierAccount, carrierCallId: string, document: { contentType: string; body: string }): Promise<void> {
    const client = await this.client(account);
    try {
      await client.texml.accounts.calls.update(carrierCallId, { account_sid: account.accountSid, Texml: document.body });
    } catch (error) {
      throw telnyxErrorOf(error);
    }
  }

  /**
   * A warm transfer's leg to the person: InitiateTexmlCall with the document as its `Texml` (run instead of fetching a Url once
   * answered), its `Timeout` within the published 5–120 s, and one status callback, `completed`, for its end. The published answer
   * (InitiateCallResult: from, to, status) names no call, so the leg is found as a lost placement is: the newest call from `from`
   * to `to` since it was asked for, not yet ended (GetTexmlCalls by To and From). Read from the answer first if Telnyx sends it.
   */
  async dialLeg(account: CarrierAccount, leg: DialLegRequest): Promise<{ carrierCallId: string }> {
    if (!account.applicationId) throw new CarrierError('rejected', 'The Telnyx connection names no TeXML application to place calls with');
    const client = await this.client(account);
    const asked = Date.now();
    try {
      const answer = await client.texml.accounts.calls.calls(account.accountSid, {
        body: {
          ApplicationSid: account.applicationId,
          To: leg.to,
          From: leg.from,
          Texml: leg.document.body,
          Timeout: Math.min(TELNYX_RING_SECONDS.max, Math.max(TELNYX_RING_SECONDS.min, Math.round(leg.timeoutSeconds))),
          StatusCallback: leg.statusCallbackUrl,
          StatusCallbackMethod: 'POST',
          StatusCallbackEvent: 'completed',
        } as never,
      });
      const sid = (answer as { call_sid?: unknown; sid?: unknown }).call_sid ?? (answer as { sid?: unknown }).sid;
      if (typeof sid === 'string' && sid) return { carrierCallId: sid };
      const page = await client.texml.accounts.calls.retrieveCalls(account.accountSid, { To: leg.to, From: leg.from, PageSize: 20 });
      const placed = (page.calls ?? [])
        .filter((resource) => resource.sid && !resource.end_time && ['queued', 'ringing', 'in-progress'].includes(resource.status ?? ''))
        .filter((resource) => !resource.start_time || new Date(resource.start_time).getTime() >= Math.floor(asked / 1000) * 1000 - 60_000)
        .sort((a, b) => new Date(b.start_time ?? 0).getTime() - new Date(a.start_time ?? 0).getTime())[0];
      if (!placed?.sid) throw new CarrierError('unavailable', 'Telnyx took the call to the person but lists no such call: it cannot be followed');
      return { carrierCallId: placed.sid };
    } catch (error) {
      throw telnyxErrorOf(error);
    }
  }

  /**
   * Ends a leg left behind: UpdateCall's `Status` is published with one value, `completed` ("Setting the status to completed ends
   * the call", UpdateCallRequest), for a call ringing or answered alike; a leg already ended, or gone, is left as it is.
   */
  async endLeg(account: CarrierAccount, carrierCallId: string): Promise<void> {
    const client = await this.client(account);
    try {
      const leg = await client.texml.accounts.calls.retrieve(carrierCallId, { account_sid: account.accountSid });
      if (!['queued', 'ringing', 'in-progress'].includes(leg.status ?? '')) return;
      await client.texml.accounts.calls.update(carrierCallId, { account_sid: account.accountSid, Status: 'completed' });
    } catch (error) {
      if ((error as { status?: number }).status === 404) return;
      throw telnyxErrorOf(error);
    }
  }

  async fetchCall(account: CarrierAccount, call: KnownCall & { carrierCallId: string }): Promise<CarrierCallState | null> {
    const client = await this.client(account);
    try {
      const resource = await client.texml.accounts.calls.retrieve(call.carrierCallId, { account_sid: account.accountSid });
      return stateOf(resource);
    } catch (error) {
      if ((error as { status?: number }).status === 404) return null;
      throw telnyxErrorOf(error);
    }
  }

  async findCall(account: CarrierAccount, call: KnownCall): Promise<CarrierCallState | null> {
    const client = await this.client(account);
    try {
      // By number only: the published time filters (StartTime_gt) and the SDK's (`StartTime>`) disagree, so the time is compared here.
      const page = await client.texml.accounts.calls.retrieveCalls(account.accountSid, {
        To: call.to,
        ...(call.from ? { From: call.from } : {}),
        PageSize: 20,
      });
      const since = call.queuedAt.getTime() - 60_000;
      const found = (page.calls ?? []).find((resource) => !resource.start_time || new Date(resource.start_time).getTime() >= since);
      return found ? stateOf(found) : null;
    } catch (error) {
      throw telnyxErrorOf(error);
    }
  }

  async verifyAccount(account: CarrierAccount): Promise<void> {
    const client = await this.client(account);
    try {
      await client.texml.accounts.calls.retrieveCalls(account.accountSid, { PageSize: 1 });
    } catch (error) {
      throw telnyxErrorOf(error);
    }
  }

  /** Telnyx signs with its Ed25519 key, checked by the module's webhooks (index.ts): never through this form check. */
  checkSignature(): boolean {
    return false;
  }

  parseStatusCallback(params: Record<string, string>): CallStatusEvent | null {
    const status = telnyxStatusOf(params.CallStatus);
    if (!params.CallSid || !status) return null;
    const timestamp = params.Timestamp ? new Date(params.Timestamp) : null;
    return {
      carrierCallId: params.CallSid,
      status,
      answeredBy: telnyxAnsweredByOf(params.AnsweredBy),
      durationSeconds: wholeSeconds(params.CallDuration),
      at: timestamp && !Number.isNaN(timestamp.getTime()) ? timestamp : new Date(),
      ...(params.ErrorMessage ? { errorText: params.ErrorMessage } : {}),
    };
  }

  parseRecordingCallback(params: Record<string, string>): RecordingStatusEvent | null {
    return telnyxRecordingEventOf(params);
  }

  /**
   * The audio of a TeXML recording: its resource (GetTeXMLCallRecording) names a media_url, fetched
   * then. Its channels are the ones it was made with (RecordingChannels on the call), so `channels` asks nothing more.
   */
  async openRecording(
    account: CarrierAccount,
    carrierRecordingId: string,
    format: 'wav' | 'mp3',
    _channels: 'mono' | 'dual',
    signal?: AbortSignal,
  ): Promise<RecordingMedia | null> {
    const client = await this.client(account);
    let mediaUrl: string | undefined;
    try {
      const resource = await client.texml.accounts.recordings.json.retrieveRecordingSidJson(
        carrierRecordingId,
        { account_sid: account.accountSid },
        { signal },
      );
      mediaUrl = resource.media_url;
    } catch (error) {
      if ((error as { status?: number }).status === 404) return null;
      throw telnyxErrorOf(error);
    }
    if (!mediaUrl) return null;
    return openTelnyxMedia(mediaUrl, format, TELNYX_TIMEOUT_MS, signal);
  }

  async deleteRecording(account: CarrierAccount, carrierRecordingId: string): Promise<'deleted' | 'missing'> {
    const client = await this.client(account);
    try {
      await client.texml.accounts.recordings.json.deleteRecordingSidJson(carrierRecordingId, { account_sid: account.accountSid });
      return 'deleted';
    } catch (error) {
      if ((error as { status?: number }).status === 404) return 'missing';
      throw telnyxErrorOf(error);
    }
  }
}

function stateOf(resource: {
  sid?: string;
  status?: string;
  answered_by?: string;
  duration?: string;
  end_time?: string;
  date_updated?: string;
}): CarrierCallState | null {
  const status = telnyxStatusOf(resource.status);
  if (!resource.sid || !status) return null;
  const when = resource.end_time ?? resource.date_updated;
  const at = when ? new Date(when) : new Date();
  return {
    carrierCallId: resource.sid,
    status,
    answeredBy: telnyxAnsweredByOf(resource.answered_by),
    durationSeconds: wholeSeconds(resource.duration),
    at: Number.isNaN(at.getTime()) ? new Date() : at,
  };
}
