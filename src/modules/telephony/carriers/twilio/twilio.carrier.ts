import { createRequire } from 'node:module';
import type TwilioSdk from 'twilio';
import type RequestClient from 'twilio/lib/base/RequestClient.js';
import { getSignatureAlgorithm, validateRequest, validateRequestWithBody } from 'twilio/lib/webhooks/webhooks.js';
import type { CallInstance } from 'twilio/lib/rest/api/v2010/account/call.js';
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
  type SignedRequest,
} from '../../carrier.js';
import { CallStatus } from '../../telephony.enums.js';
import { own } from '../../../../common/own.js';
import { twimlCallStatusOf, wholeSeconds } from '../call-words.js';
import { machineDetectionOf } from './twilio-amd.js';

type RequestOptions<TData> = RequestClient.RequestOptions<TData>;

/** Twilio's own REST API: the SDK builds every URL on it; TWILIO_API_BASE_URL replaces it. */
export const TWILIO_API_ORIGIN = 'https://api.twilio.com';

/** How long one request to Twilio may take before the carrier counts as unavailable. */
export const TWILIO_TIMEOUT_MS = 10_000;

const MACHINE = new Set(['machine_start', 'machine_end_beep', 'machine_end_silence', 'machine_end_other', 'fax']);

/** Twilio's `CallStatus` (or a call resource's `status`) in the state machine's words; null when unknown. */
export function callStatusOf(twilioStatus: string | undefined | null): CallStatus | null {
  return twimlCallStatusOf(twilioStatus);
}

/** Twilio's `AnsweredBy`: human, machine (start, beep, silence, other, fax) or unknown; null when absent. */
export function answeredByOf(value: string | undefined | null): AnsweredBy | null {
  if (!value) return null;
  if (value === 'human') return 'human';
  return MACHINE.has(value) ? 'machine' : 'unknown';
}

/** A request to Twilio that failed, in CarrierError's three kinds: 401 credentials, other 4xx rejected, the rest unavailable. */
export function carrierErrorOf(error: unknown): CarrierError {
  if (error instanceof CarrierError) return error;
  const status = typeof (error as { status?: unknown })?.status === 'number' ? (error as { status: number }).status : null;
  const message = (error as { message?: unknown })?.message;
  const text = typeof message === 'string' && message ? message : 'no answer';
  if (status === 401) return new CarrierError('credentials', `Twilio rejected the account SID or auth token (401: ${text})`, 401);
  if (status !== null && status >= 400 && status < 500 && status !== 429) {
    return new CarrierError('rejected', `Twilio refused the request (${status}: ${text})`, status);
  }
  // 429 (over the account's calls per second), 5xx, a timeout or no connection: worth trying again later.
  return new CarrierError('unavailable', status === null ? `Twilio could not be reached (${text})` : `Twilio is unavailable (${status}: ${text})`, status);
}

/**
 * The SDK's HTTP client with the API's origin replaced: every Twilio URL starts with
 * https://api.twilio.com (edges and regions only change its host name), so a configured base URL
 * (a regional edge, a Twilio-compatible test double) is one rewrite here, and everything else —
 * Basic auth, form encoding, the answer's parsing, RestException — stays the SDK's.
 */
function baseUrlRequestClientClass(sdk: typeof TwilioSdk) {
  return class BaseUrlRequestClient extends sdk.RequestClient {
    constructor(private readonly baseUrl: string) {
      super({ timeout: TWILIO_TIMEOUT_MS });
    }

    override request<TData>(opts: RequestOptions<TData>) {
      const uri = opts.uri.startsWith(TWILIO_API_ORIGIN) ? this.baseUrl + opts.uri.slice(TWILIO_API_ORIGIN.length) : opts.uri;
      return super.request<TData>({ ...opts, uri, timeout: opts.timeout ?? TWILIO_TIMEOUT_MS });
    }
  };
}

/**
 * The SDK's REST client and its HTTP stack (some 200 modules with axios) load on the first request
 * to Twilio, not at start-up: most processes (and every test file that places no call) never make one.
 */
let sdk: { twilio: typeof TwilioSdk; BaseUrlRequestClient: ReturnType<typeof baseUrlRequestClientClass> } | undefined;
function twilioSdk(): NonNullable<typeof sdk> {
  if (!sdk) {
    const twilio = createRequire(import.meta.url)('twilio') as typeof TwilioSdk;
    sdk = { twilio, BaseUrlRequestClient: baseUrlRequestClientClass(twilio) };
  }
  return sdk;
}

/** Twilio Programmable Voice through the official SDK. */
export class TwilioCarrier implements CarrierAdapter, RecordingCarrier {
  readonly kind = 'twilio';
  private readonly apiBaseUrl: string;
  private httpClient?: RequestClient;

  /** `apiBaseUrl`: config.telephony.twilioApiBaseUrl (TWILIO_API_BASE_URL), without a trailing slash. */
  constructor(apiBaseUrl: string = TWILIO_API_ORIGIN) {
    this.apiBaseUrl = apiBaseUrl.replace(/\/+$/, '');
  }

  private client(account: CarrierAccount) {
    const { twilio, BaseUrlRequestClient } = twilioSdk();
    this.httpClient ??= new BaseUrlRequestClient(this.apiBaseUrl);
    return twilio(account.accountSid, account.authToken, { httpClient: this.httpClient, autoRetry: false });
  }

  private async call<T>(work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } catch (error) {
      throw carrierErrorOf(error);
    }
  }

  async placeCall(account: CarrierAccount, request: PlaceCallRequest): Promise<{ carrierCallId: string }> {
    const created = await this.call(() =>
      this.client(account).calls.create({
        to: request.to,
        from: request.from ?? '',
        url: request.answerUrl,
        method: 'POST',
        statusCallback: request.statusCallbackUrl,
        statusCallbackEvent: ['initiated', 'ringing', 'answered', 'completed'],
        statusCallbackMethod: 'POST',
        ...machineDetectionOf(request),
        ...(request.recording
          ? {
              record: true,
              recordingChannels: request.recording.channels,
              recordingStatusCallback: request.recording.statusCallbackUrl,
              recordingStatusCallbackMethod: 'POST',
              recordingStatusCallbackEvent: [...RECORDING_EVENTS],
            }
          : {}),
      }),
    );
    return { carrierCallId: created.sid };
  }

  async updateCall(account: CarrierAccount, carrierCallId: string, document: { body: string }): Promise<void> {
    await this.call(() => this.client(account).calls(carrierCallId).update({ twiml: document.body }));
  }

  async dialLeg(account: CarrierAccount, leg: DialLegRequest): Promise<{ carrierCallId: string }> {
    const created = await this.call(() =>
      this.client(account).calls.create({
        to: leg.to,
        from: leg.from,
        twiml: leg.document.body,
        timeout: leg.timeoutSeconds,
        statusCallback: leg.statusCallbackUrl,
        statusCallbackEvent: ['completed'],
        statusCallbackMethod: 'POST',
      }),
    );
    return { carrierCallId: created.sid };
  }

  async endLeg(account: CarrierAccount, carrierCallId: string): Promise<void> {
    // UpdateCall's Status: canceled ends a queued or ringing call, completed one in progress; whichever it is, one of them takes.
    // (`initiated` is a status callback's event, not a resource status Twilio publishes; read as queued if it comes.)
    const leg = await this.call(() => this.client(account).calls(carrierCallId).fetch());
    const status = leg.status === 'in-progress' ? 'completed' : 'canceled';
    if (['queued', 'initiated', 'ringing', 'in-progress'].includes(leg.status))
      await this.call(() => this.client(account).calls(carrierCallId).update({ status }));
  }

  async fetchCall(account: CarrierAccount, call: KnownCall & { carrierCallId: string }): Promise<CarrierCallState | null> {
    try {
      return stateOf(await this.client(account).calls(call.carrierCallId).fetch());
    } catch (error) {
      if ((error as { status?: unknown })?.status === 404) return null;
      throw carrierErrorOf(error);
    }
  }

  async findCall(account: CarrierAccount, call: KnownCall): Promise<CarrierCallState | null> {
    // Twilio's StartTime> is "on or after", to the second: the call was created after we queued it.
    const since = new Date(Math.floor(call.queuedAt.getTime() / 1000) * 1000);
    const calls = await this.call(() =>
      this.client(account).calls.list({ to: call.to, ...(call.from ? { from: call.from } : {}), startTimeAfter: since, limit: 20 }),
    );
    const newest = [...calls].sort((a, b) => (b.dateCreated?.getTime() ?? 0) - (a.dateCreated?.getTime() ?? 0))[0];
    return newest ? stateOf(newest) : null;
  }

  async verifyAccount(account: CarrierAccount): Promise<void> {
    await this.call(() => this.client(account).api.v2010.accounts(account.accountSid).fetch());
  }

  /**
   * Every scheme Twilio documents, checked by its SDK: the auth token with HMAC-SHA1 (no settings
   * header); a Webhooks Rule's SharedKey with the algorithm its `X-Twilio-Webhooks-Signature-Settings`
   * names (HMAC-SHA1 or HMAC-SHA256); and for a JSON body, whose URL carries `bodySHA256`, the body's
   * hash too (validateRequestWithBody). A settings header without a key on the connection is refused.
   */
  checkSignature(account: CarrierAccount, url: string, params: Record<string, string>, signature: string | undefined, request: SignedRequest = {}): boolean {
    if (!signature) return false;
    const secret = request.settings ? account.webhookKey : account.authToken;
    if (!secret) return false;
    const algorithm = getSignatureAlgorithm(request.settings);
    if (request.rawBody !== undefined && new URL(url).searchParams.has('bodySHA256'))
      return validateRequestWithBody(secret, signature, url, request.rawBody, algorithm);
    return validateRequest(secret, signature, url, params, algorithm);
  }

  parseStatusCallback(params: Record<string, string>): CallStatusEvent | null {
    const status = callStatusOf(params.CallStatus);
    if (!params.CallSid || !status) return null;
    const timestamp = params.Timestamp ? new Date(params.Timestamp) : null;
    return {
      carrierCallId: params.CallSid,
      status,
      answeredBy: answeredByOf(params.AnsweredBy),
      durationSeconds: wholeSeconds(params.CallDuration),
      at: timestamp && !Number.isNaN(timestamp.getTime()) ? timestamp : new Date(),
    };
  }

  parseRecordingCallback(params: Record<string, string>): RecordingStatusEvent | null {
    const status = own(RECORDING_STATUSES, params.RecordingStatus ?? '');
    if (!params.RecordingSid || !status) return null;
    const code = params.ErrorCode && params.ErrorCode !== '0' ? params.ErrorCode : null;
    return {
      carrierRecordingId: params.RecordingSid,
      carrierCallId: params.CallSid || null,
      status,
      durationSeconds: wholeSeconds(params.RecordingDuration),
      channels: params.RecordingChannels === '2' ? 'dual' : params.RecordingChannels === '1' ? 'mono' : null,
      errorText:
        status === 'failed' || status === 'absent'
          ? `Twilio reported the recording ${params.RecordingStatus}${code ? ` (ErrorCode ${code}, https://www.twilio.com/docs/errors/${code})` : ''}`
          : null,
    };
  }

  /**
   * The media file, fetched with the account's Basic auth (Twilio's `/Recordings/{Sid}.wav|.mp3`)
   * and handed on unread. A dual-channel recording is asked for with `RequestedChannels=2`, else
   * Twilio mixes it down to one channel. Redirects are followed without the credentials.
   */
  async openRecording(
    account: CarrierAccount,
    carrierRecordingId: string,
    format: 'wav' | 'mp3',
    channels: 'mono' | 'dual',
    signal?: AbortSignal,
  ): Promise<RecordingMedia | null> {
    const path = `/2010-04-01/Accounts/${encodeURIComponent(account.accountSid)}/Recordings/${encodeURIComponent(carrierRecordingId)}.${format}`;
    const url = `${this.apiBaseUrl}${path}${channels === 'dual' ? '?RequestedChannels=2' : ''}`;
    let response: Response;
    try {
      response = await fetch(url, {
        headers: { authorization: `Basic ${Buffer.from(`${account.accountSid}:${account.authToken}`).toString('base64')}` },
        signal: signal ? AbortSignal.any([signal, AbortSignal.timeout(TWILIO_TIMEOUT_MS)]) : AbortSignal.timeout(TWILIO_TIMEOUT_MS),
      });
    } catch (error) {
      throw carrierErrorOf(error);
    }
    if (response.status === 404) {
      await response.body?.cancel();
      return null;
    }
    if (!response.ok || !response.body) {
      const text = (await response.text().catch(() => '')).slice(0, 200);
      let message = text;
      try {
        message = (JSON.parse(text) as { message?: string }).message ?? text;
      } catch {
        // Not Twilio's JSON error: its text as it came.
      }
      throw carrierErrorOf({ status: response.status, message });
    }
    const length = Number(response.headers.get('content-length'));
    return {
      contentType: response.headers.get('content-type')?.split(';')[0] ?? (format === 'wav' ? 'audio/wav' : 'audio/mpeg'),
      contentLength: Number.isInteger(length) && length >= 0 && response.headers.has('content-length') ? length : null,
      body: response.body,
    };
  }

  async deleteRecording(account: CarrierAccount, carrierRecordingId: string): Promise<'deleted' | 'missing'> {
    try {
      await this.client(account).recordings(carrierRecordingId).remove();
      return 'deleted';
    } catch (error) {
      if ((error as { status?: unknown })?.status === 404) return 'missing';
      throw carrierErrorOf(error);
    }
  }
}

/** The recording reports asked for: started, ready, and nothing to keep (silence); a failure comes as `failed` with them. */
export const RECORDING_EVENTS = ['in-progress', 'completed', 'absent'] as const;

const RECORDING_STATUSES: Record<string, RecordingStatusEvent['status']> = {
  'in-progress': 'in_progress',
  completed: 'completed',
  absent: 'absent',
  failed: 'failed',
};

/** A call resource as the state machine reads it. */
function stateOf(call: CallInstance): CarrierCallState | null {
  const status = callStatusOf(call.status);
  if (!status) return null;
  return {
    carrierCallId: call.sid,
    status,
    answeredBy: answeredByOf(call.answeredBy),
    durationSeconds: wholeSeconds(call.duration),
    at: call.endTime ?? call.dateUpdated ?? new Date(),
  };
}
