/** Internal type. DO NOT USE DIRECTLY. */
type Exact<T extends { [key: string]: unknown }> = { [K in keyof T]: T[K] };
/** Internal type. DO NOT USE DIRECTLY. */
export type Incremental<T> = T | { [P in keyof T]?: P extends ' $fragmentName' | '__typename' ? T[P] : never };
import type { DocumentTypeDecoration } from '@graphql-typed-document-node/core';
/** A number to add to the do-not-call list */
export type AddDoNotCallInput = {
  /** Why, 1 to 255 characters */
  note?: string | null | undefined;
  /** E.164: + and 7 to 15 digits */
  phone: string;
};

/** A user to add to the caller’s organization */
export type AddUserInput = {
  /** An email address, unique in the organization (compared in lower case) */
  email: string;
  /** 1 to 255 characters; the part of the email before @ when absent */
  name?: string | null | undefined;
  /** The new user’s role: owner, admin or member */
  role: UserRole;
};

/** Tools of one of the organization’s MCP servers the agent may call, by the names the server lists */
export type AgentMcpToolsInput = {
  /** 1 to 32 names the server lists */
  names: Array<string>;
  /** The id of the server */
  serverId: string | number;
};

/** Where an agent is in its life: draft → active by activate; archived when deleted */
export type AgentStatus =
  /** Activated; activating again is CONFLICT */
  | 'active'
  /** Deleted (the row is kept, with deletedAt); left out of default lists */
  | 'archived'
  /** Created, not yet activated */
  | 'draft';

/** A variable the agent’s templates use */
export type AgentVariableInput = {
  /** At most 1000 characters */
  default?: string | null | undefined;
  /** At most 500 characters */
  description?: string | null | undefined;
  /** A letter, then letters, digits or underscores (at most 64); not contact, program, call, agent, organization, now or variables */
  name: string;
};

/** What the agent’s model fills when one of its calls ends: a summary, fields by a JSON Schema, or both */
export type AnalysisPlanInput = {
  /** A JSON Schema (draft-07) of the fields to extract: top-level type object with 1 to 50 properties, at most 16 KB and nested at most 5 levels deep; no $ref, $async or $schema; minItems and maxItems at most 100, minLength and maxLength at most 2000; patterns that RE2 can run (no lookarounds or backreferences) */
  structuredData?: Record<string, unknown> | null | undefined;
  /** Whether a short summary of the call is written; default true */
  summary?: boolean | null | undefined;
};

/** Where the analysis of an ended call is */
export type AnalysisStatus =
  /** The summary and the fields are filled and valid against the schema */
  | 'completed'
  /** The model could not fill the plan (its answer was outside the schema twice, or it was unavailable); error says why */
  | 'failed'
  /** The conversation ended; the agent’s model has not filled the plan yet */
  | 'pending';

/** Whether an audience lists its members or is a filter over the contacts (a segment) */
export type AudienceKind =
  /** Its members are the contacts its filter matches */
  | 'dynamic'
  /** Its members are the contacts added to it */
  | 'static';

/** Who started the call */
export type CallDirection =
  /** Placed by a caller to one of the organization’s numbers */
  | 'inbound'
  /** Placed by the gateway (a program’s execution) */
  | 'outbound';

/** Where a call is at the carrier: queued → ringing → in_progress → one final status */
export type CallStatus =
  /** The callee was busy (final) */
  | 'busy'
  /** Canceled before it was answered (final) */
  | 'canceled'
  /** Answered and ended (final) */
  | 'completed'
  /** The carrier could not place the call, or it was never confirmed (final) */
  | 'failed'
  /** Answered (by a person or a machine) and live */
  | 'in_progress'
  /** Nobody answered (final) */
  | 'no_answer'
  /** Created; the carrier has not reported it ringing yet */
  | 'queued'
  /** The callee’s phone is ringing */
  | 'ringing';

/** A carrier a connection is made to: one of the gateway’s carrier modules */
export type CarrierKind =
  /** Telnyx Programmable Voice, through TeXML */
  | 'telnyx'
  /** Twilio Programmable Voice */
  | 'twilio';

/** Which column says that a row is a contact already there */
export type ContactImportKey =
  /** The externalId column: the organization’s own id (a CRM’s) */
  | 'externalId'
  /** The phone number (E.164) */
  | 'phone';

/** What an import does with a row whose key (phone or externalId) a contact already has */
export type ContactImportMode =
  /** All or nothing: any refused row (an existing contact among them) ends the import failed with nothing kept */
  | 'create'
  /** Leaves that contact as it is and counts the row skipped */
  | 'skip'
  /** Updates that contact with the row’s non-empty cells (name, time zone, attributes merged; the phone when keyed by externalId) */
  | 'upsert';

/** Where a CSV import is */
export type ContactImportStatus =
  /** Created; its CSV is to be sent to uploadUrl */
  | 'awaiting_file'
  /** Cancelled by a user; resume continues it from rowsRead */
  | 'cancelled'
  /** A create import cancelled: the worker deletes the contacts it wrote, a chunk at a time (imported counts down); then cancelled */
  | 'cancelling'
  /** Every row was read: written, skipped or refused */
  | 'completed'
  /** Ended early (a bad header, a file that does not parse, or a create import with refused rows): see error */
  | 'failed'
  /** Its file is kept; it waits for the organization’s import before it, or for a worker */
  | 'queued'
  /** Its rows are being written */
  | 'running';

/** A new agent; it starts as a draft at version 1 */
export type CreateAgentInput = {
  /** What the agent’s model fills when one of its calls ends; null for nothing */
  analysisPlan?: AnalysisPlanInput | null | undefined;
  /** At most 2000 characters */
  description?: string | null | undefined;
  /** What the agent says first on a call, a template of 1 to 1000 characters; null: the default greeting (docs/agents-and-knowledge.md#a-first-message) */
  firstMessage?: string | null | undefined;
  /** Default agent_speaks_first */
  firstMessageMode?: FirstMessageMode | null | undefined;
  /** The system prompt, 1 to 10000 characters */
  instructions: string;
  /** The knowledge base the agent retrieves passages from, and how many */
  knowledgeBaseConfig?: KnowledgeBaseConfigInput | null | undefined;
  /** Tools of the organization’s MCP servers the agent may call, by server and name */
  mcpTools?: Array<AgentMcpToolsInput> | null | undefined;
  /** Whether and how far the agent remembers earlier messages */
  memoryConfig?: MemoryConfigInput | null | undefined;
  /** Free-form */
  metadata?: Record<string, unknown> | null | undefined;
  /** The language model the agent answers with */
  modelConfig: ModelConfigInput;
  /** 1 to 128 characters */
  name: string;
  /** Business rules given to the model and never shown; at most 10000 characters */
  policy?: string | null | undefined;
  /** At most 5 */
  resolutionCriteria?: Array<ResolutionCriterionInput> | null | undefined;
  /** The organization’s HTTP tools the agent may call (GET /api/tools); at most 32 */
  toolIds?: Array<string | number> | null | undefined;
  /** Whom the agent may hand a call to (its transfer_call tool); at most 10 */
  transferDestinations?: Array<TransferDestinationInput> | null | undefined;
  /** The variables the templates use, with their defaults; at most 50 */
  variables?: Array<AgentVariableInput> | null | undefined;
  /** How the agent speaks on calls */
  voiceConfig?: VoiceConfigInput | null | undefined;
};

/** A new API key */
export type CreateApiKeyInput = {
  /** When the key stops working; never when absent */
  expiresAt?: string | null | undefined;
  /** 1 to 255 characters */
  name: string;
  /** Start of the key value: 1 to 20 letters, digits, "_" or "-" */
  prefix: string;
};

/** A new audience: static (members added to it) or, with a filter, dynamic (a segment) */
export type CreateAudienceInput = {
  /** At most 2000 characters */
  description?: string | null | undefined;
  /** Makes the audience dynamic. A segment's filter: {field, op, value}, or {all: [...]}, {any: [...]}, {not: ...} of them; ops eq, in, prefix, exists, before, after; fields name, phone, timeZone, createdAt, optedOut, attributes.<key>. At most 20 conditions, 4 levels, 4096 bytes (docs/campaigns.md) */
  filter?: Record<string, unknown> | null | undefined;
  /** 1 to 255 characters */
  name: string;
};

/** A new carrier connection; its credentials are checked with the carrier before anything is stored */
export type CreateCarrierConnectionInput = {
  /** Twilio: AC followed by 32 hexadecimal digits. Telnyx: the account id (TeXML’s AccountSid), a UUID */
  accountSid: string;
  /** Telnyx only (required there): the id of the TeXML Application the calls are placed with (InitiateTexmlCall’s ApplicationSid); its numbers’ calls come in through it */
  applicationId?: string | null | undefined;
  /** Write-only: stored encrypted, never shown again (only its last 4 characters). Twilio: the auth token, 32 hexadecimal digits. Telnyx: an API key (KEY…) */
  authToken: string;
  /** New calls per second this account may start, across all replicas: 1 to 100; default 1 (Twilio’s default) */
  callsPerSecond?: number | null | undefined;
  /** The kind of one of the gateway’s carriers; default twilio */
  carrier?: CarrierKind | null | undefined;
  /** 1 to 255 characters */
  name: string;
  /** Telnyx only (required there): the account’s public key that signs its webhooks (Mission Control → Keys & Credentials → Public Key), 32 bytes in base64; shown back as given */
  publicKey?: string | null | undefined;
  /** Write-only: the SharedKey secret of a Twilio Webhooks Rule, for an account whose webhooks are signed with it (they carry X-Twilio-Webhooks-Signature-Settings); stored encrypted, only its last 4 characters shown. 16 to 256 characters */
  webhookKey?: string | null | undefined;
};

/** A CSV import of contacts; its file is sent to uploadUrl (or with POST /api/imports) */
export type CreateContactImportInput = {
  /** A static audience of the organization that the imported and updated contacts join */
  audienceId?: string | number | null | undefined;
  /** Which column says a contact is already there; default phone */
  key?: ContactImportKey | null | undefined;
  /** What a row whose key a contact has does; default upsert */
  mode?: ContactImportMode | null | undefined;
};

/** A new contact */
export type CreateContactInput = {
  /** Free-form attributes */
  attributes?: Record<string, unknown> | null | undefined;
  /** Full name, 1 to 255 characters */
  name?: string | null | undefined;
  /** Default false */
  optedOut?: boolean | null | undefined;
  /** E.164: + and 7 to 15 digits */
  phone: string;
  /** IANA time zone, for example Europe/Paris */
  timeZone?: string | null | undefined;
};

/** A new MCP server (Streamable HTTP); its tools are listed at once */
export type CreateMcpServerInput = {
  /** The header that authenticates the gateway (e.g. Authorization: Bearer …); its value is sealed and never shown again */
  auth?: ToolHeaderInput | null | undefined;
  /** 1 to 64 characters, unique in the organization */
  name: string;
  /** https URL (at most 2048 characters) the request goes to; it must not resolve to a private, loopback or link-local address (http and those only with TOOLS_ALLOW_PRIVATE=true) */
  url: string;
};

/** A number the organization owns at its carrier */
export type CreatePhoneNumberInput = {
  /** A carrier connection of the organization the number belongs to; without one the number is a caller ID for simulated calls only */
  carrierConnectionId?: string | number | null | undefined;
  /** Inbound calls to the number talk to this agent of the organization (at most one of inboundAgentId and inboundFlowId; null clears it) */
  inboundAgentId?: string | number | null | undefined;
  /** Inbound calls to the number walk this call flow of the organization (at most one of inboundAgentId and inboundFlowId; null clears it) */
  inboundFlowId?: string | number | null | undefined;
  /** At most 255 characters */
  label?: string | null | undefined;
  /** E.164, e.g. +14155550100; unique in the organization */
  number: string;
};

/** A new program; it starts as a draft */
export type CreateProgramInput = {
  /** An agent of the organization, for a program without a flow */
  agentId?: string | number | null | undefined;
  /** An audience of the organization */
  audienceId: string | number;
  /** At most 20 */
  autoPauseRules?: Array<ProgramAutoPauseRuleInput> | null | undefined;
  /** Any time when absent */
  callingWindow?: ProgramCallingWindowInput | null | undefined;
  /** Where the calls are placed: simulator (default on create), or a carrier’s kind (the organization’s connection there; activation checks it is ready); not web */
  carrier?: ProgramCarrier | null | undefined;
  /** At most 2000 characters */
  description?: string | null | undefined;
  /** A call flow of the organization; exactly one of flowId and agentId */
  flowId?: string | number | null | undefined;
  /** A phone number of the organization, the caller ID of the calls; required to activate a program on a real carrier (twilio, telnyx) */
  fromNumberId?: string | number | null | undefined;
  /** campaign (runs when an execution is started) or live (calls on a date attribute); default campaign */
  kind: ProgramKind;
  /** Required for live programs only */
  liveTrigger?: ProgramLiveTriggerInput | null | undefined;
  /** 1 to 100; default 1 */
  maxConcurrentCalls?: number | null | undefined;
  /** 1 to 255 characters */
  name: string;
  /** Record the answered calls (mono or dual), optionally after a consent sentence; null or absent on create: not recorded */
  recording?: ProgramRecordingInput | null | undefined;
  /** Default: one attempt */
  retryPolicy?: ProgramRetryPolicyInput | null | undefined;
  /** When executions may start at the earliest (ISO 8601, in the future); null for now */
  scheduledStartAt?: string | null | undefined;
  /** After scheduledStartAt */
  scheduledStopAt?: string | null | undefined;
  /** 1 to 500 characters: what the agent answers an automated call screener with on outbound calls (a template like firstMessage: {{organization.name}}, {{contact.name}}, variables); null: the default */
  screeningResponse?: string | null | undefined;
  /** What the simulated carrier’s caller says at ask nodes; default: a few seeded lines */
  simulatedCaller?: ProgramSimulatedCallerInput | null | undefined;
  /** When a machine answers (asynchronous detection, after its greeting): leave a message after the beep, or hang up; null: not set */
  voicemail?: ProgramVoicemailInput | null | undefined;
};

/** A new HTTP tool; its signing secret is in the answer, and only there */
export type CreateToolInput = {
  /** What the model is told the tool does: 1 to 1000 characters */
  description: string;
  /** At most 10; their values are sealed and never shown again */
  headers?: Array<ToolHeaderInput> | null | undefined;
  /** Default POST */
  method?: ToolMethod | null | undefined;
  /** 1 to 64 letters, digits, _ or -; unique in the organization; not end_call, reach_resolution, opt_out, transfer_call or send_digits */
  name: string;
  /** A JSON Schema of type object for the arguments: at most 5 levels, 50 properties, no $ref (docs/tools.md#parameters) */
  parameters: Record<string, unknown>;
  /** The deadline of the whole exchange in milliseconds: 100 to 30000, default 5000 */
  timeoutMs?: number | null | undefined;
  /** https URL (at most 2048 characters) the request goes to; it must not resolve to a private, loopback or link-local address (http and those only with TOOLS_ALLOW_PRIVATE=true) */
  url: string;
};

/** A web call to start: the agent a person will talk to from a browser tab */
export type CreateWebCallInput = {
  /** A streaming or speech-to-speech agent of the organization (draft or active) */
  agentId: string | number;
  /** Values of the agent’s variables for this call: at most 50, each a string, number or boolean of at most 1000 characters */
  variables?: Record<string, unknown> | null | undefined;
};

/** A new webhook endpoint; its signing secret is in the answer, and only there */
export type CreateWebhookEndpointInput = {
  /** At most 500 characters */
  description?: string | null | undefined;
  /** Default true */
  enabled?: boolean | null | undefined;
  /** The event types to deliver; empty or left out = every type. Known types: execution.created, execution.started, execution.paused, execution.resumed, execution.completed, execution.stopped, execution.cancelled, execution.progress, call.started, call.ended, call.analyzed, call.transferred, call.transfer_failed, conversation.message, conversation.ended, tool.called, agent.activated, agent.archived, trigger.fired, contact.opted_out, knowledge.document.ready, knowledge.document.failed, import.progress, import.completed, import.failed, import.cancelled */
  eventTypes?: Array<string> | null | undefined;
  /** https URL (at most 2048 characters) the deliveries are POSTed to; it must not resolve to a private, loopback, link-local or metadata address (http and those only with WEBHOOK_ALLOW_PRIVATE=true) */
  url: string;
};

/** Where a number on the do-not-call list came from */
export type DoNotCallSource =
  /** The person asked on a call not to be called again */
  | 'call'
  /** Added by a CSV import */
  | 'import'
  /** Added by a user, one number at a time */
  | 'manual';

/** A move of an execution a user asks for; one the state machine forbids is CONFLICT */
export type ExecutionAction =
  /** scheduled → cancelled (final) */
  | 'cancel'
  /** running → paused */
  | 'pause'
  /** any paused state → running */
  | 'resume'
  /** scheduled → running */
  | 'start'
  /** running or paused → stopped (final) */
  | 'stop';

/** Where an execution is in its state machine; completed, stopped and cancelled are final */
export type ExecutionStatus =
  /** Cancelled before it started (final) */
  | 'cancelled'
  /** Every contact was called (final) */
  | 'completed'
  /** Paused by a user; resume continues it */
  | 'paused'
  /** Paused because the organization’s credit balance ran out; resume after credits are granted */
  | 'paused_no_credits'
  /** Paused because an auto-pause rule’s threshold was reached */
  | 'paused_threshold'
  /** Created; the campaign runner is copying its audience into its work queue (totalContacts grows), then it is scheduled. Only cancel moves it */
  | 'preparing'
  /** Calling its contacts */
  | 'running'
  /** Created, waiting for its start (start, or scheduledStartAt) */
  | 'scheduled'
  /** Stopped by a user; pending contacts are never dialed (final) */
  | 'stopped';

/** Who speaks first when a call is answered */
export type FirstMessageMode =
  /** The agent says its first message as soon as the call is answered (the default) */
  | 'agent_speaks_first'
  /** The agent says nothing until the caller has spoken */
  | 'wait_for_caller';

/** A CSV of numbers to add to the do-not-call list */
export type ImportDoNotCallInput = {
  /** CSV text, one number per line: a first line naming a `phone` (or `number`) column is a header, and a `note` column is kept; without a header the first column is the number and the second the note. At most 10000 rows and 1000000 characters */
  csv: string;
};

/** When the caller speaking over the agent cuts its reply */
export type InterruptionMode =
  /** Any recognized word cuts, back-channels included */
  | 'any'
  /** Nothing the caller says or presses cuts the reply; it is answered once the reply was heard */
  | 'never'
  /** At least minWords words not in the ignore list (a back-channel such as "mhm" does not cut); the default */
  | 'words';

/** When the caller speaking over the agent cuts its reply (streaming; sts on OpenAI and, for never, Google) */
export type InterruptionsInput = {
  /** Back-channels that never cut the reply (words or short phrases, at most 50 of 1 to 40 characters); unset: the default list of the agent's language */
  ignore?: Array<string> | null | undefined;
  /** The caller's speech, from their turn's first recognized word, before it may cut the reply (mode words), 0 to 5000 ms; default 0 */
  minSpeechMs?: number | null | undefined;
  /** Words not in the ignore list that cut the reply (mode words), 1 to 10; default 1 */
  minWords?: number | null | undefined;
  /** words (the default), any, or never */
  mode?: InterruptionMode | null | undefined;
};

/** The knowledge base an agent retrieves passages from */
export type KnowledgeBaseConfigInput = {
  /** A knowledge base of the same organization */
  knowledgeBaseId: string | number;
  /** Minimum similarity, 0 to 1; default 0 */
  similarityThreshold?: number | null | undefined;
  /** Passages to retrieve, 1 to 20; default 3 */
  topK?: number | null | undefined;
};

/** Where a live trigger reads its date attribute */
export type LiveTriggerSource =
  /** The contact’s own attributes */
  | 'contact'
  /** The attributes of the contact’s business records of `entityType` */
  | 'entity';

/** Whether an MCP server’s tools could be listed */
export type McpServerStatus =
  /** Not listed yet */
  | 'pending'
  /** Its tools were listed */
  | 'ready'
  /** The last listing failed (lastError): its tools cannot be called */
  | 'unavailable';

/** Whether and how far an agent remembers earlier messages */
export type MemoryConfigInput = {
  /** Whether the model sees earlier messages at all */
  enabled: boolean;
  /** 0 to 100 earlier messages the model sees; 10 when unset */
  lastMessages?: number | null | undefined;
  /** Whether earlier messages are recalled by meaning too */
  semanticRecall?: boolean | null | undefined;
};

/** Who wrote a message */
export type MessageRole =
  /** The agent’s model */
  | 'assistant'
  /** The caller */
  | 'user';

/** The language model of an agent */
export type ModelConfigInput = {
  /** <provider>/<model_name>, e.g. builtin/echo or openai/gpt-4o-mini */
  model: string;
  /** temperature, maxOutputTokens (maxTokens; at most MODEL_MAX_OUTPUT_TOKENS), topP, ... */
  modelSettings?: Record<string, unknown> | null | undefined;
  /** Per provider, allow-listed: openai {user, reasoningEffort, textVerbosity}, anthropic {sendReasoning}, openaiCompatible {user, reasoningEffort, textVerbosity} */
  providerOptions?: Record<string, unknown> | null | undefined;
};

/** How a voice agent turns speech into answers */
export type PipelineMode =
  /** Speech to text, the model, then text to speech, one turn at a time */
  | 'batch'
  /** The same steps, streamed as they go */
  | 'streaming'
  /** A speech-to-speech model of stsProvider */
  | 'sts';

/** Pauses an execution when threshold contacts reached nodeId */
export type ProgramAutoPauseRuleInput = {
  /** A node of the program’s flow */
  nodeId: string;
  /** A resume starts the count again */
  resetOnResume: boolean;
  /** At least 1 */
  threshold: number;
};

/** When calls may be placed, in each contact’s own time zone */
export type ProgramCallingWindowInput = {
  /** ISO weekdays, 1 = Monday … 7 = Sunday; at least one, no repeats */
  daysOfWeek: Array<number>;
  /** HH:MM, after startTime (exclusive); 24:00 is the end of the day */
  endTime: string;
  /** HH:MM, 24-hour clock */
  startTime: string;
};

/** Where a program’s calls are placed */
export type ProgramCarrier =
  /** The built-in simulated carrier: no account, seeded outcomes (DIALER_SEED, DIALER_SPEED_MS) */
  | 'simulator'
  /** Telnyx Programmable Voice, through TeXML: the organization’s connection there, with the program’s fromNumberId as caller ID */
  | 'telnyx'
  /** Twilio Programmable Voice: the organization’s connection there, with the program’s fromNumberId as caller ID */
  | 'twilio'
  /** A web call from a browser (a call’s carrier only: a program cannot use it) */
  | 'web';

/** How a program calls its contacts */
export type ProgramKind =
  /** Runs over its audience when an execution is started */
  | 'campaign'
  /** Calls each contact of its audience when a date attribute comes round (its liveTrigger) */
  | 'live';

/** Required for live programs, not allowed for campaigns */
export type ProgramLiveTriggerInput = {
  /** Name of the date attribute, 1 to 64 characters */
  attribute: string;
  /** Required for source "entity" */
  entityType?: string | null | undefined;
  /** -365 to 365 days relative to the date */
  offsetDays: number;
  /** "contact" or "entity" */
  source: LiveTriggerSource;
  /** HH:MM in the contact’s time zone */
  timeOfDay: string;
};

/** Record the program’s answered calls (off by default) */
export type ProgramRecordingInput = {
  /** mono (default) or dual */
  channels?: RecordingChannels | null | undefined;
  /** Without it, recording starts when the call is answered */
  consent?: RecordingConsentInput | null | undefined;
  /** true records the program’s answered calls; false turns recording off */
  enabled: boolean;
};

/** How failed calls are retried */
export type ProgramRetryPolicyInput = {
  /** 1 to 10 */
  maxAttempts: number;
  /** 0 to 10080 minutes (a week) */
  retryDelayMinutes: number;
};

/** What the simulated carrier’s caller says at the ask nodes of a simulated call */
export type ProgramSimulatedCallerInput = {
  /** 1 to 20 utterances of 1 to 500 characters, said in order at each ask node of a simulated call */
  utterances: Array<string>;
};

/** Where a program is in its life: draft → active by activate; archived when deleted */
export type ProgramStatus =
  /** Activated; executions can start (campaign) or triggers fire (live) */
  | 'active'
  /** Deleted; kept for its executions and the credit ledger */
  | 'archived'
  /** Created, not yet activated; no execution can start */
  | 'draft';

/** What the calls do when a machine answers; absent or null: the flow’s voicemail node, else a hang-up */
export type ProgramVoicemailInput = {
  /** leave (default) or hang_up */
  action?: VoicemailAction | null | undefined;
  /** 1 to 1000 characters, required with leave; a template like an agent’s firstMessage ({{contact.name}}, {{organization.name}}, variables) */
  message?: string | null | undefined;
};

/** How the parties are laid out in the recording */
export type RecordingChannels =
  /** The callee on the first channel, the gateway’s side on the second */
  | 'dual'
  /** Both parties mixed on one channel */
  | 'mono';

/** A consent sentence spoken first; silence or any other answer counts as consent */
export type RecordingConsentInput = {
  /** 1 to 5 of digit:<key> or said:<words>; default ["digit:2", "said:no"] */
  refuseOn?: Array<string> | null | undefined;
  /** 1 to 500 characters */
  sentence: string;
};

/** Why a recording’s audio was deleted */
export type RecordingDeletionReason =
  /** The carrier no longer had it when it was to be deleted */
  | 'carrier'
  /** It was older than the organization’s recordingRetentionDays */
  | 'retention'
  /** A user deleted it (DELETE /api/calls/{id}/recording, deleteCallRecording) */
  | 'user';

/** Where a call’s recording is */
export type RecordingStatus =
  /** The carrier heard nothing to keep (silence); there is no audio */
  | 'absent'
  /** The audio is ready to download (GET /api/calls/{id}/recording) unless deletedAt is set */
  | 'completed'
  /** The carrier could not make the recording; errorText has its words */
  | 'failed'
  /** The carrier is recording the call */
  | 'in_progress'
  /** The callee refused the consent sentence: the call was not recorded */
  | 'refused';

/** A rule an ended conversation is evaluated against */
export type ResolutionCriterionInput = {
  /** At most 1000 characters */
  description: string;
  /** 1 to 100 characters */
  label: string;
};

/** The speech-to-speech provider of an sts voice pipeline */
export type StsProvider =
  /** Google’s live speech model */
  | 'google'
  /** OpenAI’s realtime speech model */
  | 'openai';

/** The speech recognizer of a streaming voice pipeline */
export type SttProvider =
  /** The offline pair: only the simulator’s calls (it is not speech) */
  | 'builtin'
  /** Deepgram live transcription (DEEPGRAM_API_KEY) */
  | 'deepgram'
  /** OpenAI’s streaming transcription (OPENAI_API_KEY) */
  | 'openai';

/** How a tool call ended */
export type ToolCallStatus =
  /** It was sent and failed: a timeout, a refused address, a non-2xx answer, an unreachable host, an error result */
  | 'failed'
  /** Nothing was sent: arguments outside the schema, the hidden policy in them, a tool no longer there */
  | 'rejected'
  /** The tool answered 2xx (an MCP tool: a result without isError) */
  | 'succeeded';

/** A header an HTTP tool (or an MCP server) sends; its value is sealed and never shown again */
export type ToolHeaderInput = {
  /** An HTTP header name (at most 64 characters); not one the gateway sets itself (content-type, host, webhook-*) */
  name: string;
  /** At most 2048 characters, no line breaks */
  value: string;
};

/** How an HTTP tool’s request is sent: its JSON body in every case */
export type ToolMethod =
  /** PATCH */
  | 'PATCH'
  /** POST (the default) */
  | 'POST'
  /** PUT */
  | 'PUT';

/** A person or desk the agent may hand the call to */
export type TransferDestinationInput = {
  /** warm: what the person hears first ({{variables}} filled in); at most 500 characters */
  briefing?: string | null | undefined;
  /** When to transfer there, told to the model; at most 500 characters */
  description?: string | null | undefined;
  /** cold (the default) or warm (the person is briefed while the caller holds) */
  mode?: string | null | undefined;
  /** 1 to 64 characters, unique among the agent’s destinations */
  name: string;
  /** An E.164 number (+14155550100) or a sip: URI (sip:desk@pbx.example.com), at most 256 characters */
  number: string;
};

/** The speech synthesizer of a streaming voice pipeline */
export type TtsProvider =
  /** The offline pair: only the simulator’s calls (it is not speech) */
  | 'builtin'
  /** ElevenLabs input-streaming synthesis (ELEVENLABS_API_KEY) */
  | 'elevenlabs'
  /** OpenAI’s speech synthesis (OPENAI_API_KEY) */
  | 'openai';

/** How the end of the caller’s turn is found (sts on OpenAI) */
export type TurnDetectionInput = {
  /** type semantic only: low, medium, high or auto (the default) */
  eagerness?: TurnEagerness | null | undefined;
  /** type silence only: the pause that ends the turn, 100 to 5000 ms; the provider's default when unset */
  silenceMs?: number | null | undefined;
  /** silence or semantic */
  type: TurnDetectionType;
};

/** How the end of the caller’s turn is found */
export type TurnDetectionType =
  /** The provider’s model judges whether the caller has finished (OpenAI semantic_vad; Deepgram Flux on /v2/listen in streaming); silence where a provider has none */
  | 'semantic'
  /** A pause of silenceMs (the provider’s voice activity detection); the default */
  | 'silence';

/** How soon a semantic turn detector answers */
export type TurnEagerness =
  /** The provider’s default (OpenAI: medium) */
  | 'auto'
  /** Answers soonest (OpenAI: up to 2 s) */
  | 'high'
  /** Waits longest for the caller to go on (OpenAI: up to 8 s) */
  | 'low'
  /** OpenAI: up to 4 s */
  | 'medium';

/** Changes to an agent; each update adds one to its version */
export type UpdateAgentInput = {
  /** What the agent’s model fills when one of its calls ends; null for nothing */
  analysisPlan?: AnalysisPlanInput | null | undefined;
  /** What the update agent input is for, in a sentence or two */
  description?: string | null | undefined;
  /** What the agent says first on a call, a template of 1 to 1000 characters; null: the default greeting (docs/agents-and-knowledge.md#a-first-message) */
  firstMessage?: string | null | undefined;
  /** Default agent_speaks_first */
  firstMessageMode?: FirstMessageMode | null | undefined;
  /** The system prompt, 1 to 10000 characters */
  instructions?: string | null | undefined;
  /** The knowledge base the agent retrieves passages from, and how many */
  knowledgeBaseConfig?: KnowledgeBaseConfigInput | null | undefined;
  /** Tools of the organization’s MCP servers the agent may call, by server and name */
  mcpTools?: Array<AgentMcpToolsInput> | null | undefined;
  /** Whether and how far the agent remembers earlier messages */
  memoryConfig?: MemoryConfigInput | null | undefined;
  /** Free-form */
  metadata?: Record<string, unknown> | null | undefined;
  /** The language model the agent answers with */
  modelConfig?: ModelConfigInput | null | undefined;
  /** The update agent input’s name */
  name?: string | null | undefined;
  /** Business rules given to the model and never shown; at most 10000 characters */
  policy?: string | null | undefined;
  /** At most 5 */
  resolutionCriteria?: Array<ResolutionCriterionInput> | null | undefined;
  /** The organization’s HTTP tools the agent may call (GET /api/tools); at most 32 */
  toolIds?: Array<string | number> | null | undefined;
  /** Whom the agent may hand a call to (its transfer_call tool); at most 10 */
  transferDestinations?: Array<TransferDestinationInput> | null | undefined;
  /** The variables the templates use, with their defaults; at most 50 */
  variables?: Array<AgentVariableInput> | null | undefined;
  /** How the agent speaks on calls */
  voiceConfig?: VoiceConfigInput | null | undefined;
};

/** Changes to an audience; fields left out keep their values */
export type UpdateAudienceInput = {
  /** null removes the description */
  description?: string | null | undefined;
  /** A dynamic audience's new filter (a static audience has none: 409). A segment's filter: {field, op, value}, or {all: [...]}, {any: [...]}, {not: ...} of them; ops eq, in, prefix, exists, before, after; fields name, phone, timeZone, createdAt, optedOut, attributes.<key>. At most 20 conditions, 4 levels, 4096 bytes (docs/campaigns.md) */
  filter?: Record<string, unknown> | null | undefined;
  /** The update audience input’s name */
  name?: string | null | undefined;
};

/** Changes to a carrier connection; a new authToken rotates the credentials (checked with the carrier first) */
export type UpdateCarrierConnectionInput = {
  /** Telnyx only (required there): the id of the TeXML Application the calls are placed with (InitiateTexmlCall’s ApplicationSid); its numbers’ calls come in through it */
  applicationId?: string | null | undefined;
  /** A new auth token (Twilio) or API key (Telnyx) for the same account (rotation); write-only, checked with the carrier before it replaces the old one */
  authToken?: string | null | undefined;
  /** New calls per second this account may start, across all replicas: 1 to 100; default 1 (Twilio’s default) */
  callsPerSecond?: number | null | undefined;
  /** 1 to 255 characters */
  name?: string | null | undefined;
  /** Telnyx only (required there): the account’s public key that signs its webhooks (Mission Control → Keys & Credentials → Public Key), 32 bytes in base64; shown back as given (a new one after the account’s key was rotated) */
  publicKey?: string | null | undefined;
  /** Write-only: the SharedKey secret of a Twilio Webhooks Rule, for an account whose webhooks are signed with it (they carry X-Twilio-Webhooks-Signature-Settings); stored encrypted, only its last 4 characters shown. 16 to 256 characters; null removes it (webhooks signed with the auth token again) */
  webhookKey?: string | null | undefined;
};

/** Changes to an MCP server; fields left out keep their values; a new URL or auth lists its tools again */
export type UpdateMcpServerInput = {
  /** null removes it */
  auth?: ToolHeaderInput | null | undefined;
  /** The update mcp server input’s name */
  name?: string | null | undefined;
  /** https URL (at most 2048 characters) the request goes to; it must not resolve to a private, loopback or link-local address (http and those only with TOOLS_ALLOW_PRIVATE=true) */
  url?: string | null | undefined;
};

/** Changes to an HTTP tool; fields left out keep their values. headers, when sent, replace them all */
export type UpdateToolInput = {
  /** What the update tool input is for, in a sentence or two */
  description?: string | null | undefined;
  /** Replaces every header; [] removes them */
  headers?: Array<ToolHeaderInput> | null | undefined;
  /** Default POST */
  method?: ToolMethod | null | undefined;
  /** The update tool input’s name */
  name?: string | null | undefined;
  /** A JSON Schema of type object for the arguments: at most 5 levels, 50 properties, no $ref (docs/tools.md#parameters) */
  parameters?: Record<string, unknown> | null | undefined;
  /** The deadline of the whole exchange in milliseconds: 100 to 30000, default 5000 */
  timeoutMs?: number | null | undefined;
  /** https URL (at most 2048 characters) the request goes to; it must not resolve to a private, loopback or link-local address (http and those only with TOOLS_ALLOW_PRIVATE=true) */
  url?: string | null | undefined;
};

/** owner: everything; admin: all but the organization and its users; member: reads and talks to agents */
export type UserRole =
  /** Everything but the organization and its users */
  | 'admin'
  /** Reads, talks to agents and manages its own API keys */
  | 'member'
  /** Everything, including renaming the organization and managing its users */
  | 'owner';

/** How an agent speaks on calls */
export type VoiceConfigInput = {
  /** When the caller speaking over the agent cuts its reply; unset: mode words, the language’s back-channels ignored */
  interruptions?: InterruptionsInput | null | undefined;
  /** The language the caller speaks, a BCP-47 tag (en, en-US, fr) or multi; null for en */
  language?: string | null | undefined;
  /** batch, streaming or sts */
  pipelineMode: PipelineMode;
  /** The speech-to-speech provider when pipelineMode is sts; null otherwise */
  stsProvider?: StsProvider | null | undefined;
  /** The recognizer’s model, 1 to 100 characters; null for its default (deepgram: nova-3, or Flux with turnDetection semantic; openai: gpt-live-transcribe); checked against the provider’s published list; a Deepgram Flux model (flux-general-en, flux-general-multi) opens /v2/listen */
  sttModel?: string | null | undefined;
  /** The recognizer when pipelineMode is streaming (deepgram when it was not set); null otherwise */
  sttProvider?: SttProvider | null | undefined;
  /** The synthesizer’s model, 1 to 100 characters; null for its default (elevenlabs: eleven_flash_v2_5, openai: gpt-4o-mini-tts); an OpenAI model is checked against OpenAI’s published list */
  ttsModel?: string | null | undefined;
  /** The synthesizer when pipelineMode is streaming (elevenlabs when it was not set); null otherwise */
  ttsProvider?: TtsProvider | null | undefined;
  /** How the end of the caller’s turn is found; unset: silence, the provider’s default */
  turnDetection?: TurnDetectionInput | null | undefined;
  /** The id of the voice */
  voiceId?: string | null | undefined;
};

/** What a call does when an answering machine’s greeting ends (the beep) */
export type VoicemailAction =
  /** The agent stops and the call hangs up, leaving nothing (outcome voicemail) */
  | 'hang_up'
  /** The agent stops; the message is spoken after the beep, then the call hangs up (outcome voicemail_left) */
  | 'leave';

/** Why an execution that is not final places no (more) calls now; null on the execution while nothing holds its pending contacts back */
export type WaitingReason =
  /** The program’s carrier cannot place calls: no connection for its caller ID, or the gateway has no PUBLIC_URL or no such carrier; fix the program or the connection */
  | 'carrier_not_configured'
  /** The carrier connection’s callsPerSecond is used up: the next call goes at nextCallAt */
  | 'carrier_pacing'
  /** The carrier did not take the last calls (down, 5xx, unreachable): they are tried again at nextCallAt */
  | 'carrier_unavailable'
  /** Every call slot (maxConcurrentCalls) holds a call: the next contact is dialed when one ends */
  | 'concurrency_limit'
  /** The organization has no credit left to pay the next call: the operator grants credits, then someone resumes it */
  | 'no_credits'
  /** The due contacts’ numbers are on a live call of this program (another execution’s, or a duplicate): dialed once it ends */
  | 'number_in_call'
  /** Outside every pending contact’s calling window (in the contact’s time zone): the next opens at nextCallAt */
  | 'outside_calling_window'
  /** Paused by a user: resume continues it */
  | 'paused'
  /** Paused by an auto-pause rule whose threshold was reached (status paused_threshold): resume continues it */
  | 'paused_by_rule'
  /** Every pending contact waits for its retry (retryPolicy.retryDelayMinutes): the first is due at nextCallAt */
  | 'retry_wait'
  /** Not started: it starts at its scheduledStartAt (nextCallAt), or when someone starts it */
  | 'scheduled';

/** Where a delivery stands */
export type WebhookDeliveryStatus =
  /** Every attempt failed (about 3 days of retries), the endpoint answered 410, or it was disabled */
  | 'failed'
  /** Not sent yet, or waiting for its next attempt */
  | 'pending'
  /** The endpoint answered 2xx */
  | 'succeeded';

export type AgentFormFragment = { id: string, name: string, description: string | null, status: AgentStatus, version: number, instructions: string, hasPolicy: boolean, firstMessage: string | null, firstMessageMode: FirstMessageMode, knowledgeBaseConfig: Record<string, unknown> | null, toolIds: Array<string>, createdAt: string, updatedAt: string, modelConfig: { model: string, modelSettings: Record<string, unknown> | null, providerOptions: Record<string, unknown> | null }, voiceConfig: { pipelineMode: PipelineMode, sttProvider: SttProvider | null, ttsProvider: TtsProvider | null, stsProvider: StsProvider | null, voiceId: string | null, language: string | null } | null, memoryConfig: { enabled: boolean, lastMessages: number } | null, variables: Array<{ name: string, default: string | null, description: string | null }>, mcpTools: Array<{ serverId: string, names: Array<string> }> };

export type AgentsQueryVariables = Exact<{
  search?: string | null | undefined;
  status?: AgentStatus | null | undefined;
  page: number;
}>;


export type AgentsQuery = { agents: { data: Array<{ id: string, name: string, description: string | null, status: AgentStatus, version: number, updatedAt: string, modelConfig: { model: string } }>, meta: { page: number, limit: number, total: number, totalPages: number, hasNextPage: boolean, hasPreviousPage: boolean } } };

export type AgentQueryVariables = Exact<{
  id: string | number;
}>;


export type AgentQuery = { agent: { id: string, name: string, description: string | null, status: AgentStatus, version: number, instructions: string, hasPolicy: boolean, firstMessage: string | null, firstMessageMode: FirstMessageMode, knowledgeBaseConfig: Record<string, unknown> | null, toolIds: Array<string>, createdAt: string, updatedAt: string, modelConfig: { model: string, modelSettings: Record<string, unknown> | null, providerOptions: Record<string, unknown> | null }, voiceConfig: { pipelineMode: PipelineMode, sttProvider: SttProvider | null, ttsProvider: TtsProvider | null, stsProvider: StsProvider | null, voiceId: string | null, language: string | null } | null, memoryConfig: { enabled: boolean, lastMessages: number } | null, variables: Array<{ name: string, default: string | null, description: string | null }>, mcpTools: Array<{ serverId: string, names: Array<string> }> } };

export type KnowledgeBaseChoicesQueryVariables = Exact<{ [key: string]: never; }>;


export type KnowledgeBaseChoicesQuery = { knowledgeBases: { data: Array<{ id: string, name: string }> } };

export type CreateAgentMutationVariables = Exact<{
  input: CreateAgentInput;
}>;


export type CreateAgentMutation = { createAgent: { id: string, name: string, description: string | null, status: AgentStatus, version: number, instructions: string, hasPolicy: boolean, firstMessage: string | null, firstMessageMode: FirstMessageMode, knowledgeBaseConfig: Record<string, unknown> | null, toolIds: Array<string>, createdAt: string, updatedAt: string, modelConfig: { model: string, modelSettings: Record<string, unknown> | null, providerOptions: Record<string, unknown> | null }, voiceConfig: { pipelineMode: PipelineMode, sttProvider: SttProvider | null, ttsProvider: TtsProvider | null, stsProvider: StsProvider | null, voiceId: string | null, language: string | null } | null, memoryConfig: { enabled: boolean, lastMessages: number } | null, variables: Array<{ name: string, default: string | null, description: string | null }>, mcpTools: Array<{ serverId: string, names: Array<string> }> } };

export type UpdateAgentMutationVariables = Exact<{
  id: string | number;
  input: UpdateAgentInput;
}>;


export type UpdateAgentMutation = { updateAgent: { id: string, name: string, description: string | null, status: AgentStatus, version: number, instructions: string, hasPolicy: boolean, firstMessage: string | null, firstMessageMode: FirstMessageMode, knowledgeBaseConfig: Record<string, unknown> | null, toolIds: Array<string>, createdAt: string, updatedAt: string, modelConfig: { model: string, modelSettings: Record<string, unknown> | null, providerOptions: Record<string, unknown> | null }, voiceConfig: { pipelineMode: PipelineMode, sttProvider: SttProvider | null, ttsProvider: TtsProvider | null, stsProvider: StsProvider | null, voiceId: string | null, language: string | null } | null, memoryConfig: { enabled: boolean, lastMessages: number } | null, variables: Array<{ name: string, default: string | null, description: string | null }>, mcpTools: Array<{ serverId: string, names: Array<string> }> } };

export type ActivateAgentMutationVariables = Exact<{
  id: string | number;
}>;


export type ActivateAgentMutation = { activateAgent: { id: string, name: string, description: string | null, status: AgentStatus, version: number, instructions: string, hasPolicy: boolean, firstMessage: string | null, firstMessageMode: FirstMessageMode, knowledgeBaseConfig: Record<string, unknown> | null, toolIds: Array<string>, createdAt: string, updatedAt: string, modelConfig: { model: string, modelSettings: Record<string, unknown> | null, providerOptions: Record<string, unknown> | null }, voiceConfig: { pipelineMode: PipelineMode, sttProvider: SttProvider | null, ttsProvider: TtsProvider | null, stsProvider: StsProvider | null, voiceId: string | null, language: string | null } | null, memoryConfig: { enabled: boolean, lastMessages: number } | null, variables: Array<{ name: string, default: string | null, description: string | null }>, mcpTools: Array<{ serverId: string, names: Array<string> }> } };

export type ArchiveAgentMutationVariables = Exact<{
  id: string | number;
}>;


export type ArchiveAgentMutation = { deleteAgent: { id: string, name: string, description: string | null, status: AgentStatus, version: number, instructions: string, hasPolicy: boolean, firstMessage: string | null, firstMessageMode: FirstMessageMode, knowledgeBaseConfig: Record<string, unknown> | null, toolIds: Array<string>, createdAt: string, updatedAt: string, modelConfig: { model: string, modelSettings: Record<string, unknown> | null, providerOptions: Record<string, unknown> | null }, voiceConfig: { pipelineMode: PipelineMode, sttProvider: SttProvider | null, ttsProvider: TtsProvider | null, stsProvider: StsProvider | null, voiceId: string | null, language: string | null } | null, memoryConfig: { enabled: boolean, lastMessages: number } | null, variables: Array<{ name: string, default: string | null, description: string | null }>, mcpTools: Array<{ serverId: string, names: Array<string> }> } };

export type TestAgentMutationVariables = Exact<{
  id: string | number;
  message: string;
}>;


export type TestAgentMutation = { testAgent: { response: string, toolCalls: Array<{ id: string, tool: string, status: ToolCallStatus, statusCode: number | null, durationMs: number, arguments: Record<string, unknown> | null, answer: string | null, error: string | null }>, usage: { inputTokens: number, outputTokens: number, totalTokens: number, model: string } } };

export type CreateWebCallMutationVariables = Exact<{
  input: CreateWebCallInput;
}>;


export type CreateWebCallMutation = { createWebCall: { url: string, expiresAt: string } };

export type ToolChoicesQueryVariables = Exact<{ [key: string]: never; }>;


export type ToolChoicesQuery = { tools: { data: Array<{ id: string, name: string, description: string, method: ToolMethod, url: string }> }, mcpServers: { data: Array<{ id: string, name: string, url: string, status: McpServerStatus }> } };

export type CallsQueryVariables = Exact<{
  status?: CallStatus | null | undefined;
  outcome?: string | null | undefined;
  programId?: string | number | null | undefined;
  executionId?: string | number | null | undefined;
  queuedAfter?: string | null | undefined;
  queuedBefore?: string | null | undefined;
  search?: string | null | undefined;
  page: number;
}>;


export type CallsQuery = { calls: { data: Array<{ id: string, direction: CallDirection, from: string | null, to: string, status: CallStatus, outcome: string | null, queuedAt: string, durationSeconds: number | null, program: { id: string, name: string } | null, contact: { id: string, name: string | null } | null }>, meta: { page: number, limit: number, total: number, totalPages: number, hasNextPage: boolean, hasPreviousPage: boolean } } };

export type ProgramFilterChoicesQueryVariables = Exact<{ [key: string]: never; }>;


export type ProgramFilterChoicesQuery = { programs: { data: Array<{ id: string, name: string }> } };

export type CallQueryVariables = Exact<{
  id: string | number;
}>;


export type CallQuery = { call: { id: string, direction: CallDirection, from: string | null, to: string, status: CallStatus, outcome: string | null, answeredBy: string | null, attempt: number, carrier: ProgramCarrier, queuedAt: string, answeredAt: string | null, endedAt: string | null, durationSeconds: number | null, errorText: string | null, creditsCharged: number, reachedNodeIds: Array<string>, transfer: { destinationName: string, destination: string, mode: string, transferredAt: string, dialStatus: string | null, dialDurationSeconds: number | null, dialEndedAt: string | null, returnedAt: string | null } | null, program: { id: string, name: string } | null, execution: { id: string, status: ExecutionStatus } | null, contact: { id: string, name: string | null, phone: string } | null, agent: { id: string, name: string } | null, conversation: { id: string, messages: { data: Array<{ id: string, role: MessageRole, content: string, createdAt: string, sequence: number }>, meta: { total: number } }, toolCalls: { data: Array<{ id: string, sequence: number, afterSequence: number, tool: string, status: ToolCallStatus, statusCode: number | null, durationMs: number, arguments: Record<string, unknown> | null, answer: string | null, error: string | null }>, meta: { total: number } } } | null, analysis: { status: AnalysisStatus, summary: string | null, data: Record<string, unknown> | null, error: string | null, model: string | null, analyzedAt: string | null } | null, recording: { status: RecordingStatus, durationSeconds: number | null, channels: RecordingChannels, deletedAt: string | null, deletionReason: RecordingDeletionReason | null, errorText: string | null } | null, turnLatency: { provider: string, p50Ms: number, maxMs: number, firstAudioMs: number | null, bargeIns: number | null, turns: Array<{ endOfSpeechAt: string | null, totalMs: number, recognizerMs: number | null, modelMs: number | null, synthesizerMs: number | null, gatewayMs: number, providerMs: number, waitMs: number | null }> } | null }, events: { data: Array<{ id: string, type: string, createdAt: string, payload: Record<string, unknown> }>, meta: { total: number } } };

export type ExecutionSummaryFragment = { id: string, status: ExecutionStatus, totalContacts: number, contactsPending: number, contactsInProgress: number, contactsCompleted: number, contactsFailed: number, creditsSpent: number, createdAt: string, actualStartAt: string | null, actualEndAt: string | null, waitingReason: WaitingReason | null, nextCallAt: string | null };

export type ExecutionLiveFragment = { contactsDoNotCall: number, scheduledStartAt: string | null, id: string, status: ExecutionStatus, totalContacts: number, contactsPending: number, contactsInProgress: number, contactsCompleted: number, contactsFailed: number, creditsSpent: number, createdAt: string, actualStartAt: string | null, actualEndAt: string | null, waitingReason: WaitingReason | null, nextCallAt: string | null, outcomes: { answered: number, voicemail: number, noAnswer: number, busy: number, failed: number, doNotCall: number, notCalled: number }, program: { id: string, name: string, maxConcurrentCalls: number } };

export type LiveCallFragment = { id: string, status: CallStatus, outcome: string | null, to: string, queuedAt: string, answeredAt: string | null, endedAt: string | null, durationSeconds: number | null, contact: { id: string, name: string | null } | null };

export type ProgramsQueryVariables = Exact<{
  search?: string | null | undefined;
  page: number;
}>;


export type ProgramsQuery = { programs: { data: Array<{ id: string, name: string, kind: ProgramKind, status: ProgramStatus, carrier: ProgramCarrier, updatedAt: string, audience: { id: string, name: string } | null, agent: { id: string, name: string } | null }>, meta: { page: number, limit: number, total: number, totalPages: number, hasNextPage: boolean, hasPreviousPage: boolean } } };

export type ProgramChoicesQueryVariables = Exact<{ [key: string]: never; }>;


export type ProgramChoicesQuery = { audiences: { data: Array<{ id: string, name: string, contactCount: number }> }, agents: { data: Array<{ id: string, name: string, status: AgentStatus }> }, phoneNumbers: { data: Array<{ id: string, number: string, label: string | null }> } };

export type ProgramQueryVariables = Exact<{
  id: string | number;
}>;


export type ProgramQuery = { program: { id: string, name: string, description: string | null, kind: ProgramKind, status: ProgramStatus, carrier: ProgramCarrier, maxConcurrentCalls: number, callingWindow: { startTime: string, endTime: string, daysOfWeek: Array<number> } | null, recording: { enabled: boolean, channels: RecordingChannels } | null, audience: { id: string, name: string, contactCount: number } | null, agent: { id: string, name: string } | null, flow: { id: string, name: string } | null, executions: Array<{ id: string, status: ExecutionStatus, totalContacts: number, contactsPending: number, contactsInProgress: number, contactsCompleted: number, contactsFailed: number, creditsSpent: number, createdAt: string, actualStartAt: string | null, actualEndAt: string | null, waitingReason: WaitingReason | null, nextCallAt: string | null }> } };

export type CreateProgramMutationVariables = Exact<{
  input: CreateProgramInput;
}>;


export type CreateProgramMutation = { createProgram: { id: string } };

export type ActivateProgramMutationVariables = Exact<{
  id: string | number;
}>;


export type ActivateProgramMutation = { activateProgram: { id: string, status: ProgramStatus } };

export type CreateExecutionMutationVariables = Exact<{
  programId: string | number;
}>;


export type CreateExecutionMutation = { createExecution: { id: string, status: ExecutionStatus } };

export type StartExecutionMutationVariables = Exact<{
  id: string | number;
}>;


export type StartExecutionMutation = { startExecution: { contactsDoNotCall: number, scheduledStartAt: string | null, id: string, status: ExecutionStatus, totalContacts: number, contactsPending: number, contactsInProgress: number, contactsCompleted: number, contactsFailed: number, creditsSpent: number, createdAt: string, actualStartAt: string | null, actualEndAt: string | null, waitingReason: WaitingReason | null, nextCallAt: string | null, outcomes: { answered: number, voicemail: number, noAnswer: number, busy: number, failed: number, doNotCall: number, notCalled: number }, program: { id: string, name: string, maxConcurrentCalls: number } } };

export type ControlExecutionMutationVariables = Exact<{
  id: string | number;
  action: ExecutionAction;
}>;


export type ControlExecutionMutation = { controlExecution: { contactsDoNotCall: number, scheduledStartAt: string | null, id: string, status: ExecutionStatus, totalContacts: number, contactsPending: number, contactsInProgress: number, contactsCompleted: number, contactsFailed: number, creditsSpent: number, createdAt: string, actualStartAt: string | null, actualEndAt: string | null, waitingReason: WaitingReason | null, nextCallAt: string | null, outcomes: { answered: number, voicemail: number, noAnswer: number, busy: number, failed: number, doNotCall: number, notCalled: number }, program: { id: string, name: string, maxConcurrentCalls: number } } };

export type ExecutionsUpdatedSubscriptionVariables = Exact<{
  programId: string | number;
}>;


export type ExecutionsUpdatedSubscription = { executionsUpdated: { id: string, status: ExecutionStatus, totalContacts: number, contactsPending: number, contactsInProgress: number, contactsCompleted: number, contactsFailed: number, creditsSpent: number, createdAt: string, actualStartAt: string | null, actualEndAt: string | null, waitingReason: WaitingReason | null, nextCallAt: string | null } };

export type ExecutionUpdatedSubscriptionVariables = Exact<{
  id: string | number;
}>;


export type ExecutionUpdatedSubscription = { executionUpdated: { contactsDoNotCall: number, scheduledStartAt: string | null, id: string, status: ExecutionStatus, totalContacts: number, contactsPending: number, contactsInProgress: number, contactsCompleted: number, contactsFailed: number, creditsSpent: number, createdAt: string, actualStartAt: string | null, actualEndAt: string | null, waitingReason: WaitingReason | null, nextCallAt: string | null, outcomes: { answered: number, voicemail: number, noAnswer: number, busy: number, failed: number, doNotCall: number, notCalled: number }, program: { id: string, name: string, maxConcurrentCalls: number } } };

export type ExecutionCallsQueryVariables = Exact<{
  id: string | number;
  page: number;
}>;


export type ExecutionCallsQuery = { execution: { id: string, calls: { data: Array<{ id: string, status: CallStatus, outcome: string | null, to: string, queuedAt: string, answeredAt: string | null, endedAt: string | null, durationSeconds: number | null, contact: { id: string, name: string | null } | null }>, meta: { page: number, limit: number, total: number, totalPages: number, hasNextPage: boolean, hasPreviousPage: boolean } } } };

export type CallUpdatedSubscriptionVariables = Exact<{
  executionId: string | number;
}>;


export type CallUpdatedSubscription = { callUpdated: { id: string, status: CallStatus, outcome: string | null, to: string, queuedAt: string, answeredAt: string | null, endedAt: string | null, durationSeconds: number | null, contact: { id: string, name: string | null } | null } };

export type ExecutionAttentionFragment = { id: string, status: ExecutionStatus, createdAt: string, contactsPending: number, waitingReason: WaitingReason | null, nextCallAt: string | null };

export type UnfinishedExecutionsQueryVariables = Exact<{ [key: string]: never; }>;


export type UnfinishedExecutionsQuery = { programs: { data: Array<{ id: string, name: string, running: Array<{ id: string, status: ExecutionStatus, createdAt: string, contactsPending: number, waitingReason: WaitingReason | null, nextCallAt: string | null }>, paused: Array<{ id: string, status: ExecutionStatus, createdAt: string, contactsPending: number, waitingReason: WaitingReason | null, nextCallAt: string | null }>, pausedNoCredits: Array<{ id: string, status: ExecutionStatus, createdAt: string, contactsPending: number, waitingReason: WaitingReason | null, nextCallAt: string | null }>, pausedThreshold: Array<{ id: string, status: ExecutionStatus, createdAt: string, contactsPending: number, waitingReason: WaitingReason | null, nextCallAt: string | null }> }> } };

export type ContactsQueryVariables = Exact<{
  search?: string | null | undefined;
  page: number;
}>;


export type ContactsQuery = { contacts: { data: Array<{ id: string, name: string | null, phone: string, timeZone: string | null, optedOut: boolean, createdAt: string }>, meta: { page: number, limit: number, total: number, totalPages: number, hasNextPage: boolean, hasPreviousPage: boolean } } };

export type CreateContactMutationVariables = Exact<{
  input: CreateContactInput;
}>;


export type CreateContactMutation = { createContact: { id: string } };

export type DeleteContactMutationVariables = Exact<{
  id: string | number;
}>;


export type DeleteContactMutation = { deleteContact: { id: string } };

export type AudiencesQueryVariables = Exact<{
  search?: string | null | undefined;
  page: number;
}>;


export type AudiencesQuery = { audiences: { data: Array<{ id: string, name: string, description: string | null, kind: AudienceKind, contactCount: number, createdAt: string }>, meta: { page: number, limit: number, total: number, totalPages: number, hasNextPage: boolean, hasPreviousPage: boolean } } };

export type CreateAudienceMutationVariables = Exact<{
  input: CreateAudienceInput;
}>;


export type CreateAudienceMutation = { createAudience: { id: string } };

export type AudienceQueryVariables = Exact<{
  id: string | number;
  page: number;
}>;


export type AudienceQuery = { audience: { id: string, name: string, description: string | null, contactCount: number, contacts: { data: Array<{ id: string, name: string | null, phone: string, optedOut: boolean }>, meta: { page: number, limit: number, total: number, totalPages: number, hasNextPage: boolean, hasPreviousPage: boolean } } } };

export type AddAudienceMembersMutationVariables = Exact<{
  audienceId: string | number;
  contactIds: Array<string | number> | string | number;
}>;


export type AddAudienceMembersMutation = { addAudienceMembers: { id: string, contactCount: number } };

export type RemoveAudienceMembersMutationVariables = Exact<{
  audienceId: string | number;
  contactIds: Array<string | number> | string | number;
}>;


export type RemoveAudienceMembersMutation = { removeAudienceMembers: { id: string, contactCount: number } };

export type DoNotCallQueryVariables = Exact<{
  search?: string | null | undefined;
  page: number;
}>;


export type DoNotCallQuery = { doNotCallEntries: { data: Array<{ id: string, phone: string, note: string | null, source: DoNotCallSource, createdAt: string }>, meta: { page: number, limit: number, total: number, totalPages: number, hasNextPage: boolean, hasPreviousPage: boolean } } };

export type AddDoNotCallMutationVariables = Exact<{
  input: AddDoNotCallInput;
}>;


export type AddDoNotCallMutation = { addDoNotCall: { id: string } };

export type RemoveDoNotCallMutationVariables = Exact<{
  id: string | number;
}>;


export type RemoveDoNotCallMutation = { removeDoNotCall: { id: string } };

export type ImportDoNotCallMutationVariables = Exact<{
  input: ImportDoNotCallInput;
}>;


export type ImportDoNotCallMutation = { importDoNotCall: { added: number, rejected: Array<{ line: number, reason: string }>, skipped: Array<{ line: number, phone: string, reason: string }> } };

export type ImportJobFieldsFragment = { id: string, status: ContactImportStatus, mode: ContactImportMode, key: ContactImportKey, audienceId: string | null, columns: Array<string> | null, rowsRead: number, imported: number, updated: number, skipped: number, refused: number, doNotCall: number, error: string | null, fileBytes: number, uploadUrl: string, refusedRowsUrl: string, createdAt: string, finishedAt: string | null };

export type CreateContactImportMutationVariables = Exact<{
  input?: CreateContactImportInput | null | undefined;
}>;


export type CreateContactImportMutation = { createContactImport: { id: string, status: ContactImportStatus, mode: ContactImportMode, key: ContactImportKey, audienceId: string | null, columns: Array<string> | null, rowsRead: number, imported: number, updated: number, skipped: number, refused: number, doNotCall: number, error: string | null, fileBytes: number, uploadUrl: string, refusedRowsUrl: string, createdAt: string, finishedAt: string | null } };

export type ContactImportQueryVariables = Exact<{
  id: string | number;
}>;


export type ContactImportQuery = { contactImport: { id: string, status: ContactImportStatus, mode: ContactImportMode, key: ContactImportKey, audienceId: string | null, columns: Array<string> | null, rowsRead: number, imported: number, updated: number, skipped: number, refused: number, doNotCall: number, error: string | null, fileBytes: number, uploadUrl: string, refusedRowsUrl: string, createdAt: string, finishedAt: string | null } };

export type StaticAudiencesQueryVariables = Exact<{ [key: string]: never; }>;


export type StaticAudiencesQuery = { audiences: { data: Array<{ id: string, name: string, kind: AudienceKind }> } };

export type LatestEventQueryVariables = Exact<{ [key: string]: never; }>;


export type LatestEventQuery = { events: { data: Array<{ id: string }> } };

export type ImportEventsSubscriptionVariables = Exact<{
  after?: string | number | null | undefined;
}>;


export type ImportEventsSubscription = { events: { id: string, type: string, payload: Record<string, unknown> } };

export type ContactImportsQueryVariables = Exact<{
  page: number;
}>;


export type ContactImportsQuery = { contactImports: { data: Array<{ id: string, status: ContactImportStatus, mode: ContactImportMode, key: ContactImportKey, audienceId: string | null, columns: Array<string> | null, rowsRead: number, imported: number, updated: number, skipped: number, refused: number, doNotCall: number, error: string | null, fileBytes: number, uploadUrl: string, refusedRowsUrl: string, createdAt: string, finishedAt: string | null }>, meta: { page: number, limit: number, total: number, totalPages: number, hasNextPage: boolean, hasPreviousPage: boolean } } };

export type CancelContactImportMutationVariables = Exact<{
  id: string | number;
}>;


export type CancelContactImportMutation = { cancelContactImport: { id: string, status: ContactImportStatus, mode: ContactImportMode, key: ContactImportKey, audienceId: string | null, columns: Array<string> | null, rowsRead: number, imported: number, updated: number, skipped: number, refused: number, doNotCall: number, error: string | null, fileBytes: number, uploadUrl: string, refusedRowsUrl: string, createdAt: string, finishedAt: string | null } };

export type ResumeContactImportMutationVariables = Exact<{
  id: string | number;
}>;


export type ResumeContactImportMutation = { resumeContactImport: { id: string, status: ContactImportStatus, mode: ContactImportMode, key: ContactImportKey, audienceId: string | null, columns: Array<string> | null, rowsRead: number, imported: number, updated: number, skipped: number, refused: number, doNotCall: number, error: string | null, fileBytes: number, uploadUrl: string, refusedRowsUrl: string, createdAt: string, finishedAt: string | null } };

export type SegmentsQueryVariables = Exact<{ [key: string]: never; }>;


export type SegmentsQuery = { audiences: { data: Array<{ id: string, name: string, description: string | null, kind: AudienceKind, filter: Record<string, unknown> | null, contactCount: number, updatedAt: string }>, meta: { page: number, limit: number, total: number, totalPages: number, hasNextPage: boolean, hasPreviousPage: boolean } } };

export type SegmentQueryVariables = Exact<{
  id: string | number;
}>;


export type SegmentQuery = { audience: { id: string, name: string, description: string | null, kind: AudienceKind, filter: Record<string, unknown> | null, contactCount: number, updatedAt: string, contacts: { data: Array<{ id: string, name: string | null, phone: string, optedOut: boolean }> } } };

export type CreateSegmentMutationVariables = Exact<{
  input: CreateAudienceInput;
}>;


export type CreateSegmentMutation = { createAudience: { id: string } };

export type UpdateSegmentMutationVariables = Exact<{
  id: string | number;
  input: UpdateAudienceInput;
}>;


export type UpdateSegmentMutation = { updateAudience: { id: string } };

export type DeleteSegmentMutationVariables = Exact<{
  id: string | number;
}>;


export type DeleteSegmentMutation = { deleteAudience: { id: string } };

export type SegmentPreviewQueryVariables = Exact<{
  filter: Record<string, unknown>;
}>;


export type SegmentPreviewQuery = { segmentPreview: { contactCount: number } };

export type MetaFragment = { page: number, limit: number, total: number, totalPages: number, hasNextPage: boolean, hasPreviousPage: boolean };

export type SessionQueryVariables = Exact<{ [key: string]: never; }>;


export type SessionQuery = { me: { id: string, email: string, name: string, role: UserRole, permissions: Array<string>, organization: { id: string, name: string } } };

export type CreditsQueryVariables = Exact<{ [key: string]: never; }>;


export type CreditsQuery = { organization: { id: string, name: string, creditBalance: number, creditsReserved: number } };

export type ApiKeysQueryVariables = Exact<{ [key: string]: never; }>;


export type ApiKeysQuery = { apiKeys: Array<{ id: string, name: string, keyPrefix: string, isActive: boolean, expiresAt: string | null, createdAt: string }> };

export type CreateApiKeyMutationVariables = Exact<{
  input: CreateApiKeyInput;
}>;


export type CreateApiKeyMutation = { createApiKey: { id: string, name: string, keyPrefix: string, secret: string } };

export type DeactivateApiKeyMutationVariables = Exact<{
  id: string | number;
}>;


export type DeactivateApiKeyMutation = { updateApiKey: { id: string, isActive: boolean } };

export type DeleteApiKeyMutationVariables = Exact<{
  id: string | number;
}>;


export type DeleteApiKeyMutation = { deleteApiKey: { id: string } };

export type WebhookEndpointsQueryVariables = Exact<{ [key: string]: never; }>;


export type WebhookEndpointsQuery = { webhookEndpoints: { data: Array<{ id: string, url: string, description: string | null, enabled: boolean, disabledReason: string | null, eventTypes: Array<string>, secretHint: string, createdAt: string }> } };

export type WebhookEndpointQueryVariables = Exact<{
  id: string | number;
}>;


export type WebhookEndpointQuery = { webhookEndpoint: { id: string, url: string, description: string | null, enabled: boolean, disabledReason: string | null, eventTypes: Array<string>, secretHint: string, deliveries: { data: Array<{ id: string, eventId: string | null, eventType: string, status: WebhookDeliveryStatus, attemptCount: number, lastStatusCode: number | null, lastError: string | null, lastLatencyMs: number | null, lastAttemptAt: string | null, nextAttemptAt: string | null, manual: boolean, createdAt: string }>, meta: { total: number } } } };

export type CreateWebhookEndpointMutationVariables = Exact<{
  input: CreateWebhookEndpointInput;
}>;


export type CreateWebhookEndpointMutation = { createWebhookEndpoint: { id: string, url: string, secret: string } };

export type DeleteWebhookEndpointMutationVariables = Exact<{
  id: string | number;
}>;


export type DeleteWebhookEndpointMutation = { deleteWebhookEndpoint: { id: string } };

export type TestWebhookEndpointMutationVariables = Exact<{
  id: string | number;
}>;


export type TestWebhookEndpointMutation = { testWebhookEndpoint: { id: string, status: WebhookDeliveryStatus } };

export type ResendWebhookEventMutationVariables = Exact<{
  endpointId: string | number;
  eventId: string | number;
}>;


export type ResendWebhookEventMutation = { createWebhookDelivery: { id: string, status: WebhookDeliveryStatus } };

export type CarrierConnectionRowFragment = { id: string, name: string, carrier: CarrierKind, accountSid: string, authTokenLast4: string, webhookKeyLast4: string | null, publicKey: string | null, applicationId: string | null, callsPerSecond: number, createdAt: string };

export type CarrierFormFragment = { kind: CarrierKind, label: string, connectionFields: Array<{ name: string, label: string, hint: string, secret: boolean, required: boolean }> };

export type TelephonyQueryVariables = Exact<{ [key: string]: never; }>;


export type TelephonyQuery = { carriers: Array<{ kind: CarrierKind, label: string, connectionFields: Array<{ name: string, label: string, hint: string, secret: boolean, required: boolean }> }>, carrierConnections: { data: Array<{ id: string, name: string, carrier: CarrierKind, accountSid: string, authTokenLast4: string, webhookKeyLast4: string | null, publicKey: string | null, applicationId: string | null, callsPerSecond: number, createdAt: string }> }, phoneNumbers: { data: Array<{ id: string, number: string, label: string | null, carrierConnection: { id: string, name: string } | null }> } };

export type CreateCarrierConnectionMutationVariables = Exact<{
  input: CreateCarrierConnectionInput;
}>;


export type CreateCarrierConnectionMutation = { createCarrierConnection: { id: string } };

export type UpdateCarrierConnectionMutationVariables = Exact<{
  id: string | number;
  input: UpdateCarrierConnectionInput;
}>;


export type UpdateCarrierConnectionMutation = { updateCarrierConnection: { id: string, name: string, carrier: CarrierKind, accountSid: string, authTokenLast4: string, webhookKeyLast4: string | null, publicKey: string | null, applicationId: string | null, callsPerSecond: number, createdAt: string } };

export type DeleteCarrierConnectionMutationVariables = Exact<{
  id: string | number;
}>;


export type DeleteCarrierConnectionMutation = { deleteCarrierConnection: { id: string } };

export type CreatePhoneNumberMutationVariables = Exact<{
  input: CreatePhoneNumberInput;
}>;


export type CreatePhoneNumberMutation = { createPhoneNumber: { id: string } };

export type DeletePhoneNumberMutationVariables = Exact<{
  id: string | number;
}>;


export type DeletePhoneNumberMutation = { deletePhoneNumber: { id: string } };

export type TeamQueryVariables = Exact<{ [key: string]: never; }>;


export type TeamQuery = { users: { data: Array<{ id: string, email: string, name: string, role: UserRole, createdAt: string }> } };

export type AddUserMutationVariables = Exact<{
  input: AddUserInput;
}>;


export type AddUserMutation = { addUser: { user: { id: string, email: string, role: UserRole }, apiKey: { secret: string } } };

export type UpdateUserRoleMutationVariables = Exact<{
  id: string | number;
  role: UserRole;
}>;


export type UpdateUserRoleMutation = { updateUserRole: { id: string, role: UserRole } };

export type RemoveUserMutationVariables = Exact<{
  id: string | number;
}>;


export type RemoveUserMutation = { removeUser: { id: string } };

export type ToolRowFragment = { id: string, name: string, description: string, method: ToolMethod, url: string, parameters: Record<string, unknown>, timeoutMs: number, headerNames: Array<string>, secretHint: string };

export type McpServerRowFragment = { id: string, name: string, url: string, status: McpServerStatus, lastError: string | null, authHeaderName: string | null, refreshedAt: string | null, tools: Array<{ name: string, description: string | null, refused: string | null }> };

export type OrganizationToolsQueryVariables = Exact<{ [key: string]: never; }>;


export type OrganizationToolsQuery = { tools: { data: Array<{ id: string, name: string, description: string, method: ToolMethod, url: string, parameters: Record<string, unknown>, timeoutMs: number, headerNames: Array<string>, secretHint: string }> }, mcpServers: { data: Array<{ id: string, name: string, url: string, status: McpServerStatus, lastError: string | null, authHeaderName: string | null, refreshedAt: string | null, tools: Array<{ name: string, description: string | null, refused: string | null }> }> } };

export type CreateToolMutationVariables = Exact<{
  input: CreateToolInput;
}>;


export type CreateToolMutation = { createTool: { id: string, name: string, secret: string } };

export type UpdateToolMutationVariables = Exact<{
  id: string | number;
  input: UpdateToolInput;
}>;


export type UpdateToolMutation = { updateTool: { id: string, name: string, description: string, method: ToolMethod, url: string, parameters: Record<string, unknown>, timeoutMs: number, headerNames: Array<string>, secretHint: string } };

export type RotateToolSecretMutationVariables = Exact<{
  id: string | number;
}>;


export type RotateToolSecretMutation = { rotateToolSecret: { id: string, name: string, secret: string } };

export type DeleteToolMutationVariables = Exact<{
  id: string | number;
}>;


export type DeleteToolMutation = { deleteTool: { id: string } };

export type CreateMcpServerMutationVariables = Exact<{
  input: CreateMcpServerInput;
}>;


export type CreateMcpServerMutation = { createMcpServer: { id: string, name: string, url: string, status: McpServerStatus, lastError: string | null, authHeaderName: string | null, refreshedAt: string | null, tools: Array<{ name: string, description: string | null, refused: string | null }> } };

export type UpdateMcpServerMutationVariables = Exact<{
  id: string | number;
  input: UpdateMcpServerInput;
}>;


export type UpdateMcpServerMutation = { updateMcpServer: { id: string, name: string, url: string, status: McpServerStatus, lastError: string | null, authHeaderName: string | null, refreshedAt: string | null, tools: Array<{ name: string, description: string | null, refused: string | null }> } };

export type RefreshMcpServerMutationVariables = Exact<{
  id: string | number;
}>;


export type RefreshMcpServerMutation = { refreshMcpServer: { id: string, name: string, url: string, status: McpServerStatus, lastError: string | null, authHeaderName: string | null, refreshedAt: string | null, tools: Array<{ name: string, description: string | null, refused: string | null }> } };

export type DeleteMcpServerMutationVariables = Exact<{
  id: string | number;
}>;


export type DeleteMcpServerMutation = { deleteMcpServer: { id: string } };

export class TypedDocumentString<TResult, TVariables>
  extends String
  implements DocumentTypeDecoration<TResult, TVariables>
{
  __apiType?: NonNullable<DocumentTypeDecoration<TResult, TVariables>['__apiType']>;
  private value: string;
  public __meta__?: Record<string, any> | undefined;

  constructor(value: string, __meta__?: Record<string, any> | undefined) {
    super(value);
    this.value = value;
    this.__meta__ = __meta__;
  }

  override toString(): string & DocumentTypeDecoration<TResult, TVariables> {
    return this.value;
  }
}
export const AgentFormFragmentDoc = new TypedDocumentString(`
    fragment AgentForm on Agent {
  id
  name
  description
  status
  version
  instructions
  hasPolicy
  firstMessage
  firstMessageMode
  modelConfig {
    model
    modelSettings
    providerOptions
  }
  voiceConfig {
    pipelineMode
    sttProvider
    ttsProvider
    stsProvider
    voiceId
    language
  }
  memoryConfig {
    enabled
    lastMessages
  }
  knowledgeBaseConfig
  variables {
    name
    default
    description
  }
  toolIds
  mcpTools {
    serverId
    names
  }
  createdAt
  updatedAt
}
    `, {"fragmentName":"AgentForm"}) as unknown as TypedDocumentString<AgentFormFragment, unknown>;
export const ExecutionSummaryFragmentDoc = new TypedDocumentString(`
    fragment ExecutionSummary on Execution {
  id
  status
  totalContacts
  contactsPending
  contactsInProgress
  contactsCompleted
  contactsFailed
  creditsSpent
  createdAt
  actualStartAt
  actualEndAt
  waitingReason
  nextCallAt
}
    `, {"fragmentName":"ExecutionSummary"}) as unknown as TypedDocumentString<ExecutionSummaryFragment, unknown>;
export const ExecutionLiveFragmentDoc = new TypedDocumentString(`
    fragment ExecutionLive on Execution {
  ...ExecutionSummary
  contactsDoNotCall
  scheduledStartAt
  outcomes {
    answered
    voicemail
    noAnswer
    busy
    failed
    doNotCall
    notCalled
  }
  program {
    id
    name
    maxConcurrentCalls
  }
}
    fragment ExecutionSummary on Execution {
  id
  status
  totalContacts
  contactsPending
  contactsInProgress
  contactsCompleted
  contactsFailed
  creditsSpent
  createdAt
  actualStartAt
  actualEndAt
  waitingReason
  nextCallAt
}`, {"fragmentName":"ExecutionLive"}) as unknown as TypedDocumentString<ExecutionLiveFragment, unknown>;
export const LiveCallFragmentDoc = new TypedDocumentString(`
    fragment LiveCall on Call {
  id
  status
  outcome
  to
  queuedAt
  answeredAt
  endedAt
  durationSeconds
  contact {
    id
    name
  }
}
    `, {"fragmentName":"LiveCall"}) as unknown as TypedDocumentString<LiveCallFragment, unknown>;
export const ExecutionAttentionFragmentDoc = new TypedDocumentString(`
    fragment ExecutionAttention on Execution {
  id
  status
  createdAt
  contactsPending
  waitingReason
  nextCallAt
}
    `, {"fragmentName":"ExecutionAttention"}) as unknown as TypedDocumentString<ExecutionAttentionFragment, unknown>;
export const ImportJobFieldsFragmentDoc = new TypedDocumentString(`
    fragment ImportJobFields on ContactImport {
  id
  status
  mode
  key
  audienceId
  columns
  rowsRead
  imported
  updated
  skipped
  refused
  doNotCall
  error
  fileBytes
  uploadUrl
  refusedRowsUrl
  createdAt
  finishedAt
}
    `, {"fragmentName":"ImportJobFields"}) as unknown as TypedDocumentString<ImportJobFieldsFragment, unknown>;
export const MetaFragmentDoc = new TypedDocumentString(`
    fragment Meta on PageMeta {
  page
  limit
  total
  totalPages
  hasNextPage
  hasPreviousPage
}
    `, {"fragmentName":"Meta"}) as unknown as TypedDocumentString<MetaFragment, unknown>;
export const CarrierConnectionRowFragmentDoc = new TypedDocumentString(`
    fragment CarrierConnectionRow on CarrierConnection {
  id
  name
  carrier
  accountSid
  authTokenLast4
  webhookKeyLast4
  publicKey
  applicationId
  callsPerSecond
  createdAt
}
    `, {"fragmentName":"CarrierConnectionRow"}) as unknown as TypedDocumentString<CarrierConnectionRowFragment, unknown>;
export const CarrierFormFragmentDoc = new TypedDocumentString(`
    fragment CarrierForm on Carrier {
  kind
  label
  connectionFields {
    name
    label
    hint
    secret
    required
  }
}
    `, {"fragmentName":"CarrierForm"}) as unknown as TypedDocumentString<CarrierFormFragment, unknown>;
export const ToolRowFragmentDoc = new TypedDocumentString(`
    fragment ToolRow on Tool {
  id
  name
  description
  method
  url
  parameters
  timeoutMs
  headerNames
  secretHint
}
    `, {"fragmentName":"ToolRow"}) as unknown as TypedDocumentString<ToolRowFragment, unknown>;
export const McpServerRowFragmentDoc = new TypedDocumentString(`
    fragment McpServerRow on McpServer {
  id
  name
  url
  status
  lastError
  authHeaderName
  refreshedAt
  tools {
    name
    description
    refused
  }
}
    `, {"fragmentName":"McpServerRow"}) as unknown as TypedDocumentString<McpServerRowFragment, unknown>;
export const AgentsDocument = new TypedDocumentString(`
    query Agents($search: String, $status: AgentStatus, $page: Int!) {
  agents(search: $search, status: $status, page: $page, limit: 20) {
    data {
      id
      name
      description
      status
      version
      modelConfig {
        model
      }
      updatedAt
    }
    meta {
      ...Meta
    }
  }
}
    fragment Meta on PageMeta {
  page
  limit
  total
  totalPages
  hasNextPage
  hasPreviousPage
}`) as unknown as TypedDocumentString<AgentsQuery, AgentsQueryVariables>;
export const AgentDocument = new TypedDocumentString(`
    query Agent($id: ID!) {
  agent(id: $id) {
    ...AgentForm
  }
}
    fragment AgentForm on Agent {
  id
  name
  description
  status
  version
  instructions
  hasPolicy
  firstMessage
  firstMessageMode
  modelConfig {
    model
    modelSettings
    providerOptions
  }
  voiceConfig {
    pipelineMode
    sttProvider
    ttsProvider
    stsProvider
    voiceId
    language
  }
  memoryConfig {
    enabled
    lastMessages
  }
  knowledgeBaseConfig
  variables {
    name
    default
    description
  }
  toolIds
  mcpTools {
    serverId
    names
  }
  createdAt
  updatedAt
}`) as unknown as TypedDocumentString<AgentQuery, AgentQueryVariables>;
export const KnowledgeBaseChoicesDocument = new TypedDocumentString(`
    query KnowledgeBaseChoices {
  knowledgeBases(limit: 100, sortBy: "name", sortOrder: asc) {
    data {
      id
      name
    }
  }
}
    `) as unknown as TypedDocumentString<KnowledgeBaseChoicesQuery, KnowledgeBaseChoicesQueryVariables>;
export const CreateAgentDocument = new TypedDocumentString(`
    mutation CreateAgent($input: CreateAgentInput!) {
  createAgent(input: $input) {
    ...AgentForm
  }
}
    fragment AgentForm on Agent {
  id
  name
  description
  status
  version
  instructions
  hasPolicy
  firstMessage
  firstMessageMode
  modelConfig {
    model
    modelSettings
    providerOptions
  }
  voiceConfig {
    pipelineMode
    sttProvider
    ttsProvider
    stsProvider
    voiceId
    language
  }
  memoryConfig {
    enabled
    lastMessages
  }
  knowledgeBaseConfig
  variables {
    name
    default
    description
  }
  toolIds
  mcpTools {
    serverId
    names
  }
  createdAt
  updatedAt
}`) as unknown as TypedDocumentString<CreateAgentMutation, CreateAgentMutationVariables>;
export const UpdateAgentDocument = new TypedDocumentString(`
    mutation UpdateAgent($id: ID!, $input: UpdateAgentInput!) {
  updateAgent(id: $id, input: $input) {
    ...AgentForm
  }
}
    fragment AgentForm on Agent {
  id
  name
  description
  status
  version
  instructions
  hasPolicy
  firstMessage
  firstMessageMode
  modelConfig {
    model
    modelSettings
    providerOptions
  }
  voiceConfig {
    pipelineMode
    sttProvider
    ttsProvider
    stsProvider
    voiceId
    language
  }
  memoryConfig {
    enabled
    lastMessages
  }
  knowledgeBaseConfig
  variables {
    name
    default
    description
  }
  toolIds
  mcpTools {
    serverId
    names
  }
  createdAt
  updatedAt
}`) as unknown as TypedDocumentString<UpdateAgentMutation, UpdateAgentMutationVariables>;
export const ActivateAgentDocument = new TypedDocumentString(`
    mutation ActivateAgent($id: ID!) {
  activateAgent(id: $id) {
    ...AgentForm
  }
}
    fragment AgentForm on Agent {
  id
  name
  description
  status
  version
  instructions
  hasPolicy
  firstMessage
  firstMessageMode
  modelConfig {
    model
    modelSettings
    providerOptions
  }
  voiceConfig {
    pipelineMode
    sttProvider
    ttsProvider
    stsProvider
    voiceId
    language
  }
  memoryConfig {
    enabled
    lastMessages
  }
  knowledgeBaseConfig
  variables {
    name
    default
    description
  }
  toolIds
  mcpTools {
    serverId
    names
  }
  createdAt
  updatedAt
}`) as unknown as TypedDocumentString<ActivateAgentMutation, ActivateAgentMutationVariables>;
export const ArchiveAgentDocument = new TypedDocumentString(`
    mutation ArchiveAgent($id: ID!) {
  deleteAgent(id: $id) {
    ...AgentForm
  }
}
    fragment AgentForm on Agent {
  id
  name
  description
  status
  version
  instructions
  hasPolicy
  firstMessage
  firstMessageMode
  modelConfig {
    model
    modelSettings
    providerOptions
  }
  voiceConfig {
    pipelineMode
    sttProvider
    ttsProvider
    stsProvider
    voiceId
    language
  }
  memoryConfig {
    enabled
    lastMessages
  }
  knowledgeBaseConfig
  variables {
    name
    default
    description
  }
  toolIds
  mcpTools {
    serverId
    names
  }
  createdAt
  updatedAt
}`) as unknown as TypedDocumentString<ArchiveAgentMutation, ArchiveAgentMutationVariables>;
export const TestAgentDocument = new TypedDocumentString(`
    mutation TestAgent($id: ID!, $message: String!) {
  testAgent(id: $id, message: $message) {
    response
    toolCalls {
      id
      tool
      status
      statusCode
      durationMs
      arguments
      answer
      error
    }
    usage {
      inputTokens
      outputTokens
      totalTokens
      model
    }
  }
}
    `) as unknown as TypedDocumentString<TestAgentMutation, TestAgentMutationVariables>;
export const CreateWebCallDocument = new TypedDocumentString(`
    mutation CreateWebCall($input: CreateWebCallInput!) {
  createWebCall(input: $input) {
    url
    expiresAt
  }
}
    `) as unknown as TypedDocumentString<CreateWebCallMutation, CreateWebCallMutationVariables>;
export const ToolChoicesDocument = new TypedDocumentString(`
    query ToolChoices {
  tools(limit: 100, sortBy: "name", sortOrder: asc) {
    data {
      id
      name
      description
      method
      url
    }
  }
  mcpServers(limit: 100, sortBy: "name", sortOrder: asc) {
    data {
      id
      name
      url
      status
    }
  }
}
    `) as unknown as TypedDocumentString<ToolChoicesQuery, ToolChoicesQueryVariables>;
export const CallsDocument = new TypedDocumentString(`
    query Calls($status: CallStatus, $outcome: String, $programId: ID, $executionId: ID, $queuedAfter: DateTimeISO, $queuedBefore: DateTimeISO, $search: String, $page: Int!) {
  calls(
    status: $status
    outcome: $outcome
    programId: $programId
    executionId: $executionId
    queuedAfter: $queuedAfter
    queuedBefore: $queuedBefore
    search: $search
    page: $page
    limit: 25
  ) {
    data {
      id
      direction
      from
      to
      status
      outcome
      queuedAt
      durationSeconds
      program {
        id
        name
      }
      contact {
        id
        name
      }
    }
    meta {
      ...Meta
    }
  }
}
    fragment Meta on PageMeta {
  page
  limit
  total
  totalPages
  hasNextPage
  hasPreviousPage
}`) as unknown as TypedDocumentString<CallsQuery, CallsQueryVariables>;
export const ProgramFilterChoicesDocument = new TypedDocumentString(`
    query ProgramFilterChoices {
  programs(limit: 100, sortBy: "name", sortOrder: asc) {
    data {
      id
      name
    }
  }
}
    `) as unknown as TypedDocumentString<ProgramFilterChoicesQuery, ProgramFilterChoicesQueryVariables>;
export const CallDocument = new TypedDocumentString(`
    query Call($id: ID!) {
  call(id: $id) {
    id
    direction
    from
    to
    status
    outcome
    answeredBy
    attempt
    carrier
    queuedAt
    answeredAt
    endedAt
    durationSeconds
    errorText
    creditsCharged
    reachedNodeIds
    transfer {
      destinationName
      destination
      mode
      transferredAt
      dialStatus
      dialDurationSeconds
      dialEndedAt
      returnedAt
    }
    program {
      id
      name
    }
    execution {
      id
      status
    }
    contact {
      id
      name
      phone
    }
    agent {
      id
      name
    }
    conversation {
      id
      messages(limit: 100) {
        data {
          id
          role
          content
          createdAt
          sequence
        }
        meta {
          total
        }
      }
      toolCalls(limit: 100) {
        data {
          id
          sequence
          afterSequence
          tool
          status
          statusCode
          durationMs
          arguments
          answer
          error
        }
        meta {
          total
        }
      }
    }
    analysis {
      status
      summary
      data
      error
      model
      analyzedAt
    }
    recording {
      status
      durationSeconds
      channels
      deletedAt
      deletionReason
      errorText
    }
    turnLatency {
      provider
      p50Ms
      maxMs
      firstAudioMs
      bargeIns
      turns {
        endOfSpeechAt
        totalMs
        recognizerMs
        modelMs
        synthesizerMs
        gatewayMs
        providerMs
        waitMs
      }
    }
  }
  events(callId: $id, sortOrder: asc, limit: 100) {
    data {
      id
      type
      createdAt
      payload
    }
    meta {
      total
    }
  }
}
    `) as unknown as TypedDocumentString<CallQuery, CallQueryVariables>;
export const ProgramsDocument = new TypedDocumentString(`
    query Programs($search: String, $page: Int!) {
  programs(search: $search, page: $page, limit: 20) {
    data {
      id
      name
      kind
      status
      carrier
      audience {
        id
        name
      }
      agent {
        id
        name
      }
      updatedAt
    }
    meta {
      ...Meta
    }
  }
}
    fragment Meta on PageMeta {
  page
  limit
  total
  totalPages
  hasNextPage
  hasPreviousPage
}`) as unknown as TypedDocumentString<ProgramsQuery, ProgramsQueryVariables>;
export const ProgramChoicesDocument = new TypedDocumentString(`
    query ProgramChoices {
  audiences(limit: 100, sortBy: "name", sortOrder: asc) {
    data {
      id
      name
      contactCount
    }
  }
  agents(limit: 100, sortBy: "name", sortOrder: asc) {
    data {
      id
      name
      status
    }
  }
  phoneNumbers(limit: 100) {
    data {
      id
      number
      label
    }
  }
}
    `) as unknown as TypedDocumentString<ProgramChoicesQuery, ProgramChoicesQueryVariables>;
export const ProgramDocument = new TypedDocumentString(`
    query Program($id: ID!) {
  program(id: $id) {
    id
    name
    description
    kind
    status
    carrier
    maxConcurrentCalls
    callingWindow {
      startTime
      endTime
      daysOfWeek
    }
    recording {
      enabled
      channels
    }
    audience {
      id
      name
      contactCount
    }
    agent {
      id
      name
    }
    flow {
      id
      name
    }
    executions(limit: 20) {
      ...ExecutionSummary
    }
  }
}
    fragment ExecutionSummary on Execution {
  id
  status
  totalContacts
  contactsPending
  contactsInProgress
  contactsCompleted
  contactsFailed
  creditsSpent
  createdAt
  actualStartAt
  actualEndAt
  waitingReason
  nextCallAt
}`) as unknown as TypedDocumentString<ProgramQuery, ProgramQueryVariables>;
export const CreateProgramDocument = new TypedDocumentString(`
    mutation CreateProgram($input: CreateProgramInput!) {
  createProgram(input: $input) {
    id
  }
}
    `) as unknown as TypedDocumentString<CreateProgramMutation, CreateProgramMutationVariables>;
export const ActivateProgramDocument = new TypedDocumentString(`
    mutation ActivateProgram($id: ID!) {
  activateProgram(id: $id) {
    id
    status
  }
}
    `) as unknown as TypedDocumentString<ActivateProgramMutation, ActivateProgramMutationVariables>;
export const CreateExecutionDocument = new TypedDocumentString(`
    mutation CreateExecution($programId: ID!) {
  createExecution(programId: $programId) {
    id
    status
  }
}
    `) as unknown as TypedDocumentString<CreateExecutionMutation, CreateExecutionMutationVariables>;
export const StartExecutionDocument = new TypedDocumentString(`
    mutation StartExecution($id: ID!) {
  startExecution(id: $id) {
    ...ExecutionLive
  }
}
    fragment ExecutionSummary on Execution {
  id
  status
  totalContacts
  contactsPending
  contactsInProgress
  contactsCompleted
  contactsFailed
  creditsSpent
  createdAt
  actualStartAt
  actualEndAt
  waitingReason
  nextCallAt
}
fragment ExecutionLive on Execution {
  ...ExecutionSummary
  contactsDoNotCall
  scheduledStartAt
  outcomes {
    answered
    voicemail
    noAnswer
    busy
    failed
    doNotCall
    notCalled
  }
  program {
    id
    name
    maxConcurrentCalls
  }
}`) as unknown as TypedDocumentString<StartExecutionMutation, StartExecutionMutationVariables>;
export const ControlExecutionDocument = new TypedDocumentString(`
    mutation ControlExecution($id: ID!, $action: ExecutionAction!) {
  controlExecution(id: $id, action: $action) {
    ...ExecutionLive
  }
}
    fragment ExecutionSummary on Execution {
  id
  status
  totalContacts
  contactsPending
  contactsInProgress
  contactsCompleted
  contactsFailed
  creditsSpent
  createdAt
  actualStartAt
  actualEndAt
  waitingReason
  nextCallAt
}
fragment ExecutionLive on Execution {
  ...ExecutionSummary
  contactsDoNotCall
  scheduledStartAt
  outcomes {
    answered
    voicemail
    noAnswer
    busy
    failed
    doNotCall
    notCalled
  }
  program {
    id
    name
    maxConcurrentCalls
  }
}`) as unknown as TypedDocumentString<ControlExecutionMutation, ControlExecutionMutationVariables>;
export const ExecutionsUpdatedDocument = new TypedDocumentString(`
    subscription ExecutionsUpdated($programId: ID!) {
  executionsUpdated(programId: $programId) {
    ...ExecutionSummary
  }
}
    fragment ExecutionSummary on Execution {
  id
  status
  totalContacts
  contactsPending
  contactsInProgress
  contactsCompleted
  contactsFailed
  creditsSpent
  createdAt
  actualStartAt
  actualEndAt
  waitingReason
  nextCallAt
}`) as unknown as TypedDocumentString<ExecutionsUpdatedSubscription, ExecutionsUpdatedSubscriptionVariables>;
export const ExecutionUpdatedDocument = new TypedDocumentString(`
    subscription ExecutionUpdated($id: ID!) {
  executionUpdated(id: $id) {
    ...ExecutionLive
  }
}
    fragment ExecutionSummary on Execution {
  id
  status
  totalContacts
  contactsPending
  contactsInProgress
  contactsCompleted
  contactsFailed
  creditsSpent
  createdAt
  actualStartAt
  actualEndAt
  waitingReason
  nextCallAt
}
fragment ExecutionLive on Execution {
  ...ExecutionSummary
  contactsDoNotCall
  scheduledStartAt
  outcomes {
    answered
    voicemail
    noAnswer
    busy
    failed
    doNotCall
    notCalled
  }
  program {
    id
    name
    maxConcurrentCalls
  }
}`) as unknown as TypedDocumentString<ExecutionUpdatedSubscription, ExecutionUpdatedSubscriptionVariables>;
export const ExecutionCallsDocument = new TypedDocumentString(`
    query ExecutionCalls($id: ID!, $page: Int!) {
  execution(id: $id) {
    id
    calls(page: $page, limit: 100) {
      data {
        ...LiveCall
      }
      meta {
        ...Meta
      }
    }
  }
}
    fragment LiveCall on Call {
  id
  status
  outcome
  to
  queuedAt
  answeredAt
  endedAt
  durationSeconds
  contact {
    id
    name
  }
}
fragment Meta on PageMeta {
  page
  limit
  total
  totalPages
  hasNextPage
  hasPreviousPage
}`) as unknown as TypedDocumentString<ExecutionCallsQuery, ExecutionCallsQueryVariables>;
export const CallUpdatedDocument = new TypedDocumentString(`
    subscription CallUpdated($executionId: ID!) {
  callUpdated(executionId: $executionId) {
    ...LiveCall
  }
}
    fragment LiveCall on Call {
  id
  status
  outcome
  to
  queuedAt
  answeredAt
  endedAt
  durationSeconds
  contact {
    id
    name
  }
}`) as unknown as TypedDocumentString<CallUpdatedSubscription, CallUpdatedSubscriptionVariables>;
export const UnfinishedExecutionsDocument = new TypedDocumentString(`
    query UnfinishedExecutions {
  programs(limit: 50, sortBy: "name", sortOrder: asc) {
    data {
      id
      name
      running: executions(status: running, limit: 5) {
        ...ExecutionAttention
      }
      paused: executions(status: paused, limit: 5) {
        ...ExecutionAttention
      }
      pausedNoCredits: executions(status: paused_no_credits, limit: 5) {
        ...ExecutionAttention
      }
      pausedThreshold: executions(status: paused_threshold, limit: 5) {
        ...ExecutionAttention
      }
    }
  }
}
    fragment ExecutionAttention on Execution {
  id
  status
  createdAt
  contactsPending
  waitingReason
  nextCallAt
}`) as unknown as TypedDocumentString<UnfinishedExecutionsQuery, UnfinishedExecutionsQueryVariables>;
export const ContactsDocument = new TypedDocumentString(`
    query Contacts($search: String, $page: Int!) {
  contacts(search: $search, page: $page, limit: 20) {
    data {
      id
      name
      phone
      timeZone
      optedOut
      createdAt
    }
    meta {
      ...Meta
    }
  }
}
    fragment Meta on PageMeta {
  page
  limit
  total
  totalPages
  hasNextPage
  hasPreviousPage
}`) as unknown as TypedDocumentString<ContactsQuery, ContactsQueryVariables>;
export const CreateContactDocument = new TypedDocumentString(`
    mutation CreateContact($input: CreateContactInput!) {
  createContact(input: $input) {
    id
  }
}
    `) as unknown as TypedDocumentString<CreateContactMutation, CreateContactMutationVariables>;
export const DeleteContactDocument = new TypedDocumentString(`
    mutation DeleteContact($id: ID!) {
  deleteContact(id: $id) {
    id
  }
}
    `) as unknown as TypedDocumentString<DeleteContactMutation, DeleteContactMutationVariables>;
export const AudiencesDocument = new TypedDocumentString(`
    query Audiences($search: String, $page: Int!) {
  audiences(search: $search, page: $page, limit: 20) {
    data {
      id
      name
      description
      kind
      contactCount
      createdAt
    }
    meta {
      ...Meta
    }
  }
}
    fragment Meta on PageMeta {
  page
  limit
  total
  totalPages
  hasNextPage
  hasPreviousPage
}`) as unknown as TypedDocumentString<AudiencesQuery, AudiencesQueryVariables>;
export const CreateAudienceDocument = new TypedDocumentString(`
    mutation CreateAudience($input: CreateAudienceInput!) {
  createAudience(input: $input) {
    id
  }
}
    `) as unknown as TypedDocumentString<CreateAudienceMutation, CreateAudienceMutationVariables>;
export const AudienceDocument = new TypedDocumentString(`
    query Audience($id: ID!, $page: Int!) {
  audience(id: $id) {
    id
    name
    description
    contactCount
    contacts(page: $page, limit: 20) {
      data {
        id
        name
        phone
        optedOut
      }
      meta {
        ...Meta
      }
    }
  }
}
    fragment Meta on PageMeta {
  page
  limit
  total
  totalPages
  hasNextPage
  hasPreviousPage
}`) as unknown as TypedDocumentString<AudienceQuery, AudienceQueryVariables>;
export const AddAudienceMembersDocument = new TypedDocumentString(`
    mutation AddAudienceMembers($audienceId: ID!, $contactIds: [ID!]!) {
  addAudienceMembers(audienceId: $audienceId, contactIds: $contactIds) {
    id
    contactCount
  }
}
    `) as unknown as TypedDocumentString<AddAudienceMembersMutation, AddAudienceMembersMutationVariables>;
export const RemoveAudienceMembersDocument = new TypedDocumentString(`
    mutation RemoveAudienceMembers($audienceId: ID!, $contactIds: [ID!]!) {
  removeAudienceMembers(audienceId: $audienceId, contactIds: $contactIds) {
    id
    contactCount
  }
}
    `) as unknown as TypedDocumentString<RemoveAudienceMembersMutation, RemoveAudienceMembersMutationVariables>;
export const DoNotCallDocument = new TypedDocumentString(`
    query DoNotCall($search: String, $page: Int!) {
  doNotCallEntries(search: $search, page: $page, limit: 20) {
    data {
      id
      phone
      note
      source
      createdAt
    }
    meta {
      ...Meta
    }
  }
}
    fragment Meta on PageMeta {
  page
  limit
  total
  totalPages
  hasNextPage
  hasPreviousPage
}`) as unknown as TypedDocumentString<DoNotCallQuery, DoNotCallQueryVariables>;
export const AddDoNotCallDocument = new TypedDocumentString(`
    mutation AddDoNotCall($input: AddDoNotCallInput!) {
  addDoNotCall(input: $input) {
    id
  }
}
    `) as unknown as TypedDocumentString<AddDoNotCallMutation, AddDoNotCallMutationVariables>;
export const RemoveDoNotCallDocument = new TypedDocumentString(`
    mutation RemoveDoNotCall($id: ID!) {
  removeDoNotCall(id: $id) {
    id
  }
}
    `) as unknown as TypedDocumentString<RemoveDoNotCallMutation, RemoveDoNotCallMutationVariables>;
export const ImportDoNotCallDocument = new TypedDocumentString(`
    mutation ImportDoNotCall($input: ImportDoNotCallInput!) {
  importDoNotCall(input: $input) {
    added
    rejected {
      line
      reason
    }
    skipped {
      line
      phone
      reason
    }
  }
}
    `) as unknown as TypedDocumentString<ImportDoNotCallMutation, ImportDoNotCallMutationVariables>;
export const CreateContactImportDocument = new TypedDocumentString(`
    mutation CreateContactImport($input: CreateContactImportInput) {
  createContactImport(input: $input) {
    ...ImportJobFields
  }
}
    fragment ImportJobFields on ContactImport {
  id
  status
  mode
  key
  audienceId
  columns
  rowsRead
  imported
  updated
  skipped
  refused
  doNotCall
  error
  fileBytes
  uploadUrl
  refusedRowsUrl
  createdAt
  finishedAt
}`) as unknown as TypedDocumentString<CreateContactImportMutation, CreateContactImportMutationVariables>;
export const ContactImportDocument = new TypedDocumentString(`
    query ContactImport($id: ID!) {
  contactImport(id: $id) {
    ...ImportJobFields
  }
}
    fragment ImportJobFields on ContactImport {
  id
  status
  mode
  key
  audienceId
  columns
  rowsRead
  imported
  updated
  skipped
  refused
  doNotCall
  error
  fileBytes
  uploadUrl
  refusedRowsUrl
  createdAt
  finishedAt
}`) as unknown as TypedDocumentString<ContactImportQuery, ContactImportQueryVariables>;
export const StaticAudiencesDocument = new TypedDocumentString(`
    query StaticAudiences {
  audiences(limit: 100, sortBy: "name", sortOrder: asc) {
    data {
      id
      name
      kind
    }
  }
}
    `) as unknown as TypedDocumentString<StaticAudiencesQuery, StaticAudiencesQueryVariables>;
export const LatestEventDocument = new TypedDocumentString(`
    query LatestEvent {
  events(limit: 1) {
    data {
      id
    }
  }
}
    `) as unknown as TypedDocumentString<LatestEventQuery, LatestEventQueryVariables>;
export const ImportEventsDocument = new TypedDocumentString(`
    subscription ImportEvents($after: ID) {
  events(
    types: ["import.progress", "import.completed", "import.failed", "import.cancelled"]
    after: $after
  ) {
    id
    type
    payload
  }
}
    `) as unknown as TypedDocumentString<ImportEventsSubscription, ImportEventsSubscriptionVariables>;
export const ContactImportsDocument = new TypedDocumentString(`
    query ContactImports($page: Int!) {
  contactImports(page: $page, limit: 20) {
    data {
      ...ImportJobFields
    }
    meta {
      ...Meta
    }
  }
}
    fragment ImportJobFields on ContactImport {
  id
  status
  mode
  key
  audienceId
  columns
  rowsRead
  imported
  updated
  skipped
  refused
  doNotCall
  error
  fileBytes
  uploadUrl
  refusedRowsUrl
  createdAt
  finishedAt
}
fragment Meta on PageMeta {
  page
  limit
  total
  totalPages
  hasNextPage
  hasPreviousPage
}`) as unknown as TypedDocumentString<ContactImportsQuery, ContactImportsQueryVariables>;
export const CancelContactImportDocument = new TypedDocumentString(`
    mutation CancelContactImport($id: ID!) {
  cancelContactImport(id: $id) {
    ...ImportJobFields
  }
}
    fragment ImportJobFields on ContactImport {
  id
  status
  mode
  key
  audienceId
  columns
  rowsRead
  imported
  updated
  skipped
  refused
  doNotCall
  error
  fileBytes
  uploadUrl
  refusedRowsUrl
  createdAt
  finishedAt
}`) as unknown as TypedDocumentString<CancelContactImportMutation, CancelContactImportMutationVariables>;
export const ResumeContactImportDocument = new TypedDocumentString(`
    mutation ResumeContactImport($id: ID!) {
  resumeContactImport(id: $id) {
    ...ImportJobFields
  }
}
    fragment ImportJobFields on ContactImport {
  id
  status
  mode
  key
  audienceId
  columns
  rowsRead
  imported
  updated
  skipped
  refused
  doNotCall
  error
  fileBytes
  uploadUrl
  refusedRowsUrl
  createdAt
  finishedAt
}`) as unknown as TypedDocumentString<ResumeContactImportMutation, ResumeContactImportMutationVariables>;
export const SegmentsDocument = new TypedDocumentString(`
    query Segments {
  audiences(limit: 100, sortBy: "name", sortOrder: asc) {
    data {
      id
      name
      description
      kind
      filter
      contactCount
      updatedAt
    }
    meta {
      ...Meta
    }
  }
}
    fragment Meta on PageMeta {
  page
  limit
  total
  totalPages
  hasNextPage
  hasPreviousPage
}`) as unknown as TypedDocumentString<SegmentsQuery, SegmentsQueryVariables>;
export const SegmentDocument = new TypedDocumentString(`
    query Segment($id: ID!) {
  audience(id: $id) {
    id
    name
    description
    kind
    filter
    contactCount
    updatedAt
    contacts(limit: 10, sortBy: "name", sortOrder: asc) {
      data {
        id
        name
        phone
        optedOut
      }
    }
  }
}
    `) as unknown as TypedDocumentString<SegmentQuery, SegmentQueryVariables>;
export const CreateSegmentDocument = new TypedDocumentString(`
    mutation CreateSegment($input: CreateAudienceInput!) {
  createAudience(input: $input) {
    id
  }
}
    `) as unknown as TypedDocumentString<CreateSegmentMutation, CreateSegmentMutationVariables>;
export const UpdateSegmentDocument = new TypedDocumentString(`
    mutation UpdateSegment($id: ID!, $input: UpdateAudienceInput!) {
  updateAudience(id: $id, input: $input) {
    id
  }
}
    `) as unknown as TypedDocumentString<UpdateSegmentMutation, UpdateSegmentMutationVariables>;
export const DeleteSegmentDocument = new TypedDocumentString(`
    mutation DeleteSegment($id: ID!) {
  deleteAudience(id: $id) {
    id
  }
}
    `) as unknown as TypedDocumentString<DeleteSegmentMutation, DeleteSegmentMutationVariables>;
export const SegmentPreviewDocument = new TypedDocumentString(`
    query SegmentPreview($filter: JSONObject!) {
  segmentPreview(filter: $filter) {
    contactCount
  }
}
    `) as unknown as TypedDocumentString<SegmentPreviewQuery, SegmentPreviewQueryVariables>;
export const SessionDocument = new TypedDocumentString(`
    query Session {
  me {
    id
    email
    name
    role
    permissions
    organization {
      id
      name
    }
  }
}
    `) as unknown as TypedDocumentString<SessionQuery, SessionQueryVariables>;
export const CreditsDocument = new TypedDocumentString(`
    query Credits {
  organization {
    id
    name
    creditBalance
    creditsReserved
  }
}
    `) as unknown as TypedDocumentString<CreditsQuery, CreditsQueryVariables>;
export const ApiKeysDocument = new TypedDocumentString(`
    query ApiKeys {
  apiKeys(limit: 100) {
    id
    name
    keyPrefix
    isActive
    expiresAt
    createdAt
  }
}
    `) as unknown as TypedDocumentString<ApiKeysQuery, ApiKeysQueryVariables>;
export const CreateApiKeyDocument = new TypedDocumentString(`
    mutation CreateApiKey($input: CreateApiKeyInput!) {
  createApiKey(input: $input) {
    id
    name
    keyPrefix
    secret
  }
}
    `) as unknown as TypedDocumentString<CreateApiKeyMutation, CreateApiKeyMutationVariables>;
export const DeactivateApiKeyDocument = new TypedDocumentString(`
    mutation DeactivateApiKey($id: ID!) {
  updateApiKey(id: $id, input: {isActive: false}) {
    id
    isActive
  }
}
    `) as unknown as TypedDocumentString<DeactivateApiKeyMutation, DeactivateApiKeyMutationVariables>;
export const DeleteApiKeyDocument = new TypedDocumentString(`
    mutation DeleteApiKey($id: ID!) {
  deleteApiKey(id: $id) {
    id
  }
}
    `) as unknown as TypedDocumentString<DeleteApiKeyMutation, DeleteApiKeyMutationVariables>;
export const WebhookEndpointsDocument = new TypedDocumentString(`
    query WebhookEndpoints {
  webhookEndpoints(limit: 50) {
    data {
      id
      url
      description
      enabled
      disabledReason
      eventTypes
      secretHint
      createdAt
    }
  }
}
    `) as unknown as TypedDocumentString<WebhookEndpointsQuery, WebhookEndpointsQueryVariables>;
export const WebhookEndpointDocument = new TypedDocumentString(`
    query WebhookEndpoint($id: ID!) {
  webhookEndpoint(id: $id) {
    id
    url
    description
    enabled
    disabledReason
    eventTypes
    secretHint
    deliveries(limit: 20) {
      data {
        id
        eventId
        eventType
        status
        attemptCount
        lastStatusCode
        lastError
        lastLatencyMs
        lastAttemptAt
        nextAttemptAt
        manual
        createdAt
      }
      meta {
        total
      }
    }
  }
}
    `) as unknown as TypedDocumentString<WebhookEndpointQuery, WebhookEndpointQueryVariables>;
export const CreateWebhookEndpointDocument = new TypedDocumentString(`
    mutation CreateWebhookEndpoint($input: CreateWebhookEndpointInput!) {
  createWebhookEndpoint(input: $input) {
    id
    url
    secret
  }
}
    `) as unknown as TypedDocumentString<CreateWebhookEndpointMutation, CreateWebhookEndpointMutationVariables>;
export const DeleteWebhookEndpointDocument = new TypedDocumentString(`
    mutation DeleteWebhookEndpoint($id: ID!) {
  deleteWebhookEndpoint(id: $id) {
    id
  }
}
    `) as unknown as TypedDocumentString<DeleteWebhookEndpointMutation, DeleteWebhookEndpointMutationVariables>;
export const TestWebhookEndpointDocument = new TypedDocumentString(`
    mutation TestWebhookEndpoint($id: ID!) {
  testWebhookEndpoint(id: $id) {
    id
    status
  }
}
    `) as unknown as TypedDocumentString<TestWebhookEndpointMutation, TestWebhookEndpointMutationVariables>;
export const ResendWebhookEventDocument = new TypedDocumentString(`
    mutation ResendWebhookEvent($endpointId: ID!, $eventId: ID!) {
  createWebhookDelivery(endpointId: $endpointId, input: {eventId: $eventId}) {
    id
    status
  }
}
    `) as unknown as TypedDocumentString<ResendWebhookEventMutation, ResendWebhookEventMutationVariables>;
export const TelephonyDocument = new TypedDocumentString(`
    query Telephony {
  carriers {
    ...CarrierForm
  }
  carrierConnections(limit: 50) {
    data {
      id
      name
      carrier
      ...CarrierConnectionRow
    }
  }
  phoneNumbers(limit: 100) {
    data {
      id
      number
      label
      carrierConnection {
        id
        name
      }
    }
  }
}
    fragment CarrierConnectionRow on CarrierConnection {
  id
  name
  carrier
  accountSid
  authTokenLast4
  webhookKeyLast4
  publicKey
  applicationId
  callsPerSecond
  createdAt
}
fragment CarrierForm on Carrier {
  kind
  label
  connectionFields {
    name
    label
    hint
    secret
    required
  }
}`) as unknown as TypedDocumentString<TelephonyQuery, TelephonyQueryVariables>;
export const CreateCarrierConnectionDocument = new TypedDocumentString(`
    mutation CreateCarrierConnection($input: CreateCarrierConnectionInput!) {
  createCarrierConnection(input: $input) {
    id
  }
}
    `) as unknown as TypedDocumentString<CreateCarrierConnectionMutation, CreateCarrierConnectionMutationVariables>;
export const UpdateCarrierConnectionDocument = new TypedDocumentString(`
    mutation UpdateCarrierConnection($id: ID!, $input: UpdateCarrierConnectionInput!) {
  updateCarrierConnection(id: $id, input: $input) {
    ...CarrierConnectionRow
  }
}
    fragment CarrierConnectionRow on CarrierConnection {
  id
  name
  carrier
  accountSid
  authTokenLast4
  webhookKeyLast4
  publicKey
  applicationId
  callsPerSecond
  createdAt
}`) as unknown as TypedDocumentString<UpdateCarrierConnectionMutation, UpdateCarrierConnectionMutationVariables>;
export const DeleteCarrierConnectionDocument = new TypedDocumentString(`
    mutation DeleteCarrierConnection($id: ID!) {
  deleteCarrierConnection(id: $id) {
    id
  }
}
    `) as unknown as TypedDocumentString<DeleteCarrierConnectionMutation, DeleteCarrierConnectionMutationVariables>;
export const CreatePhoneNumberDocument = new TypedDocumentString(`
    mutation CreatePhoneNumber($input: CreatePhoneNumberInput!) {
  createPhoneNumber(input: $input) {
    id
  }
}
    `) as unknown as TypedDocumentString<CreatePhoneNumberMutation, CreatePhoneNumberMutationVariables>;
export const DeletePhoneNumberDocument = new TypedDocumentString(`
    mutation DeletePhoneNumber($id: ID!) {
  deletePhoneNumber(id: $id) {
    id
  }
}
    `) as unknown as TypedDocumentString<DeletePhoneNumberMutation, DeletePhoneNumberMutationVariables>;
export const TeamDocument = new TypedDocumentString(`
    query Team {
  users(limit: 100, sortBy: "email", sortOrder: asc) {
    data {
      id
      email
      name
      role
      createdAt
    }
  }
}
    `) as unknown as TypedDocumentString<TeamQuery, TeamQueryVariables>;
export const AddUserDocument = new TypedDocumentString(`
    mutation AddUser($input: AddUserInput!) {
  addUser(input: $input) {
    user {
      id
      email
      role
    }
    apiKey {
      secret
    }
  }
}
    `) as unknown as TypedDocumentString<AddUserMutation, AddUserMutationVariables>;
export const UpdateUserRoleDocument = new TypedDocumentString(`
    mutation UpdateUserRole($id: ID!, $role: UserRole!) {
  updateUserRole(id: $id, role: $role) {
    id
    role
  }
}
    `) as unknown as TypedDocumentString<UpdateUserRoleMutation, UpdateUserRoleMutationVariables>;
export const RemoveUserDocument = new TypedDocumentString(`
    mutation RemoveUser($id: ID!) {
  removeUser(id: $id) {
    id
  }
}
    `) as unknown as TypedDocumentString<RemoveUserMutation, RemoveUserMutationVariables>;
export const OrganizationToolsDocument = new TypedDocumentString(`
    query OrganizationTools {
  tools(limit: 100, sortBy: "name", sortOrder: asc) {
    data {
      ...ToolRow
    }
  }
  mcpServers(limit: 100, sortBy: "name", sortOrder: asc) {
    data {
      ...McpServerRow
    }
  }
}
    fragment ToolRow on Tool {
  id
  name
  description
  method
  url
  parameters
  timeoutMs
  headerNames
  secretHint
}
fragment McpServerRow on McpServer {
  id
  name
  url
  status
  lastError
  authHeaderName
  refreshedAt
  tools {
    name
    description
    refused
  }
}`) as unknown as TypedDocumentString<OrganizationToolsQuery, OrganizationToolsQueryVariables>;
export const CreateToolDocument = new TypedDocumentString(`
    mutation CreateTool($input: CreateToolInput!) {
  createTool(input: $input) {
    id
    name
    secret
  }
}
    `) as unknown as TypedDocumentString<CreateToolMutation, CreateToolMutationVariables>;
export const UpdateToolDocument = new TypedDocumentString(`
    mutation UpdateTool($id: ID!, $input: UpdateToolInput!) {
  updateTool(id: $id, input: $input) {
    ...ToolRow
  }
}
    fragment ToolRow on Tool {
  id
  name
  description
  method
  url
  parameters
  timeoutMs
  headerNames
  secretHint
}`) as unknown as TypedDocumentString<UpdateToolMutation, UpdateToolMutationVariables>;
export const RotateToolSecretDocument = new TypedDocumentString(`
    mutation RotateToolSecret($id: ID!) {
  rotateToolSecret(id: $id) {
    id
    name
    secret
  }
}
    `) as unknown as TypedDocumentString<RotateToolSecretMutation, RotateToolSecretMutationVariables>;
export const DeleteToolDocument = new TypedDocumentString(`
    mutation DeleteTool($id: ID!) {
  deleteTool(id: $id) {
    id
  }
}
    `) as unknown as TypedDocumentString<DeleteToolMutation, DeleteToolMutationVariables>;
export const CreateMcpServerDocument = new TypedDocumentString(`
    mutation CreateMcpServer($input: CreateMcpServerInput!) {
  createMcpServer(input: $input) {
    ...McpServerRow
  }
}
    fragment McpServerRow on McpServer {
  id
  name
  url
  status
  lastError
  authHeaderName
  refreshedAt
  tools {
    name
    description
    refused
  }
}`) as unknown as TypedDocumentString<CreateMcpServerMutation, CreateMcpServerMutationVariables>;
export const UpdateMcpServerDocument = new TypedDocumentString(`
    mutation UpdateMcpServer($id: ID!, $input: UpdateMcpServerInput!) {
  updateMcpServer(id: $id, input: $input) {
    ...McpServerRow
  }
}
    fragment McpServerRow on McpServer {
  id
  name
  url
  status
  lastError
  authHeaderName
  refreshedAt
  tools {
    name
    description
    refused
  }
}`) as unknown as TypedDocumentString<UpdateMcpServerMutation, UpdateMcpServerMutationVariables>;
export const RefreshMcpServerDocument = new TypedDocumentString(`
    mutation RefreshMcpServer($id: ID!) {
  refreshMcpServer(id: $id) {
    ...McpServerRow
  }
}
    fragment McpServerRow on McpServer {
  id
  name
  url
  status
  lastError
  authHeaderName
  refreshedAt
  tools {
    name
    description
    refused
  }
}`) as unknown as TypedDocumentString<RefreshMcpServerMutation, RefreshMcpServerMutationVariables>;
export const DeleteMcpServerDocument = new TypedDocumentString(`
    mutation DeleteMcpServer($id: ID!) {
  deleteMcpServer(id: $id) {
    id
  }
}
    `) as unknown as TypedDocumentString<DeleteMcpServerMutation, DeleteMcpServerMutationVariables>;