import {
  getNamedType,
  type GraphQLField,
  type GraphQLNamedType,
  type GraphQLType,
  isInputObjectType,
  isInterfaceType,
  isObjectType,
  type GraphQLSchema,
} from 'graphql';

/**
 * Descriptions every type would repeat word for word (ids, timestamps, the organization) and the
 * arguments named alike on every operation (`id`, `input`, `<x>Id`), filled in from their name and
 * the type they belong to or answer. A field or argument that has its own description keeps it.
 */
const FIELDS: Record<string, (typeName: string) => string> = {
  id: (type) => `The ${words(type)}’s id (a UUID)`,
  createdAt: (type) => `When the ${words(type)} was created (ISO 8601)`,
  updatedAt: (type) => `When the ${words(type)} last changed (ISO 8601)`,
  organizationId: (type) => `The id of the organization the ${words(type)} belongs to`,
  name: (type) => `The ${words(type)}’s name`,
  description: (type) => `What the ${words(type)} is for, in a sentence or two`,
  email: () => 'The user’s email address (their login name)',
};

/** Fields whose meaning is their own, described once here rather than on each class. */
const OWN: Record<string, string> = {
  'AccessToken.accessToken': 'The JWT to send as Authorization: Bearer',
  'AccessToken.tokenType': 'Always Bearer',
  'AddedUser.apiKey': 'The new user’s first API key, with its secret (shown once)',
  'AddedUser.user': 'The user added',
  'ApiKey.expiresAt': 'When the key stops working (ISO 8601); null when it never expires',
  'ApiKey.isActive': 'false turns the key off: it then answers 401 like an unknown key',
  'Agent.memoryConfig': 'Whether and how far the agent remembers earlier messages of a conversation; null when not set',
  'Agent.metadata': 'Free-form JSON object the caller keeps with the agent',
  'Agent.modelConfig': 'The language model the agent answers with',
  'Agent.resolutionCriteria': 'Up to 5 rules an ended conversation is evaluated against',
  'Agent.status': 'draft, active or archived',
  'Agent.voiceConfig': 'How the agent speaks on calls; null when not set',
  AutoPauseRule: 'Pauses an execution when a number of contacts reached a flow node',
  'Call.answeredAt': 'When the call was answered (ISO 8601); null when it never was',
  'Call.carrier': 'The carrier that placed the call: simulator or twilio',
  'Call.direction': 'outbound (placed by an execution) or inbound',
  'Call.endedAt': 'When the call reached its final status (ISO 8601); null while it goes on',
  'Call.status': 'Where the call is at the carrier: queued, ringing, in_progress, then completed, busy, no_answer, failed or canceled',
  'Call.queuedAt': 'When the call was queued to be placed (ISO 8601); the calls list’s queuedAfter/queuedBefore filter on it',
  'CallFlow.edges': 'The moves between nodes',
  'CallFlow.nodes': 'The steps of a call',
  CallingWindow: 'When calls may be placed, in each contact’s own time zone',
  'ContactTrigger.status': 'pending, triggered or cancelled',
  'Conversation.agent': 'The agent the conversation is with',
  'Conversation.endedAt': 'When the conversation was ended (ISO 8601); null while it goes on',
  'Conversation.messageCount': 'Messages stored so far, the user’s and the agent’s',
  'Conversation.status': 'pending, active, ended, failed or archived',
  'Conversation.title': 'A title for the conversation, 1 to 255 characters; what conversation search matches; null when none was given',
  'CreateAgentInput.knowledgeBaseConfig': 'The knowledge base the agent retrieves passages from, and how many',
  'CreateAgentInput.memoryConfig': 'Whether and how far the agent remembers earlier messages',
  'CreateAgentInput.modelConfig': 'The language model the agent answers with',
  'CreateAgentInput.voiceConfig': 'How the agent speaks on calls',
  'CreateAgentInput.metadata': 'Free-form JSON object kept with the agent',
  'CreateAgentInput.resolutionCriteria': 'At most 5 rules an ended conversation is evaluated against',
  'CreateAgentInput.policy': 'Hidden instructions: sent to the model only, never shown to a caller; at most 10000 characters',
  'CreateAgentInput.instructions': 'The system prompt, 1 to 10000 characters',
  'CreateCallFlowInput.nodes': 'The steps of a call; exactly one of type start',
  'CreateProgramInput.kind': 'campaign (runs when an execution is started) or live (calls on a date attribute); default campaign',
  'CreateProgramInput.scheduledStartAt': 'When executions may start at the earliest (ISO 8601, in the future); null for now',
  'CreatedApiKey.expiresAt': 'When the key stops working (ISO 8601); null when it never expires',
  'CreatedApiKey.isActive': 'Whether the key works',
  'CreditLedgerEntry.kind': 'grant, spend or refund',
  'CriterionOutcome.explanation': 'Why the model judged it so',
  'CriterionOutcome.label': 'The criterion’s label',
  'CriterionOutcome.met': 'Whether the conversation met the criterion',
  'DoNotCallEntry.source': 'manual (a user), import (a CSV import) or call (the person asked on a call)',
  'CurrentUser.organization': 'The caller’s organization',
  'DeletionResult.message': 'What was deleted, in words',
  'Execution.actualEndAt': 'When the execution reached a final state (ISO 8601); null before',
  'Execution.actualStartAt': 'When the execution started running (ISO 8601); null before',
  'Execution.autoPauseRules': 'The program’s auto-pause rules as they were when the execution was created',
  'Execution.contactsCompleted': 'Contacts whose calls are over because one connected (answered by a person, or by a machine: voicemail); outcomes splits them',
  'Execution.contactsDoNotCall':
    'Contacts not called because their number was on the do-not-call list when their call was to be placed (outcome do_not_call; counted in contactsFailed too, no credit spent)',
  'Execution.contactsFailed': 'Contacts whose call failed after every retry, or that were not called (opted out, deleted, or on the do-not-call list)',
  'Execution.contactsInProgress': 'Contacts being called now',
  'Execution.contactsPending': 'Contacts not called yet; the four counters add up to totalContacts',
  'Execution.program': 'The program this is a run of',
  'Execution.scheduledStartAt': 'When the execution is to start (ISO 8601); null to start when asked',
  'Execution.scheduledStopAt': 'When the execution is to stop at the latest (ISO 8601); null for no limit',
  'Execution.status': 'Where the execution is in its state machine',
  'Execution.totalContacts': 'Contacts the execution calls: its audience’s contacts that had not opted out when it was created',
  FlowEdge: 'A move from one call flow node to another',
  FlowNode: 'One step of a call flow',
  'FlowNode.label': 'What the node says or asks, or its name',
  'FlowNode.type': 'What the node does',
  'ImportContactsResult.imported': 'Contacts created or updated',
  'KnowledgeDocument.chunkCount': 'Passages the document was cut into',
  'KnowledgeDocument.status': 'processing, ready or failed',
  'KnowledgeDocument.title': 'The document’s title',
  'KnowledgePassage.content': 'The passage’s text',
  LiveTrigger: 'When a live program calls a contact: a date attribute of the contact (or of a business record), offset by days',
  MemoryConfig: 'Whether and how far an agent remembers earlier messages of a conversation',
  'MemoryConfig.enabled': 'Whether the model sees earlier messages at all',
  'MemoryConfig.semanticRecall': 'Whether earlier messages are recalled by meaning too; null when not set',
  'Message.content': 'The message’s text',
  'Message.model': 'The model that wrote it (assistant messages); null for user messages',
  'Message.role': 'user or assistant',
  'Message.usage': 'Tokens the reply cost (assistant messages); null for user messages',
  'MessageReply.response': 'The agent’s reply',
  'MessageReply.usage': 'Tokens the reply cost (the hidden policy is not counted)',
  'ModelConfig.providerOptions': 'Per-provider options, allow-listed per provider; null when not set',
  'Mutation.createAudience': 'Create an audience (a named set of contacts)',
  'Mutation.createBusinessEntity': 'Create a business record (an order, an appointment, ...) of a contact',
  'Mutation.createContact': 'Create a contact',
  'Mutation.createKnowledgeBase': 'Create a knowledge base',
  'Mutation.deleteApiKey': 'Delete one of the caller’s API keys; it stops working at once',
  'Mutation.deleteBusinessEntity': 'Delete a business record',
  'Mutation.removeAudienceMembers': 'Remove contacts from an audience (the contacts are kept)',
  Organization: 'The caller’s organization',
  'Organization.creditBalance': 'Credits left for calls (not spent yet, creditsReserved included); granted by the operator, spent by executions',
  'OrganizationUser.role': 'owner, admin or member',
  'Program.audience': 'The contacts the program calls; null when none was chosen',
  'Program.autoPauseRules': 'Rules that pause an execution when enough contacts reach a node',
  'Program.callingWindow': 'When calls may be placed; null for any time',
  'Program.flow': 'The call flow each call follows; null when none was chosen',
  'Program.kind': 'campaign or live',
  'Program.maxConcurrentCalls': 'Calls placed at once at most, 1 to 100',
  'Program.retryPolicy': 'How failed calls are retried; null for no retries',
  'Program.scheduledStartAt': 'When executions may start at the earliest (ISO 8601); null for now',
  'Program.scheduledStopAt': 'When executions stop at the latest (ISO 8601); null for no limit',
  'Program.status': 'draft, active or archived',
  ProgramAutoPauseRuleInput: 'Pauses an execution when threshold contacts reached nodeId',
  ProgramRetryPolicyInput: 'How failed calls are retried',
  'Query.agent': 'One agent by id; NOT_FOUND when it does not exist or belongs to another organization',
  'Query.apiKey': 'One of the caller’s API keys by id (without its secret)',
  'Query.audience': 'One audience by id',
  'Query.businessEntity': 'One business record by id',
  'Query.callFlow': 'One call flow by id',
  'Query.contact': 'One contact by id',
  'Query.conversation': 'One conversation by id',
  'Query.conversations': 'An agent’s conversations, paged, newest first by default',
  'Query.execution': 'One execution by id',
  'Query.knowledgeBase': 'One knowledge base by id',
  'Query.program': 'One program by id',
  'Query.team': 'One team by id',
  'ResolutionCriterion.description': 'What the criterion asks of a conversation, at most 1000 characters',
  'ResolutionCriterion.label': 'A short name for the criterion, 1 to 100 characters',
  ResolutionCriterionInput: 'A rule an ended conversation is evaluated against',
  RetryPolicy: 'How failed calls are retried',
  'TeamMember.role': 'lead or member',
  'TeamMember.user': 'The user',
  'TriggerSync.program': 'The program whose triggers were synced',
  'UpdateApiKeyInput.isActive': 'false turns the key off; true turns it back on',
  'UpdateContactInput.optedOut': 'true: the contact is never called again by any execution',
  'UpdateContactInput.phone': 'The phone number in E.164 form (+ and up to 15 digits)',
  'Usage.inputTokens': 'Tokens of the prompt (the hidden policy is not counted)',
  'Usage.model': 'The model that answered, <provider>/<model_name>',
  'Usage.outputTokens': 'Tokens of the reply',
  'Usage.totalTokens': 'inputTokens plus outputTokens',
  User: 'A user of the organization',
  VoiceConfig: 'How an agent speaks on calls',
  'VoiceConfig.pipelineMode': 'batch, streaming or sts',
  'VoiceConfig.stsProvider': 'The speech-to-speech provider when pipelineMode is sts; null otherwise',
  'VoiceConfig.voiceId': 'The voice to speak with, 1 to 200 characters; null for the provider’s default',
  'VoiceConfig.sttProvider': 'The recognizer when pipelineMode is streaming (deepgram when it was not set); null otherwise',
  'VoiceConfig.sttModel':
    'The recognizer’s model, 1 to 100 characters; null for its default (deepgram: nova-3, or Flux with turnDetection semantic; openai: gpt-live-transcribe); checked against the provider’s published list; a Deepgram Flux model (flux-general-en, flux-general-multi) opens /v2/listen',
  'VoiceConfig.ttsProvider': 'The synthesizer when pipelineMode is streaming (elevenlabs when it was not set); null otherwise',
  'VoiceConfig.ttsModel':
    'The synthesizer’s model, 1 to 100 characters; null for its default (elevenlabs: eleven_flash_v2_5, openai: gpt-4o-mini-tts); an OpenAI model is checked against OpenAI’s published list',
  'VoiceConfig.language': 'The language the caller speaks, a BCP-47 tag (en, en-US, fr) or multi; null for en',
  ModelConfigInput: 'The language model of an agent',
  VoiceConfigInput: 'How an agent speaks on calls',
  MemoryConfigInput: 'Whether and how far an agent remembers earlier messages',
  KnowledgeBaseConfigInput: 'The knowledge base an agent retrieves passages from',
  'MemoryConfigInput.enabled': 'Whether the model sees earlier messages at all',
  'MemoryConfigInput.semanticRecall': 'Whether earlier messages are recalled by meaning too',
  'AddUserInput.role': 'The new user’s role: owner, admin or member',
  'CallFlowNodeInput.type': 'What the node does',
};

const ARGUMENTS: Record<string, string> = {
  amount: 'Credits to add, a positive whole number',
  action: 'The move to make: start, pause, resume, stop or cancel',
  role: 'The new role: owner, admin or member',
};

/** Where a field without its own description borrows one: the same field of its sibling type. */
function siblings(typeName: string): string[] {
  return [
    typeName.replace(/^Update/, 'Create'),
    typeName.replace(/Input$/, ''),
    `${typeName}Input`,
    typeName === 'CreatedApiKey' ? 'ApiKey' : '',
    ['OrganizationUser', 'CurrentUser', 'OrganizationRef'].includes(typeName) ? 'User' : '',
    typeName === 'OrganizationRef' ? 'Organization' : '',
  ].filter((name) => name && name !== typeName);
}

const ROOTS: Record<string, string> = {
  Query: 'Reads. Every field needs x-api-key or a bearer token and reads the caller’s organization only',
  Mutation: 'Writes. Every field needs x-api-key or a bearer token; what each role may do is the roles matrix',
  Subscription:
    'Live changes over graphql-ws on /graphql (connection_init carries x-api-key or authorization). Each field yields what the matching query returns, for the caller’s organization only',
};

/** "KnowledgeBase" → "knowledge base". */
function words(name: string): string {
  return name.replace(/([a-z])([A-Z])/g, '$1 $2').toLowerCase();
}

/** "knowledgeBaseId" → "knowledge base", "contactIds" → "contacts". */
function idOwner(name: string): string | undefined {
  const single = /^(.+)Id$/.exec(name);
  if (single) return words(single[1]!);
  const many = /^(.+)Ids$/.exec(name);
  return many ? `${words(many[1]!)}s` : undefined;
}

export function describeSchema(schema: GraphQLSchema): GraphQLSchema {
  for (const type of Object.values(schema.getTypeMap())) {
    if (type.name.startsWith('__')) continue;
    if (!type.description) type.description = ROOTS[type.name] ?? OWN[type.name];
    if (!isObjectType(type) && !isInputObjectType(type) && !isInterfaceType(type)) continue;
    const isRoot = type.name === 'Query' || type.name === 'Mutation' || type.name === 'Subscription';
    for (const field of Object.values(type.getFields())) {
      field.description ||= OWN[`${type.name}.${field.name}`];
      if (!field.description) {
        const owner = idOwner(field.name);
        field.description = FIELDS[field.name]?.(type.name) ?? (owner && !isRoot ? `The id of the ${owner}` : undefined);
      }
      const args = 'args' in field ? (field as GraphQLField<unknown, unknown>).args : [];
      const answers = words((getNamedType(field.type as GraphQLType) as GraphQLNamedType).name);
      for (const argument of args) {
        if (argument.description) continue;
        const owner = idOwner(argument.name);
        if (argument.name === 'id') argument.description = `The id of the ${answers.replace(/ page$/, '')}`;
        else if (argument.name === 'input') argument.description = `What to write: see ${(getNamedType(argument.type) as GraphQLNamedType).name}`;
        else if (argument.name === 'status') argument.description = `Only ${answers.replace(/ page$/, 's')} in this state`;
        else if (ARGUMENTS[argument.name]) argument.description = ARGUMENTS[argument.name];
        else if (owner) argument.description = owner.endsWith('s') && argument.name.endsWith('Ids') ? `The ids of the ${owner}` : `The id of the ${owner}`;
      }
    }
  }
  // Second pass: what is still undescribed borrows from its sibling type (UpdateXInput from CreateXInput, XInput from X).
  for (const type of Object.values(schema.getTypeMap())) {
    if (!isObjectType(type) && !isInputObjectType(type)) continue;
    for (const field of Object.values(type.getFields())) {
      if (field.description) continue;
      for (const siblingName of siblings(type.name)) {
        const sibling = schema.getType(siblingName);
        if (sibling && (isObjectType(sibling) || isInputObjectType(sibling))) field.description ||= sibling.getFields()[field.name]?.description;
      }
    }
  }
  return schema;
}
