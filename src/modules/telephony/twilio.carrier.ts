import { createRequire } from 'node:module';
import type TwilioSdk from 'twilio';
import type RequestClient from 'twilio/lib/base/RequestClient.js';
import { validateRequest } from 'twilio/lib/webhooks/webhooks.js';
import type { CallInstance } from 'twilio/lib/rest/api/v2010/account/call.js';
import {
  CarrierError,
  type AnsweredBy,
  type CallStatusEvent,
  type CarrierAccount,
  type CarrierAdapter,
  type CarrierCallState,
  type KnownCall,
  type PlaceCallRequest,
} from './carrier.js';
import { CallStatus, ProgramCarrier } from './telephony.enums.js';

type RequestOptions<TData> = RequestClient.RequestOptions<TData>;

/** Twilio's own REST API: the SDK builds every URL on it; TWILIO_API_BASE_URL replaces it. */
export const TWILIO_API_ORIGIN = 'https://api.twilio.com';

/** How long one request to Twilio may take before the carrier counts as unavailable. */
export const TWILIO_TIMEOUT_MS = 10_000;

const STATUSES: Record<string, CallStatus> = {
  queued: CallStatus.queued,
  initiated: CallStatus.queued,
  ringing: CallStatus.ringing,
  'in-progress': CallStatus.in_progress,
  completed: CallStatus.completed,
  busy: CallStatus.busy,
  'no-answer': CallStatus.no_answer,
  failed: CallStatus.failed,
  canceled: CallStatus.canceled,
};

const MACHINE = new Set(['machine_start', 'machine_end_beep', 'machine_end_silence', 'machine_end_other', 'fax']);

/** Twilio's `CallStatus` (or a call resource's `status`) in the state machine's words; null when unknown. */
export function callStatusOf(twilioStatus: string | undefined | null): CallStatus | null {
  return (twilioStatus && STATUSES[twilioStatus]) || null;
}

/** Twilio's `AnsweredBy`: human, machine (start, beep, silence, other, fax) or unknown; null when absent. */
export function answeredByOf(value: string | undefined | null): AnsweredBy | null {
  if (!value) return null;
  if (value === 'human') return 'human';
  return MACHINE.has(value) ? 'machine' : 'unknown';
}

function seconds(value: string | number | undefined | null): number | null {
  if (value === undefined || value === null || value === '') return null;
  const number = Number(value);
  return Number.isInteger(number) && number >= 0 ? number : null;
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
export class TwilioCarrier implements CarrierAdapter {
  readonly kind = ProgramCarrier.twilio;
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
        ...(request.machineDetection ? { machineDetection: 'Enable' } : {}),
      }),
    );
    return { carrierCallId: created.sid };
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

  checkSignature(account: CarrierAccount, url: string, params: Record<string, string>, signature: string | undefined): boolean {
    if (!signature) return false;
    return validateRequest(account.authToken, signature, url, params);
  }

  parseStatusCallback(params: Record<string, string>): CallStatusEvent | null {
    const status = callStatusOf(params.CallStatus);
    if (!params.CallSid || !status) return null;
    const timestamp = params.Timestamp ? new Date(params.Timestamp) : null;
    return {
      carrierCallId: params.CallSid,
      status,
      answeredBy: answeredByOf(params.AnsweredBy),
      durationSeconds: seconds(params.CallDuration),
      at: timestamp && !Number.isNaN(timestamp.getTime()) ? timestamp : new Date(),
    };
  }
}

/** A call resource as the state machine reads it. */
function stateOf(call: CallInstance): CarrierCallState | null {
  const status = callStatusOf(call.status);
  if (!status) return null;
  return {
    carrierCallId: call.sid,
    status,
    answeredBy: answeredByOf(call.answeredBy),
    durationSeconds: seconds(call.duration),
    at: call.endTime ?? call.dateUpdated ?? new Date(),
  };
}
