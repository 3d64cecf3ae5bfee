import twilio from 'twilio';

/**
 * Posts `params` to one of the gateway's Twilio routes as Twilio posts a webhook: form-encoded and
 * signed with `authToken` over the URL and the fields (`X-Twilio-Signature`); `null` sends it unsigned.
 * `headers` adds others (Twilio's `I-Twilio-Idempotency-Token`, say).
 */
export function postAsTwilio(url: string, params: Record<string, string>, authToken: string | null, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      ...(authToken === null ? {} : { 'x-twilio-signature': twilio.getExpectedTwilioSignature(authToken, url, params) }),
      ...headers,
    },
    body: new URLSearchParams(params).toString(),
  });
}
