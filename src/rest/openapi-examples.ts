import type { JsonSchema } from './json-schema.js';

/**
 * The ids the request examples name, one per kind of record, so that a reader of "Try it out" sees
 * which record a field wants (and the examples test swaps in the ids of records it created).
 */
export const EXAMPLE_IDS = {
  agent: '6c1f0a9e-2b3d-4e5f-8a7b-1c2d3e4f5a60',
  knowledgeBase: '7d2e1b0f-3c4e-4f60-9b8c-2d3e4f5a6b71',
  contact: '8e3f2c1a-4d5f-4a71-8c9d-3e4f5a6b7c82',
  audience: '9f4a3d2b-5e6a-4b82-9d0e-4f5a6b7c8d93',
  callFlow: 'a05b4e3c-6f7b-4c93-8e1f-5a6b7c8d9ea4',
  user: 'b16c5f4d-7a8c-4da4-9f20-6b7c8d9e0fb5',
  carrierConnection: 'c27d6a5e-8b9d-4eb5-8a31-7c8d9e0f1ac6',
  phoneNumber: 'd38e7b6f-9cae-4fc6-9b42-8d9e0f1a2bd7',
  event: 'e49f8c7a-adbf-40d7-8c53-9e0f1a2b3ce8',
  /** A streaming agent (a web call needs a live pipeline). */
  liveAgent: 'f5a09d8b-becf-41e8-9d64-af0a1b2c3df9',
} as const;

/** A date the examples put in the future (a key's expiry, a campaign's schedule): far enough to stay there. */
const FUTURE = '2036-01-05';

/** The flow the call-flow examples draw and the program examples name: every edge between nodes it has. */
const REMINDER_FLOW = {
  nodes: [
    { id: 'start', type: 'start' },
    { id: 'greet', type: 'say', label: 'Hello, this is Acme Dental reminding you of your appointment tomorrow at 10:00.' },
    { id: 'confirm', type: 'ask', label: 'Can you make it? Say yes or no.', agentId: EXAMPLE_IDS.agent },
    { id: 'voicemail', type: 'voicemail', label: 'Sorry we missed you; please call us back on 415 555 0100.' },
    { id: 'end', type: 'end' },
  ],
  edges: [
    { from: 'start', to: 'greet', condition: 'answered' },
    { from: 'start', to: 'voicemail', condition: 'voicemail' },
    { from: 'greet', to: 'confirm' },
    { from: 'confirm', to: 'end' },
    { from: 'voicemail', to: 'end' },
  ],
};

const AGENT = {
  name: 'Front desk agent',
  description: 'Answers questions about opening hours and bookings',
  instructions: 'You are the front desk of Acme Dental. Answer briefly and politely.',
  policy: 'Never quote prices over the phone.',
  // builtin/echo answers offline; modelSettings are generation settings (providerOptions: none for builtin).
  modelConfig: { model: 'builtin/echo', modelSettings: { temperature: 0.3, maxOutputTokens: 300 } },
  voiceConfig: { pipelineMode: 'sts', stsProvider: 'openai', voiceId: 'alloy', language: 'en-US' },
  memoryConfig: { enabled: true, lastMessages: 10, semanticRecall: false },
  metadata: { team: 'front-desk' },
  knowledgeBaseConfig: { knowledgeBaseId: EXAMPLE_IDS.knowledgeBase, topK: 3, similarityThreshold: 0.2 },
  resolutionCriteria: [{ label: 'Booked an appointment', description: 'The caller agreed to a date and time for a visit' }],
};

const PROGRAM = {
  name: 'Appointment reminders',
  kind: 'campaign',
  audienceId: EXAMPLE_IDS.audience,
  description: 'Calls next week’s patients to confirm their appointment',
  flowId: EXAMPLE_IDS.callFlow,
  scheduledStartAt: `${FUTURE}T14:00:00.000Z`,
  scheduledStopAt: `${FUTURE}T22:00:00.000Z`,
  callingWindow: { startTime: '09:00', endTime: '17:00', daysOfWeek: [1, 2, 3, 4, 5] },
  maxConcurrentCalls: 2,
  simulatedCaller: { utterances: ['Yes, that works for me.'] },
  retryPolicy: { maxAttempts: 2, retryDelayMinutes: 60 },
  autoPauseRules: [{ nodeId: 'voicemail', threshold: 50, resetOnResume: true }],
  carrier: 'simulator',
};

/**
 * A request body per input class that the server accepts as it stands (in an organization that has the
 * records EXAMPLE_IDS names): the rules across fields (one of flowId and agentId, a stop after the start,
 * edges between existing nodes, an expiry in the future) are beyond what a schema can make an example from.
 * Bodies not named here get exampleOf's.
 */
export const REQUEST_EXAMPLES: Record<string, JsonSchema> = {
  CreateApiKeyInput: { name: 'CRM integration', prefix: 'gw_live', expiresAt: `${FUTURE}T00:00:00.000Z` },
  UpdateApiKeyInput: { name: 'CRM integration (2036)', isActive: true, expiresAt: `${FUTURE}T00:00:00.000Z` },
  AddUserInput: { email: 'grace@example.com', name: 'Grace Hopper', role: 'member' },
  UpdateUserRoleInput: { role: 'admin' },
  CreateAgentInput: AGENT,
  UpdateAgentInput: {
    instructions: 'You are the front desk of Acme Dental. Answer briefly, politely, and offer to book a visit.',
    modelConfig: { model: 'builtin/extractive' },
    memoryConfig: { enabled: true, lastMessages: 20, semanticRecall: false },
  },
  CreateCallFlowInput: {
    name: 'Appointment reminder',
    description: 'Greets, asks for a confirmation, leaves a voicemail when nobody answers',
    ...REMINDER_FLOW,
  },
  UpdateCallFlowInput: { description: 'Greets and asks for a confirmation; a voicemail when nobody answers', ...REMINDER_FLOW },
  CreateProgramInput: PROGRAM,
  UpdateProgramInput: { maxConcurrentCalls: 4, retryPolicy: { maxAttempts: 3, retryDelayMinutes: 120 }, scheduledStopAt: `${FUTURE}T23:00:00.000Z` },
  CreateExecutionInput: { scheduledStartAt: `${FUTURE}T14:00:00.000Z` },
  PlaceCallInput: { to: '+14155550123', agentId: EXAMPLE_IDS.agent, variables: { customer: 'Ada' } },
  UpdateOrganizationInput: { name: 'Acme Dental', webCallOrigins: ['https://www.acme-dental.example'] },
  CreateWebCallInput: { agentId: EXAMPLE_IDS.liveAgent, variables: { clinic: 'Downtown' } },
  // A Twilio account (the default carrier); a Telnyx one sends carrier, its API key, publicKey and applicationId (docs/calls-and-carriers.md).
  CreateCarrierConnectionInput: {
    name: 'Front desk line',
    carrier: 'twilio',
    accountSid: 'AC0123456789abcdef0123456789abcdef',
    authToken: '5f4dcc3b5aa765d61d8327deb882cf99',
    callsPerSecond: 3,
  },
  UpdateCarrierConnectionInput: { name: 'Front desk line (rotated)', authToken: '5f4dcc3b5aa765d61d8327deb882cf99', callsPerSecond: 2 },
  CreatePhoneNumberInput: {
    number: '+14155550100',
    label: 'Front desk line',
    carrierConnectionId: EXAMPLE_IDS.carrierConnection,
    inboundAgentId: EXAMPLE_IDS.agent,
  },
  UpdatePhoneNumberInput: { label: 'Front desk line (after hours)', inboundAgentId: EXAMPLE_IDS.agent },
  ImportContactsInput: {
    contacts: [
      { name: 'Ada Lovelace', phone: '+14155550123', timeZone: 'America/New_York', attributes: { plan: 'gold', renewalDate: '2036-12-01' } },
      { name: 'Alan Turing', phone: '+14155550124', timeZone: 'Europe/London', attributes: { plan: 'silver' }, optedOut: false },
    ],
  },
  CreateContactInput: {
    name: 'Ada Lovelace',
    phone: '+14155550123',
    timeZone: 'America/New_York',
    attributes: { plan: 'gold', renewalDate: '2036-12-01' },
    optedOut: false,
  },
  UpdateContactInput: { name: 'Ada King', timeZone: 'Europe/London', attributes: { plan: 'platinum', renewalDate: '2037-12-01' } },
  CreateBusinessEntityInput: {
    contactId: EXAMPLE_IDS.contact,
    type: 'appointment',
    name: 'Check-up',
    attributes: { appointmentDate: '2036-01-12', dentist: 'Dr. Smith' },
  },
  UpdateBusinessEntityInput: { name: 'Check-up and cleaning', attributes: { appointmentDate: '2036-01-19', dentist: 'Dr. Smith' } },
  CreateAudienceInput: {
    name: 'Gold in Europe',
    description: 'Every gold customer in a European time zone',
    filter: {
      all: [
        { field: 'attributes.tier', op: 'eq', value: 'gold' },
        { field: 'timeZone', op: 'prefix', value: 'Europe/' },
      ],
    },
  },
  UpdateAudienceInput: { name: 'Gold customers', description: 'Every gold customer' },
  SegmentPreviewInput: {
    filter: {
      all: [
        { field: 'attributes.tier', op: 'eq', value: 'gold' },
        { field: 'timeZone', op: 'prefix', value: 'Europe/' },
      ],
    },
  },
  AudienceMembersInput: { contactIds: [EXAMPLE_IDS.contact] },
  AddTeamMemberInput: { userId: EXAMPLE_IDS.user, role: 'member' },
  // A host that resolves to a public address: a webhook's host is looked up when the endpoint is saved.
  CreateWebhookEndpointInput: {
    url: 'https://example.com/webhooks/gateway',
    eventTypes: ['call.ended', 'execution.completed'],
    description: 'The CRM’s call log',
    enabled: true,
  },
  UpdateWebhookEndpointInput: { eventTypes: ['call.ended'], description: 'The CRM’s call log (calls only)' },
  CreateWebhookDeliveryInput: { eventId: EXAMPLE_IDS.event },
  CreateToolInput: {
    name: 'lookup_order',
    description: 'Look up an order by its id: its status and delivery date',
    parameters: {
      type: 'object',
      properties: { orderId: { type: 'string', description: 'The order id the caller reads out, e.g. A1234' } },
      required: ['orderId'],
    },
    url: 'https://example.com/tools/orders',
    method: 'POST',
    headers: [{ name: 'Authorization', value: 'Bearer shop-api-key' }],
    timeoutMs: 5000,
  },
  UpdateToolInput: { description: 'Look up an order by its id: its status, delivery date and carrier', timeoutMs: 8000 },
  CreateMcpServerInput: { name: 'Shop', url: 'https://example.com/mcp', auth: { name: 'Authorization', value: 'Bearer shop-mcp-key' } },
  UpdateMcpServerInput: { name: 'Shop (orders)' },
};
