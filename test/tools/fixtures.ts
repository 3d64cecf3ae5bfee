import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:net';
import type { Config } from '../../src/config.js';
import { startTestApp, type TestApp, type TestOrganization } from '../helpers/app.js';

/** A gateway with CREDENTIALS_KEY whose tools may reach loopback (TOOLS_ALLOW_PRIVATE=true) unless told otherwise. */
export function startToolsApp(overrides: Partial<Config> = {}, logTo?: Parameters<typeof startTestApp>[1]): Promise<TestApp> {
  return startTestApp(
    {
      telephony: { twilioApiBaseUrl: 'https://api.twilio.com', credentialsKey: randomBytes(32) },
      tools: { allowPrivate: true, mcpRefreshMs: 600_000 },
      ...overrides,
    },
    logTo,
  );
}

export const LOOKUP_PARAMETERS = {
  type: 'object',
  properties: { orderId: { type: 'string', pattern: '^[A-Z][0-9]+$', maxLength: 20 } },
  required: ['orderId'],
  additionalProperties: false,
};

/** An HTTP tool of `org` at `url`: the created answer (with its secret). */
export async function createTool(org: TestOrganization, url: string, fields: Record<string, unknown> = {}) {
  const res = await org.rest.post('/api/tools', {
    name: 'lookup_order',
    description: 'Look up an order by its id',
    parameters: LOOKUP_PARAMETERS,
    url,
    ...fields,
  });
  if (res.status !== 201) throw new Error(`tool not created: ${JSON.stringify(res.body)}`);
  return res.body as { id: string; name: string; secret: string; secretHint: string };
}

/** An active builtin/echo agent of `org` listing the tools given. */
export async function toolAgent(org: TestOrganization, fields: Record<string, unknown>): Promise<string> {
  const res = await org.rest.post('/api/agents', {
    name: 'Order desk',
    instructions: 'You look orders up for callers.',
    modelConfig: { model: 'builtin/echo' },
    ...fields,
  });
  if (res.status !== 201) throw new Error(`agent not created: ${JSON.stringify(res.body)}`);
  expect((await org.rest.post(`/api/agents/${res.body.id}/activate`)).status).toBe(200);
  return res.body.id as string;
}

/** A loopback port nothing listens on (bound, then closed). */
export async function closedPort(): Promise<number> {
  const server: Server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  await new Promise((resolve) => server.close(resolve));
  return port;
}
