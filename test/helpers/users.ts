import { RequestContext } from '@mikro-orm/core';
import type { Role } from '../../src/common/actor.js';
import { User } from '../../src/modules/auth/user.entity.js';
import { Organization } from '../../src/modules/organizations/organization.entity.js';
import type { GraphQLTestClient, RestClient } from './clients.js';
import type { TestApp, TestOrganization } from './app.js';

export interface TestUser {
  userId: string;
  email: string;
  apiKey: string;
  rest: RestClient;
  graphql: GraphQLTestClient;
}

let counter = 0;

/** Another user of an existing organization (a member by default), with a key and clients that send it. */
export async function addUser(app: TestApp, organization: TestOrganization, role: Role = 'member'): Promise<TestUser> {
  const orm = app.db.database.orm;
  const email = `${role}${++counter}-${Date.now()}@example.test`;
  const { userId, apiKey } = await RequestContext.create(orm.em, async () => {
    const em = orm.em.fork();
    const user = em.create(User, {
      organization: em.getReference(Organization, organization.organizationId),
      email,
      name: `${role} ${counter}`,
      role,
    });
    await em.flush();
    const { secret } = await app.gateway.services.apiKeys.issue(em as never, organization.organizationId, user.id, { name: 'Test key', prefix: 'tag_' });
    return { userId: user.id, apiKey: secret };
  });
  const headers = { 'x-api-key': apiKey };
  return { userId, email, apiKey, rest: app.rest(headers), graphql: app.graphql(headers) };
}

/** The authentication's key lookup: sent or not depending on the key cache (API_KEY_CACHE_MS), so not counted. */
export const KEY_LOOKUP = /from api_keys k join users u on u\.id = k\.user_id/;

/**
 * The SQL statements the app runs while `run` runs (the ORM's connection is shared by every request's
 * fork), without the API key lookup, which the key cache sends or not by timing: what an operation costs.
 */
export async function recordStatements(app: TestApp, run: () => Promise<void>): Promise<string[]> {
  const connection = app.db.database.orm.em.getConnection() as unknown as { executeQuery: (sql: string, ...rest: unknown[]) => Promise<unknown> };
  const original = connection.executeQuery;
  const statements: string[] = [];
  connection.executeQuery = function (this: unknown, sql: string, ...rest: unknown[]) {
    if (!KEY_LOOKUP.test(sql)) statements.push(sql);
    return original.call(this, sql, ...rest);
  };
  try {
    await run();
  } finally {
    connection.executeQuery = original;
  }
  return statements;
}
