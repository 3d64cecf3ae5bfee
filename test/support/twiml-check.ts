// What a TwiML document sent to the loopback Twilio may hold, as Twilio's TwiML reference describes it
// (twilio.com/docs/voice/twiml: <Say>, <Dial> and its nouns <Number>, <Sip> and <Conference>, <Connect> and its <Stream>, <Hangup>, <Redirect>, …;
// read 2026-12-02). Twilio publishes no machine-readable TwiML schema (twilio/twilio-oai describes the
// REST API only), so the attributes below are the reference's tables for the verbs the gateway writes.

const VERBS = new Set([
  'Say',
  'Play',
  'Gather',
  'Redirect',
  'Dial',
  'Hangup',
  'Pause',
  'Connect',
  'Start',
  'Stop',
  'Record',
  'Reject',
  'Refer',
  'Enqueue',
  'Leave',
  'Pay',
  'Prompt',
  'Sms',
]);
const ATTRIBUTES: Record<string, Set<string>> = {
  Say: new Set(['voice', 'language', 'loop']),
  // <Play> (twilio.com/docs/voice/twiml/play, read 2026-12-04): `loop`, and `digits`, DTMF tones with `w` a half-second pause.
  Play: new Set(['loop', 'digits']),
  Dial: new Set([
    'action',
    'answerOnBridge',
    'callerId',
    'callReason',
    'events',
    'hangupOnStar',
    'method',
    'record',
    'recordingStatusCallback',
    'recordingStatusCallbackMethod',
    'recordingStatusCallbackEvent',
    'recordingTrack',
    'referUrl',
    'referMethod',
    'ringTone',
    'sequential',
    'timeLimit',
    'timeout',
    'trim',
  ]),
  Number: new Set([
    'sendDigits',
    'url',
    'method',
    'byoc',
    'statusCallbackEvent',
    'statusCallback',
    'statusCallbackMethod',
    'machineDetection',
    'amdStatusCallback',
    'amdStatusCallbackMethod',
  ]),
  Sip: new Set([
    'username',
    'password',
    'url',
    'method',
    'statusCallbackEvent',
    'statusCallback',
    'statusCallbackMethod',
    'machineDetection',
    'amdStatusCallback',
    'amdStatusCallbackMethod',
  ]),
  Hangup: new Set(),
  Conference: new Set([
    'muted',
    'beep',
    'startConferenceOnEnter',
    'endConferenceOnExit',
    'waitUrl',
    'waitMethod',
    'maxParticipants',
    'record',
    'region',
    'trim',
    'coach',
    'statusCallbackEvent',
    'statusCallback',
    'statusCallbackMethod',
    'recordingStatusCallback',
    'recordingStatusCallbackMethod',
    'recordingStatusCallbackEvent',
    'eventCallbackUrl',
    'jitterBufferSize',
    'participantLabel',
  ]),
  Connect: new Set(['action', 'method']),
  Stream: new Set(['url', 'name', 'track', 'statusCallback', 'statusCallbackMethod']),
};
const E164 = /^\+[1-9]\d{1,14}$/;
const SIP_URI = /^sips?:[^\s@<>]+@[^\s<>]+$/;

const attributesOf = (text: string) => [...text.matchAll(/(\w+)="([^"]*)"/g)].map((match) => [match[1]!, match[2]!] as const);

/** Why Twilio would not run this document (null: it would): one `<Response>`, known verbs, and for <Say>, <Play>, <Dial>, <Number>, <Sip>, <Connect> and <Stream> only their attributes. */
export function twimlProblem(twiml: string): string | null {
  const document = twiml.replace(/^<\?xml[^>]*\?>\s*/, '').trim();
  if (document === '<Response/>') return null;
  const body = /^<Response>([\s\S]*)<\/Response>$/.exec(document)?.[1];
  if (body === undefined) return 'not one <Response> document';
  for (const verb of body.matchAll(/<(\w+)\b([^>]*?)(\/>|>([\s\S]*?)<\/\1>)/g)) {
    const [, name, attributes = '', , inner = ''] = verb;
    if (!VERBS.has(name!)) return `<${name}> is not a TwiML verb`;
    const known = ATTRIBUTES[name!];
    for (const [attribute, value] of attributesOf(attributes)) {
      if (known && !known.has(attribute)) return `<${name}> has no attribute ${attribute}`;
      if (attribute === 'method' && !['GET', 'POST'].includes(value)) return `<${name} method> is GET or POST, not ${value}`;
      if (attribute === 'action' && !/^https?:\/\//.test(value)) return `<${name} action> is not an absolute URL: ${value}`;
      if (name === 'Play' && attribute === 'digits' && !/^[0-9*#w]+$/.test(value)) return `<Play digits> holds DTMF keys and w, not ${value}`;
    }
    if (name === 'Connect') {
      // <Connect><Stream>: a bidirectional Media Stream to a wss:// URL, its custom <Parameter name value>s.
      for (const [, noun, nounAttributes = ''] of inner.matchAll(/<(\w+)\b([^>]*?)(?:\/>|>[\s\S]*?<\/\1>)/g)) {
        if (noun !== 'Stream') continue;
        for (const [attribute, value] of attributesOf(nounAttributes)) {
          if (!ATTRIBUTES.Stream!.has(attribute)) return `<Stream> has no attribute ${attribute}`;
          // Twilio takes wss:// only; the tests' PUBLIC_URL is plain http on loopback, so ws:// passes here.
          if (attribute === 'url' && !/^wss?:\/\//.test(value)) return `<Stream url> is not a WebSocket URL: ${value}`;
        }
      }
      continue;
    }
    if (name !== 'Dial') continue;
    const nouns = [...inner.matchAll(/<(\w+)\b([^>]*?)>([\s\S]*?)<\/\1>/g)];
    if (nouns.length === 0 && !E164.test(inner.trim())) return `<Dial>${inner}</Dial> dials no number`;
    for (const [, noun, nounAttributes = '', value = ''] of nouns) {
      if (noun !== 'Number' && noun !== 'Sip' && noun !== 'Client' && noun !== 'Conference' && noun !== 'Queue') return `<${noun}> is not a noun of <Dial>`;
      for (const [attribute] of attributesOf(nounAttributes)) if (ATTRIBUTES[noun]?.has(attribute) === false) return `<${noun}> has no attribute ${attribute}`;
      if (noun === 'Number' && !E164.test(value.trim())) return `<Number>${value}</Number> is not E.164`;
      if (noun === 'Sip' && !SIP_URI.test(value.trim())) return `<Sip>${value}</Sip> is not a sip: URI`;
      if (noun === 'Conference' && !value.trim()) return '<Conference> names no room';
      for (const [attribute, flag] of attributesOf(nounAttributes)) {
        if (['startConferenceOnEnter', 'endConferenceOnExit'].includes(attribute) && !['true', 'false'].includes(flag))
          return `<Conference ${attribute}> is true or false`;
        if (attribute === 'beep' && !['true', 'false', 'onEnter', 'onExit'].includes(flag)) return `<Conference beep> is true, false, onEnter or onExit`;
      }
    }
  }
  return null;
}
