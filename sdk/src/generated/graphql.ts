/** Internal type. DO NOT USE DIRECTLY. */
type Exact<T extends { [key: string]: unknown }> = { [K in keyof T]: T[K] };
/** Internal type. DO NOT USE DIRECTLY. */
export type Incremental<T> = T | { [P in keyof T]?: P extends ' $fragmentName' | '__typename' ? T[P] : never };
import type { DocumentTypeDecoration } from '@graphql-typed-document-node/core';
export type AgentStatus =
  | 'active'
  | 'archived'
  | 'draft';

export type ExecutionStatus =
  | 'cancelled'
  | 'completed'
  | 'paused'
  | 'paused_no_credits'
  | 'paused_threshold'
  | 'running'
  | 'scheduled'
  | 'stopped';

export type ProgramStatus =
  | 'active'
  | 'archived'
  | 'draft';

export type SortOrder =
  | 'asc'
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
}>;


export type AgentsQuery = { agents: { data: Array<{ id: string, name: string, description: string | null, status: AgentStatus, version: number, createdAt: string, updatedAt: string, modelConfig: { model: string } }>, meta: { page: number, limit: number, total: number, totalPages: number, hasNextPage: boolean, hasPreviousPage: boolean } } };

export type ProgramsQueryVariables = Exact<{
  page?: number | null | undefined;
  limit?: number | null | undefined;
  search?: string | null | undefined;
}>;


export type ProgramsQuery = { programs: { data: Array<{ id: string, name: string, status: ProgramStatus, executions: Array<{ id: string, status: ExecutionStatus, totalContacts: number, contactsCompleted: number, contactsFailed: number, contactsPending: number, contactsInProgress: number, creditsSpent: number }> }>, meta: { page: number, limit: number, total: number, totalPages: number, hasNextPage: boolean, hasPreviousPage: boolean } } };

export type ExecutionsQueryVariables = Exact<{
  programId: string | number;
}>;


export type ExecutionsQuery = { executions: Array<{ id: string, status: ExecutionStatus, totalContacts: number, contactsCompleted: number, contactsFailed: number, contactsPending: number, contactsInProgress: number, creditsSpent: number, actualStartAt: string | null, actualEndAt: string | null }> };

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
    query Agents($page: Int, $limit: Int, $search: String, $sortBy: String, $sortOrder: SortOrder, $status: AgentStatus) {
  agents(
    page: $page
    limit: $limit
    search: $search
    sortBy: $sortBy
    sortOrder: $sortOrder
    status: $status
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
    }
  }
}
    `) as unknown as TypedDocumentString<AgentsQuery, AgentsQueryVariables>;
export const ProgramsDocument = new TypedDocumentString(`
    query Programs($page: Int, $limit: Int, $search: String) {
  programs(page: $page, limit: $limit, search: $search) {
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