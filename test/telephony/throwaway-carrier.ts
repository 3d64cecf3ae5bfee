import { createHmac, randomUUID, timingSafeEqual } from 'node:crypto';
import type { CallStatusEvent, CarrierAccount, CarrierAdapter, PlaceCallRequest } from '../../src/modules/telephony/carrier.js';
import type { CarrierModule } from '../../src/modules/telephony/carriers/carrier-module.js';
import type { MediaEvent } from '../../src/modules/telephony/carriers/media-link.js';
import { callStreamUrl } from '../../src/modules/telephony/carriers/stream-url.js';
import { CallStatus } from '../../src/modules/telephony/telephony.enums.js';
import type { CredentialFormats } from '../../src/modules/telephony/carrier-credentials.js';
import type { VoiceAction } from '../../src/modules/voice/voice-actions.js';

// "Parrot", a carrier that exists only in this test tree, written against the seam alone
// (carriers/carrier-module.ts): none of Twilio's or Telnyx's words. Its webhooks are forms in its own
// fields (`call`, `state`, `said`, `pressed`, `caller`, `callee`, `seconds`), signed with
// `x-parrot-signature`, an HMAC-SHA256 by the connection's auth token over the URL, a newline and the
// raw body; its call control is a JSON list of steps; its media stream is JSON `{t: …}` messages.
// Its kind is its own, `parrot`, and so are its accounts' formats (`perch-` + 8 digits, a
// 48-hexadecimal-digit key): nothing outside this file names it.
// Its phone (`ParrotPhone`) plays the carrier's side: it asks the gateway's URLs, walks the steps it
// gets, says its caller's turns when asked to listen, and reports the call's end.

/** Parrot's kind: its routes are `/telephony/parrot/…`, its connections' and calls' `carrier` is `parrot`. */
export const PARROT = 'parrot';

/** A Parrot account: `perch-` and 8 digits; its key (the webhooks' HMAC key), 48 hexadecimal digits. */
export const parrotCredentials: CredentialFormats = {
  accountSid: {
    pattern: /^perch-[0-9]{8}$/,
    message: 'accountSid must be a Parrot perch: perch- followed by 8 digits',
    label: 'Perch',
    hint: 'perch- followed by 8 digits',
  },
  authToken: {
    pattern: /^[0-9a-f]{48}$/,
    message: 'authToken must be a Parrot key: 48 hexadecimal digits (lowercase)',
    label: 'Parrot key',
    hint: '48 hexadecimal digits',
    secret: true,
  },
};

/** Parrot's signature: an HMAC-SHA256 by the account's key over the URL, a newline and the raw body (empty for a media upgrade). */
export const sign = (key: string, url: string, body: string) => createHmac('sha256', key).update(`${url}\n${body}`).digest('hex');

const STATES: Record<string, CallStatus> = {
  ringing: CallStatus.ringing,
  talking: CallStatus.in_progress,
  done: CallStatus.completed,
  nobody: CallStatus.no_answer,
};

function statusOf(fields: Record<string, string>): CallStatusEvent | null {
  const status = STATES[fields.state ?? ''];
  if (!fields.call || !status) return null;
  const seconds = Number(fields.seconds);
  return {
    carrierCallId: fields.call,
    status,
    answeredBy: fields.who === 'person' ? 'human' : null,
    durationSeconds: Number.isInteger(seconds) ? seconds : null,
    at: new Date(),
  };
}

type Step = { speak: string } | { listen: string; prompt: string | null } | { fetch: string } | { bridge: string } | { media: string } | { goodbye: true };

function steps(actions: VoiceAction[], context: { publicUrl: string; connectionId: string; callId: string }): Step[] {
  const base = `${context.publicUrl}/telephony/${PARROT}/${context.connectionId}`;
  const query = `callId=${encodeURIComponent(context.callId)}`;
  return actions.flatMap((action): Step[] => {
    switch (action.kind) {
      case 'say':
        return [{ speak: action.text }];
      case 'gather':
        return [{ listen: `${base}/gather?${query}&prompt=${action.promptId ?? 'p'}`, prompt: action.prompt }];
      case 'redirect':
        return [{ fetch: `${base}/reply?${query}&reply=${action.replyId ?? 'r'}` }];
      case 'dial':
        return [{ bridge: action.number }];
      case 'stream':
        return [{ media: callStreamUrl(context.publicUrl, context.connectionId, context.callId, action.nonce ?? '', PARROT) }];
      case 'hangup':
        return [{ goodbye: true }];
      default:
        return [];
    }
  });
}

function parseMedia(text: string): MediaEvent | null {
  let message: Record<string, string>;
  try {
    message = JSON.parse(text) as Record<string, string>;
  } catch {
    return null;
  }
  switch (message.t) {
    case 'hello':
      return { kind: 'start', streamId: message.stream ?? '', carrierCallId: message.call ?? '', callId: message.ours ?? null };
    case 'sound':
      return message.b64 ? { kind: 'audio', payload: message.b64 } : null;
    case 'played':
      return { kind: 'mark', name: message.name ?? '' };
    case 'bye':
      return { kind: 'stop' };
    default:
      return null;
  }
}

/** One call at Parrot: what its phone heard, and whether the gateway hung up. */
export interface ParrotCall {
  carrierCallId: string;
  to: string;
  heard: string[];
  hungUp: boolean;
  documents: Step[][];
}

/** Parrot's REST side and its phone: a placed call is answered and walked through its steps, saying `turns` when asked to listen. */
export class ParrotPhone implements CarrierAdapter {
  readonly kind = PARROT;
  readonly calls: ParrotCall[] = [];
  turns: string[] = [];
  private readonly walks: Promise<void>[] = [];

  constructor(private readonly key: () => string) {}

  async placeCall(account: CarrierAccount, request: PlaceCallRequest): Promise<{ carrierCallId: string | null }> {
    const call: ParrotCall = { carrierCallId: `parrot-${randomUUID()}`, to: request.to, heard: [], hungUp: false, documents: [] };
    this.calls.push(call);
    this.walks.push(this.run(call, request.answerUrl, request.statusCallbackUrl));
    return { carrierCallId: call.carrierCallId };
  }

  async fetchCall() {
    return null;
  }

  async findCall() {
    return null;
  }

  async verifyAccount(): Promise<void> {}

  /** An inbound call: the gateway's `/inbound` is asked, then its steps are walked. */
  async ring(inboundUrl: string, statusUrl: string, caller: string, callee: string): Promise<ParrotCall> {
    const call: ParrotCall = { carrierCallId: `parrot-${randomUUID()}`, to: callee, heard: [], hungUp: false, documents: [] };
    this.calls.push(call);
    await this.walk(call, await this.post(inboundUrl, { call: call.carrierCallId, caller, callee, state: 'talking' }));
    await this.post(statusUrl, { call: call.carrierCallId, state: 'done', seconds: '7' });
    return call;
  }

  /** Every call's walk, to its end. */
  settled(): Promise<unknown> {
    return Promise.all(this.walks);
  }

  /** POSTs a signed form to the gateway; answers the steps of a JSON answer, else none. */
  async post(url: string, fields: Record<string, string>, key = this.key()): Promise<{ status: number; steps: Step[] }> {
    const body = new URLSearchParams(fields).toString();
    const res = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-parrot-signature': sign(key, url, body) },
      body,
    });
    const text = await res.text();
    return { status: res.status, steps: /json/.test(res.headers.get('content-type') ?? '') ? (JSON.parse(text) as { steps: Step[] }).steps : [] };
  }

  private async run(call: ParrotCall, answerUrl: string, statusUrl: string): Promise<void> {
    // Not in the placing request: as a carrier's callbacks come after its REST answer.
    await new Promise((resolve) => setImmediate(resolve));
    await this.post(statusUrl, { call: call.carrierCallId, state: 'ringing' });
    await this.walk(call, await this.post(answerUrl, { call: call.carrierCallId, state: 'talking', who: 'person' }));
    await this.post(statusUrl, { call: call.carrierCallId, state: 'done', seconds: '7' });
  }

  private async walk(call: ParrotCall, answer: { status: number; steps: Step[] }): Promise<void> {
    let next: Step[] = answer.steps;
    for (let hops = 0; hops < 20 && next.length > 0; hops++) {
      call.documents.push(next);
      const current = next;
      next = [];
      for (const step of current) {
        if ('speak' in step) call.heard.push(step.speak);
        else if ('goodbye' in step) {
          call.hungUp = true;
          return;
        } else if ('listen' in step) {
          if (step.prompt) call.heard.push(step.prompt);
          next = (await this.post(step.listen, { call: call.carrierCallId, said: this.turns.shift() ?? '' })).steps;
          break;
        } else if ('fetch' in step) {
          next = (await this.post(step.fetch, { call: call.carrierCallId })).steps;
          break;
        }
      }
    }
  }
}

/** Parrot as a carrier module of its own kind, with its own accounts' formats. */
export function parrotModule(phone: ParrotPhone): CarrierModule {
  return {
    kind: PARROT,
    label: 'Parrot, a carrier of the test tree',
    credentials: parrotCredentials,
    adapter: phone,
    webhooks: {
      verify(request, account) {
        const given = Buffer.from(request.header('x-parrot-signature') ?? '', 'hex');
        const expected = Buffer.from(sign(account.authToken, request.url, request.rawBody ?? ''), 'hex');
        return given.length === expected.length && given.length > 0 && timingSafeEqual(given, expected);
      },
      status: statusOf,
      gathered: (fields) => ({ speech: fields.said || null, digits: fields.pressed || null }),
      inbound: (fields) => (fields.call ? { carrierCallId: fields.call, from: fields.caller || null, to: fields.callee ?? '' } : null),
      carrierCallIdOf: (fields) => fields.call || null,
      answeredBy: (fields) => (fields.who === 'person' ? 'human' : null),
      idempotencyKey: () => null,
    },
    callControl: { render: (actions, context) => ({ contentType: 'application/json', body: JSON.stringify({ steps: steps(actions, context) }) }) },
    media: {
      parse: parseMedia,
      writer: () => ({
        audio: (payload) => JSON.stringify({ t: 'sound', b64: payload }),
        clear: () => JSON.stringify({ t: 'flush' }),
        mark: (name) => JSON.stringify({ t: 'tellme', name }),
      }),
    },
  };
}
