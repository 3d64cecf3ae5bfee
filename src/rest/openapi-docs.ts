import { getMetadataStorage } from 'type-graphql';
import type { RouteDefinition } from './routes.js';
import type { JsonSchema } from './json-schema.js';

/** The document's tags, one per part of the API, each with what it holds. */
export const TAG_DESCRIPTIONS: Record<string, string> = {
  Authentication: 'API keys (created, listed, changed, deleted by their user) and the exchange of a key for a short-lived bearer token',
  Users: 'The caller and the users of the organization, with their roles',
  Agents: 'AI agents (model, voice, memory, knowledge base, hidden policy), their tests and their conversations',
  'Knowledge Bases': 'Knowledge bases and their documents, cut into passages an agent retrieves',
  Audiences: 'Named sets of contacts a program calls',
  Contacts: 'The people a program calls, with their phone number, time zone and attributes',
  'Do not call':
    'The organization’s do-not-call list: numbers no dial ever calls (checked by number when each call is placed), added by hand, by CSV import or by the person on a call',
  Entities: 'Business records of a contact (orders, appointments, ...) whose dates can trigger live programs',
  Organization: 'The caller’s organization, its credit balance and the credit ledger',
  Teams: 'Teams of users',
  'Call flows': 'The steps a call follows (say, ask, transfer, voicemail, end)',
  Programs: 'Calling programs (campaign or live) over an audience and a call flow, and a live program’s triggers',
  Telephony: 'Carrier connections (an account at Twilio, its auth token write-only) and the phone numbers programs call from',
  Executions: 'Runs of a campaign program over its contacts, and their state machine (start, pause, resume, stop, cancel)',
  Calls: 'Every call attempt as a record (read only: the runner and the carrier write them), and an execution’s results as CSV',
  Events:
    'Every change worth telling (executions, calls, conversations, agents, triggers, documents), written in the same transaction as the change; kept EVENTS_RETENTION_DAYS days',
  Tools:
    'HTTP tools (one signed JSON request to the business per call, header values write-only, secret shown once) and MCP servers (Streamable HTTP, their tools listed) that agents may call',
  Webhooks:
    'Endpoints the organization’s events are POSTed to, signed per Standard Webhooks (secret shown once), their deliveries with every attempt, re-sends and test events',
};

/** Nouns of path segments and id parameters that are not their own plural. */
const NOUNS: Record<string, string> = {
  kb: 'knowledge base',
  doc: 'document',
  audience: 'audience',
  entities: 'business record',
  'api-keys': 'API key',
  'knowledge-bases': 'knowledge base',
  'call-flows': 'call flow',
  'carrier-connections': 'carrier connection',
  'phone-numbers': 'phone number',
  'webhook-endpoints': 'webhook endpoint',
};

function noun(segment: string): string {
  return NOUNS[segment] ?? segment.replace(/-/g, ' ').replace(/ies$/, 'y').replace(/s$/, '');
}

/** `{id}` takes the noun of the segment before it; `{agentId}` its own name. */
export function pathParameterDescription(path: string, name: string): string {
  // A do-not-call entry is named by its id or by the number itself.
  if (path.startsWith('/do-not-call/'))
    return 'The entry’s id (a UUID) or its E.164 number such as +14155550100 (the + as it is or as %2B); one not on the caller’s list answers 404';
  const segments = path.split('/');
  const index = segments.indexOf(`{${name}}`);
  const owner =
    name === 'id'
      ? noun(segments[index - 1] ?? '')
      : noun(
          name
            .replace(/Id$/, '')
            .replace(/([a-z])([A-Z])/g, '$1-$2')
            .toLowerCase(),
        );
  return `The ${owner}’s id (a UUID); one of another organization answers 404 like an unknown one`;
}

/** Field descriptions of a class (and of the classes it extends) from its type-graphql decorators. */
export function classFieldDescriptions(target: Function | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  const chain: Function[] = [];
  for (let current = target; current && current !== Function.prototype; current = Object.getPrototypeOf(current)) chain.unshift(current);
  for (const type of chain) {
    for (const field of getMetadataStorage().fields) {
      if (field.target === type && field.description) out[field.name] = field.description;
    }
  }
  return out;
}

/** What every operation shares, said once: who may call it and what its errors mean. */
export function operationDescription(route: RouteDefinition, isList: boolean): string {
  const parts = [route.description ?? `${route.summary}.`];
  if (route.method === 'get') parts.push('Any role of the organization may call it.');
  else if (!route.path.startsWith('/auth/'))
    parts.push('A role without the permission (see [Roles and permissions](/docs/guides/security#roles-and-permissions)) gets 403 and nothing changes.');
  if (isList) parts.push('Paged: `page` (from 1) and `limit` (1 to 100, default 20); answers `{data, meta}`.');
  if (route.path.includes('{')) parts.push('An id of another organization answers 404, exactly like an unknown id.');
  if (route.idempotent) parts.push('Send an `Idempotency-Key` to make a retry safe: the same key and body replay the first answer.');
  return parts.join(' ');
}

const STRINGS: Record<string, string> = {
  name: 'Front desk agent',
  description: 'Answers questions about opening hours and bookings',
  instructions: 'You are the front desk of Acme Dental. Answer briefly and politely.',
  policy: 'Never quote prices over the phone.',
  model: 'builtin/echo',
  message: 'What are your opening hours?',
  response: 'We are open Monday to Friday, 9:00 to 17:00.',
  title: 'Opening hours question',
  email: 'ada@example.com',
  phone: '+14155550123',
  timeZone: 'America/New_York',
  content: 'Acme Dental is open Monday to Friday, 9:00 to 17:00.',
  label: 'Booked an appointment',
  voiceId: 'alloy',
  sttModel: 'nova-3',
  ttsModel: 'eleven_flash_v2_5',
  language: 'en-US',
  secret: 'gw_live_3kT9qLm2Xv8RbN4cYp7ZwA1sDf6GhJ0e',
  accessToken: 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ1c2VyIn0.c2lnbmF0dXJl',
  tokenType: 'Bearer',
  type: 'order',
  field: 'name',
  detail: 'name must be shorter than or equal to 128 characters',
  explanation: 'The caller agreed to a time on Tuesday.',
  nodeId: 'ask-time',
  dateAttribute: 'renewalDate',
  startTime: '09:00',
  endTime: '17:00',
  contentType: 'text/plain',
  requestId: '3f1c9a52-7d0e-4a8b-9c61-2b5e8f4d7a10',
  prefix: 'gw_live',
  timeOfDay: '09:00',
  contactPhone: '+14155550123',
  contactName: 'Ada Lovelace',
  attributeValue: '2026-12-01',
  accountSid: 'AC0123456789abcdef0123456789abcdef',
  authToken: '5f4dcc3b5aa765d61d8327deb882cf99',
  authTokenLast4: 'cf99',
  number: '+14155550100',
  url: 'https://crm.example.com/webhooks/gateway',
  eventTypes: 'call.ended',
  eventType: 'call.ended',
  secretHint: 'Qk8=',
  disabledReason: 'The endpoint answered 410 Gone at 2026-11-24T09:30:00.000Z',
  lastError: 'The endpoint answered 503',
  sentence: 'This call may be recorded. Press 2 or say no to refuse.',
  refuseOn: 'digit:2',
};

/** A webhook signing secret (Standard Webhooks: whsec_ + base64), where a type shows one. */
const WEBHOOK_SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw2Lh4bOYRUpI=';

const UUID = '0b6f3d2e-5a4c-4e8f-9d17-6c2a1b3e4f50';
const DATE = '2026-11-24T09:30:00.000Z';

/** A realistic value of a schema, built from its types, bounds and the property's name. */
export function exampleOf(schema: JsonSchema, components: Record<string, JsonSchema>, name = '', depth = 0): unknown {
  if (depth > 14) return undefined;
  if (typeof schema.$ref === 'string') return exampleOf(components[schema.$ref.split('/').pop()!] ?? {}, components, name, depth + 1);
  if (schema.example !== undefined) return schema.example;
  if (Array.isArray(schema.enum)) return schema.enum[0];
  if (Array.isArray(schema.allOf)) {
    // Every part describes the same object: the example has the properties of each.
    const parts = (schema.allOf as JsonSchema[]).map((part) => exampleOf(part, components, name, depth + 1));
    return Object.assign({}, ...parts.filter((part) => part && typeof part === 'object'));
  }
  if (Array.isArray(schema.anyOf)) {
    const branch = (schema.anyOf as JsonSchema[]).find((option) => option.type !== 'null');
    return branch ? exampleOf(branch, components, name, depth + 1) : null;
  }
  const type = Array.isArray(schema.type) ? (schema.type as string[]).find((option) => option !== 'null') : schema.type;
  if (type === 'object' || schema.properties) {
    const properties = (schema.properties ?? {}) as Record<string, JsonSchema>;
    if (Object.keys(properties).length === 0) return name === 'attributes' ? { plan: 'gold', renewalDate: '2026-12-01' } : { source: 'crm' };
    const out: Record<string, unknown> = {};
    for (const [key, property] of Object.entries(properties)) {
      const value = key === 'secret' && 'secretHint' in properties ? WEBHOOK_SECRET : exampleOf(property, components, key, depth + 1);
      if (value !== undefined) out[key] = value;
    }
    return out;
  }
  if (type === 'array') {
    const item = exampleOf((schema.items ?? {}) as JsonSchema, components, name, depth + 1);
    return item === undefined ? [] : [item];
  }
  if (type === 'integer' || type === 'number') {
    const minimum = typeof schema.minimum === 'number' ? schema.minimum : 0;
    const maximum = typeof schema.maximum === 'number' ? schema.maximum : Number.MAX_SAFE_INTEGER;
    const wanted =
      name === 'limit'
        ? 20
        : /statusCode$/i.test(name)
          ? 200
          : /latencyMs$/i.test(name)
            ? 142
            : name === 'similarityThreshold'
              ? 0.2
              : /page|version|topK|threshold|attempts/i.test(name)
                ? 1
                : 3;
    return Math.min(Math.max(wanted, minimum), maximum);
  }
  if (type === 'boolean') return !/^(optedOut|hasPreviousPage)$/.test(name);
  if (type === 'string') {
    if (schema.format === 'date-time' || /At$/.test(name)) return DATE;
    if (STRINGS[name] === undefined && (schema.format === 'uuid' || name === 'id' || /Ids?$/.test(name))) return UUID;
    const text = STRINGS[name] ?? `Example ${name || 'text'}`;
    const max = typeof schema.maxLength === 'number' ? schema.maxLength : text.length;
    return text.slice(0, max);
  }
  return undefined;
}

/** Properties of the hand-written response shapes (routes' objectOf, the trigger list), described by name. */
export const PROPERTY_DESCRIPTIONS: Record<string, string> = {
  data: 'The items of this page, in the list’s order',
  meta: 'Where this page sits in the list',
  message: 'What was done, in words',
  apiKeys: 'The caller’s API keys, without their secrets',
  messages: 'The conversation’s latest messages, oldest first (the whole list is paged at /messages)',
  imported: 'Contacts created or updated',
  id: 'The id (a UUID)',
  contactId: 'The id of the contact',
  contactPhone: 'The contact’s phone number (E.164)',
  contactName: 'The contact’s name; null when it has none',
  triggerAt: 'When the trigger fires (ISO 8601)',
  triggeredAt: 'When it fired (ISO 8601); null before',
  attributeValue: 'The date attribute’s value the trigger was computed from',
  status: 'The state it is in',
  createdAt: 'When it was created (ISO 8601)',
  role: 'The new role: owner, admin or member',
};

/** Fills in PROPERTY_DESCRIPTIONS where a property has none. */
export function describeProperties(value: unknown): void {
  if (Array.isArray(value)) value.forEach(describeProperties);
  else if (value && typeof value === 'object') {
    const record = value as Record<string, unknown>;
    if (record.properties && typeof record.properties === 'object') {
      for (const [name, property] of Object.entries(record.properties as Record<string, JsonSchema>)) {
        if (!property.description && PROPERTY_DESCRIPTIONS[name]) property.description = PROPERTY_DESCRIPTIONS[name];
      }
    }
    Object.values(record).forEach(describeProperties);
  }
}
