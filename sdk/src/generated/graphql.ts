/** Internal type. DO NOT USE DIRECTLY. */
type Exact<T extends { [key: string]: unknown }> = { [K in keyof T]: T[K] };
/** Internal type. DO NOT USE DIRECTLY. */
export type Incremental<T> = T | { [P in keyof T]?: P extends ' $fragmentName' | '__typename' ? T[P] : never };
import type { DocumentTypeDecoration } from '@graphql-typed-document-node/core';
/** Where an agent is in its life: draft → active by activate; archived when deleted */
export type AgentStatus =
  /** Activated; activating again is CONFLICT */
  | 'active'
  /** Deleted (the row is kept, with deletedAt); left out of default lists */
  | 'archived'
  /** Created, not yet activated */
  | 'draft';

/** Whether an audience lists its members or is a filter over the contacts (a segment) */
export type AudienceKind =
  /** Its members are the contacts its filter matches */
  | 'dynamic'
  /** Its members are the contacts added to it */
  | 'static';

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

/** Where a program is in its life: draft → active by activate; archived when deleted */
export type ProgramStatus =
  /** Activated; executions can start (campaign) or triggers fire (live) */
  | 'active'
  /** Deleted; kept for its executions and the credit ledger */
  | 'archived'
  /** Created, not yet activated; no execution can start */
  | 'draft';

/** The direction of a list’s order */
export type SortOrder =
  /** Smallest (oldest, A) first */
  | 'asc'
  /** Largest (newest, Z) first */
  | 'desc';

export type MeQueryVariables = Exact<{ [key: string]: never; }>;


export type MeQuery = { me: { id: string, email: string, name: string, organizationId: string, organization: { id: string, name: string } } };

export type AgentsQueryVariables = Exact<{
  page?: number | null | undefined;
  limit?: number | null | undefined;
  search?: string | null | undefined;
  sortBy?: string | null | undefined;
  sortOrder?: SortOrder | null | undefined;
  status?: AgentStatus | null | undefined;
  cursor?: string | null | undefined;
}>;


export type AgentsQuery = { agents: { data: Array<{ id: string, name: string, description: string | null, status: AgentStatus, version: number, createdAt: string, updatedAt: string, modelConfig: { model: string } }>, meta: { page: number, limit: number, total: number, totalPages: number, hasNextPage: boolean, hasPreviousPage: boolean, nextCursor: string | null, prevCursor: string | null, lastCursor: string | null } } };

export type ProgramsQueryVariables = Exact<{
  page?: number | null | undefined;
  limit?: number | null | undefined;
  search?: string | null | undefined;
  cursor?: string | null | undefined;
}>;


export type ProgramsQuery = { programs: { data: Array<{ id: string, name: string, status: ProgramStatus, executions: Array<{ id: string, status: ExecutionStatus, totalContacts: number, contactsCompleted: number, contactsFailed: number, contactsPending: number, contactsInProgress: number, creditsSpent: number }> }>, meta: { page: number, limit: number, total: number, totalPages: number, hasNextPage: boolean, hasPreviousPage: boolean, nextCursor: string | null, prevCursor: string | null, lastCursor: string | null } } };

export type ExecutionsQueryVariables = Exact<{
  programId: string | number;
}>;


export type ExecutionsQuery = { executions: Array<{ id: string, status: ExecutionStatus, totalContacts: number, contactsCompleted: number, contactsFailed: number, contactsPending: number, contactsInProgress: number, creditsSpent: number, actualStartAt: string | null, actualEndAt: string | null }> };

export type ContactsQueryVariables = Exact<{
  limit?: number | null | undefined;
  search?: string | null | undefined;
  sortBy?: string | null | undefined;
  sortOrder?: SortOrder | null | undefined;
  cursor?: string | null | undefined;
}>;


export type ContactsQuery = { contacts: { data: Array<{ id: string, name: string | null, phone: string, timeZone: string | null, attributes: Record<string, unknown>, optedOut: boolean }>, meta: { total: number, hasNextPage: boolean, nextCursor: string | null } } };

export type CreateSegmentMutationVariables = Exact<{
  name: string;
  filter: Record<string, unknown>;
}>;


export type CreateSegmentMutation = { createAudience: { id: string, name: string, kind: AudienceKind, filter: Record<string, unknown> | null, contactCount: number } };

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

export const MeDocument = new TypedDocumentString(`
    query Me {
  me {
    id
    email
    name
    organizationId
    organization {
      id
      name
    }
  }
}
    `) as unknown as TypedDocumentString<MeQuery, MeQueryVariables>;
export const AgentsDocument = new TypedDocumentString(`
    query Agents($page: Int, $limit: Int, $search: String, $sortBy: String, $sortOrder: SortOrder, $status: AgentStatus, $cursor: String) {
  agents(
    page: $page
    limit: $limit
    search: $search
    sortBy: $sortBy
    sortOrder: $sortOrder
    status: $status
    cursor: $cursor
  ) {
    data {
      id
      name
      description
      status
      version
      modelConfig {
        model
      }
      createdAt
      updatedAt
    }
    meta {
      page
      limit
      total
      totalPages
      hasNextPage
      hasPreviousPage
      nextCursor
      prevCursor
      lastCursor
    }
  }
}
    `) as unknown as TypedDocumentString<AgentsQuery, AgentsQueryVariables>;
export const ProgramsDocument = new TypedDocumentString(`
    query Programs($page: Int, $limit: Int, $search: String, $cursor: String) {
  programs(page: $page, limit: $limit, search: $search, cursor: $cursor) {
    data {
      id
      name
      status
      executions {
        id
        status
        totalContacts
        contactsCompleted
        contactsFailed
        contactsPending
        contactsInProgress
        creditsSpent
      }
    }
    meta {
      page
      limit
      total
      totalPages
      hasNextPage
      hasPreviousPage
      nextCursor
      prevCursor
      lastCursor
    }
  }
}
    `) as unknown as TypedDocumentString<ProgramsQuery, ProgramsQueryVariables>;
export const ExecutionsDocument = new TypedDocumentString(`
    query Executions($programId: ID!) {
  executions(programId: $programId) {
    id
    status
    totalContacts
    contactsCompleted
    contactsFailed
    contactsPending
    contactsInProgress
    creditsSpent
    actualStartAt
    actualEndAt
  }
}
    `) as unknown as TypedDocumentString<ExecutionsQuery, ExecutionsQueryVariables>;
export const ContactsDocument = new TypedDocumentString(`
    query Contacts($limit: Int, $search: String, $sortBy: String, $sortOrder: SortOrder, $cursor: String) {
  contacts(
    limit: $limit
    search: $search
    sortBy: $sortBy
    sortOrder: $sortOrder
    cursor: $cursor
  ) {
    data {
      id
      name
      phone
      timeZone
      attributes
      optedOut
    }
    meta {
      total
      hasNextPage
      nextCursor
    }
  }
}
    `) as unknown as TypedDocumentString<ContactsQuery, ContactsQueryVariables>;
export const CreateSegmentDocument = new TypedDocumentString(`
    mutation CreateSegment($name: String!, $filter: JSONObject!) {
  createAudience(input: {name: $name, filter: $filter}) {
    id
    name
    kind
    filter
    contactCount
  }
}
    `) as unknown as TypedDocumentString<CreateSegmentMutation, CreateSegmentMutationVariables>;