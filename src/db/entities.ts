import { Agent } from '../modules/agents/agent.entity.js';
import { Conversation } from '../modules/agents/conversation.entity.js';
import { Message } from '../modules/agents/message.entity.js';
import { BusinessEntity } from '../modules/contacts/business-entity.entity.js';
import { Audience, AudienceMember } from '../modules/contacts/audience.entity.js';
import { Contact } from '../modules/contacts/contact.entity.js';
import { DoNotCallEntry } from '../modules/contacts/do-not-call.entity.js';
import { ContactImport } from '../modules/contacts/contact-import.entity.js';
import { Event } from '../modules/events/event.entity.js';
import { ApiKey } from '../modules/auth/api-key.entity.js';
import { User } from '../modules/auth/user.entity.js';
import { IdempotencyKey } from '../modules/idempotency/idempotency-key.entity.js';
import { KnowledgeBase } from '../modules/knowledge/knowledge-base.entity.js';
import { KnowledgeChunk } from '../modules/knowledge/knowledge-chunk.entity.js';
import { KnowledgeDocument } from '../modules/knowledge/knowledge-document.entity.js';
import { Organization } from '../modules/organizations/organization.entity.js';
import { Team, TeamMembership } from '../modules/organizations/team.entity.js';
import { CreditLedgerEntry } from '../modules/organizations/credit-ledger.entity.js';

import { CallFlow } from '../modules/programs/call-flow.entity.js';
import { ContactTrigger } from '../modules/programs/contact-trigger.entity.js';
import { Execution } from '../modules/programs/execution.entity.js';
import { ExecutionContact } from '../modules/programs/execution-contact.entity.js';
import { Program } from '../modules/programs/program.entity.js';
import { Call } from '../modules/telephony/call.entity.js';
import { CallRecording } from '../modules/recordings/recording.entity.js';
import { CarrierConnection } from '../modules/telephony/carrier-connection.entity.js';
import { PhoneNumber } from '../modules/telephony/phone-number.entity.js';

import { WebhookDelivery } from '../modules/webhooks/webhook-delivery.entity.js';
import { WebhookEndpoint } from '../modules/webhooks/webhook-endpoint.entity.js';
import { Tool } from '../modules/tools/tool.entity.js';
import { McpServer } from '../modules/tools/mcp-server.entity.js';
import { ToolCall } from '../modules/tools/tool-call.entity.js';

/** Every entity, listed once; the ORM and the migration generator both read this list. */
export const ENTITIES = [
  Organization,
  Event,
  User,
  Team,
  TeamMembership,
  ApiKey,
  Agent,
  Conversation,
  Message,
  KnowledgeBase,
  KnowledgeDocument,
  KnowledgeChunk,
  Contact,
  DoNotCallEntry,
  ContactImport,
  Audience,
  AudienceMember,
  CallFlow,
  Program,
  Execution,
  ExecutionContact,
  ContactTrigger,
  BusinessEntity,
  IdempotencyKey,
  CreditLedgerEntry,
  CarrierConnection,
  PhoneNumber,
  Call,
  CallRecording,
  WebhookEndpoint,
  WebhookDelivery,
  Tool,
  McpServer,
  ToolCall,
];
