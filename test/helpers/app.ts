import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import type { DestinationStream } from 'pino';
import { RequestContext } from '@mikro-orm/core';
import { createGateway, type Gateway, type GatewaySeams } from '../../src/app.js';
import { loadConfig, type Config } from '../../src/config.js';
import { createLogger } from '../../src/common/logger.js';
import type { Provisioned } from '../../src/modules/organizations/provisioning.service.js';
import { createTestDatabase, type TestDatabase } from './database.js';
import { GraphQLTestClient, RestClient } from './clients.js';

export const TEST_JWT_SECRET = 'test-secret-that-is-long-enough-for-hs256-signing';

export interface TestOrganization extends Provisioned {
  rest: RestClient;
  graphql: GraphQLTestClient;
  /** Grants credits the operator's way (the service `npm run cli -- credits:add` calls); answers the new balance. */
  grantCredits(amount: number, reason?: string): Promise<number>;
}

export interface TestApp {
  baseUrl: string;
  config: Config;
  gateway: Gateway;
  db: TestDatabase;
  /** Clients with no credentials, or with the headers given. */
  rest(headers?: Record<string, string>): RestClient;
  graphql(headers?: Record<string, string>): GraphQLTestClient;
  /** A new organization with its owner and key, and clients that send that key. */
  organization(name?: string): Promise<TestOrganization>;
  /** Raw SQL against the test database. */
  sql<T = Record<string, unknown>>(query: string, params?: unknown[]): Promise<T[]>;
  close(): Promise<void>;
}

let counter = 0;

/** Boots the real gateway on an ephemeral port over a fresh, migrated database. */
export async function startTestApp(overrides: Partial<Config> = {}, logTo?: DestinationStream, seams: GatewaySeams = {}): Promise<TestApp> {
  const db = await createTestDatabase();
  const config: Config = {
    ...loadConfig({ JWT_SECRET: TEST_JWT_SECRET, DATA_DIR: '/tmp/gateway-test-unused', LOG_LEVEL: 'silent' }),
    nodeEnv: 'test',
    rateLimit: { perMinute: 0, anonymousPerMinute: 0, organizationPerMinute: 0 }, // off unless a test is about it: suites send many requests with one key
    ...overrides,
  };
  const gateway = await createGateway(config, db.database, createLogger(config.logLevel, logTo), seams);
  const server: Server = await new Promise((resolve) => {
    const listening = gateway.app.listen(0, '127.0.0.1', () => resolve(listening));
  });
  gateway.attach(server);
  const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const app: TestApp = {
    baseUrl,
    config,
    gateway,
    db,
    rest: (headers = {}) => new RestClient(baseUrl, headers),
    graphql: (headers = {}) => new GraphQLTestClient(`${baseUrl}/graphql`, headers),
    async organization(name = `Org ${++counter}`) {
      const provisioned = await RequestContext.create(db.database.orm.em, () =>
        gateway.services.provisioning.createOrganization({ name, email: `owner${counter}-${Date.now()}@example.test` }),
      );
      const headers = { 'x-api-key': provisioned.apiKey };
      const grantCredits = async (amount: number, reason?: string) => {
        const grant = await RequestContext.create(db.database.orm.em, () =>
          gateway.services.credits.grant({ organizationId: provisioned.organizationId, amount, reason }),
        );
        return grant.creditBalance;
      };
      return { ...provisioned, rest: app.rest(headers), graphql: app.graphql(headers), grantCredits };
    },
    async sql(query, params = []) {
      return db.database.em
        .fork()
        .getConnection()
        .execute(query, params as never[]) as never;
    },
    async close() {
      gateway.closeStreams();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
      await gateway.stop();
      await db.drop();
    },
  };
  return app;
}
