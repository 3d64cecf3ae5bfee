import type { EntityManager } from '@mikro-orm/postgresql';
import type { Logger } from 'pino';
import type { Actor } from '../../common/actor.js';
import { AppError } from '../../common/errors.js';
import { containsPattern, sortField, type Page, type PageArgs } from '../../common/pagination.js';
import { sortedPage } from '../../db/keyset.js';
import { isUuid } from '../../db/base.entity.js';
import { readPage } from '../../db/read-model.js';
import { query } from '../../db/sql.js';
import { open, seal } from '../../platform/credentials.js';
import { Organization } from '../organizations/organization.entity.js';
import { authorize } from '../organizations/roles.js';
import { listMcpTools, type McpTarget } from './mcp-client.js';
import { McpServer, McpServerStatus } from './mcp-server.entity.js';
import { assertHeaders, assertToolUrl } from './tool-checks.js';
import type { CreateMcpServerInput, ToolHeaderInput, UpdateMcpServerInput } from './tool.inputs.js';
import { TOOL_LIMITS } from './tool-limits.js';

export const MCP_SERVER_SORT_FIELDS = ['createdAt', 'updatedAt', 'name'] as const;

export interface McpServerOptions {
  credentialsKey: () => Buffer | undefined;
  allowPrivate: boolean;
  /** MCP_TOOLS_REFRESH_MS: a server's tools listed longer ago than this are listed again when an agent next uses them. */
  refreshMs: number;
  logger?: Logger;
}

/**
 * An organization's MCP servers: registered, their tools listed through the official SDK's client
 * (at create, on refresh, and again once MCP_TOOLS_REFRESH_MS old), each listed tool checked as an
 * HTTP tool's parameters are. The auth header's value is sealed under CREDENTIALS_KEY, never shown.
 */
export class McpServerService {
  /** Refreshes in flight, by server id: a burst of calls lists a stale server once. */
  private readonly refreshing = new Map<string, Promise<void>>();

  constructor(
    private readonly em: EntityManager,
    private readonly options: McpServerOptions,
  ) {}

  async list(actor: Actor, args: PageArgs): Promise<Page<McpServer>> {
    const field = sortField(args.sortBy, MCP_SERVER_SORT_FIELDS);
    const { rows: data, meta } = await readPage(
      this.em,
      McpServer,
      { organization: actor.organizationId, ...(args.search ? { name: { $ilike: containsPattern(args.search) } } : {}) },
      sortedPage<McpServer>(args, field),
    );
    return { data, meta };
  }

  async get(actor: Actor, id: string): Promise<McpServer> {
    const server = isUuid(id) ? await this.em.findOne(McpServer, { id, organization: actor.organizationId }) : null;
    if (!server) throw AppError.notFound('MCP server');
    return server;
  }

  /** Checks the URL (address rules), seals the auth header, and lists the server's tools at once (a server that is down is kept, `unavailable`, with the reason). */
  async create(actor: Actor, input: CreateMcpServerInput): Promise<McpServer> {
    authorize(actor, 'tools.manage');
    await assertToolUrl(input.url, this.options.allowPrivate);
    if (input.auth) assertHeaders([input.auth], 'auth');
    const server: string = await this.em.transactional(async (tx) => {
      // The cap is taken under the organization's row lock, so a burst of creates cannot pass it together.
      await tx.execute('select id from organizations where id = ? for update', [actor.organizationId]);
      await this.assertNameFree(actor, input.name, null, tx);
      const held = await tx.count(McpServer, { organization: actor.organizationId });
      if (held >= TOOL_LIMITS.mcpServersPerOrganization)
        throw new AppError('CONFLICT', `An organization may register at most ${TOOL_LIMITS.mcpServersPerOrganization} MCP servers; delete one first`);
      const created = tx.create(McpServer, {
        organization: tx.getReference(Organization, actor.organizationId),
        name: input.name,
        url: input.url,
        ...this.sealedAuth(input.auth ?? null),
      });
      await tx.flush();
      return created.id;
    });
    return this.refreshNow(await this.em.findOneOrFail(McpServer, { id: server }));
  }

  async update(actor: Actor, id: string, input: UpdateMcpServerInput): Promise<McpServer> {
    authorize(actor, 'tools.manage');
    const server = await this.get(actor, id);
    let relist = false;
    if (input.name !== undefined && input.name !== server.name) {
      await this.assertNameFree(actor, input.name, server.id);
      server.name = input.name;
    }
    if (input.url !== undefined) {
      await assertToolUrl(input.url, this.options.allowPrivate);
      relist ||= input.url !== server.url;
      server.url = input.url;
    }
    if (input.auth !== undefined) {
      if (input.auth) assertHeaders([input.auth], 'auth');
      Object.assign(server, this.sealedAuth(input.auth));
      relist = true;
    }
    server.updatedAt = new Date();
    await this.em.flush();
    return relist ? this.refreshNow(server) : server;
  }

  /** Deletes the server; agents that name it keep the entry, and its tools are simply not offered (its id finds nothing). */
  async delete(actor: Actor, id: string): Promise<void> {
    authorize(actor, 'tools.manage');
    const server = await this.get(actor, id);
    await this.em.remove(server).flush();
  }

  /** Lists the server's tools again now (on demand). */
  async refresh(actor: Actor, id: string): Promise<McpServer> {
    authorize(actor, 'tools.manage');
    return this.refreshNow(await this.get(actor, id));
  }

  /**
   * The organization's servers by id as agents use them: a server whose list is older than
   * MCP_TOOLS_REFRESH_MS is listed again in the background (the call goes on with the list it has).
   */
  async serversFor(organizationId: string, ids: readonly string[]): Promise<Map<string, McpServer>> {
    const wanted = ids.filter(isUuid);
    if (wanted.length === 0) return new Map();
    const em = this.em.fork();
    const found = await em.find(McpServer, { organization: organizationId, id: { $in: wanted } }, { populate: ['authEncrypted'] });
    const stale = Date.now() - this.options.refreshMs;
    for (const server of found) {
      if (!server.refreshedAt || server.refreshedAt.getTime() < stale) void this.refreshInBackground(server.id, organizationId);
    }
    return new Map(found.map((server) => [server.id, server]));
  }

  /** The server as the MCP client reaches it, its auth header opened (null when the key does not open it). */
  target(server: McpServer): McpTarget {
    const key = this.options.credentialsKey();
    let auth: McpTarget['auth'] = null;
    if (server.authHeaderName && server.authEncrypted && key) auth = { name: server.authHeaderName, value: open(server.authEncrypted, key) };
    return { url: server.url, auth, allowPrivate: this.options.allowPrivate };
  }

  private refreshInBackground(id: string, organizationId: string): Promise<void> {
    let running = this.refreshing.get(id);
    if (!running) {
      running = (async () => {
        const em = this.em.fork();
        const server = await em.findOne(McpServer, { id, organization: organizationId }, { populate: ['authEncrypted'] });
        if (server) await this.relist(em, server);
      })()
        .catch((error: unknown) =>
          this.options.logger?.warn(
            { mcpServerId: id, err: error instanceof Error ? error.message : String(error) },
            'an MCP server’s tools could not be listed again',
          ),
        )
        .finally(() => this.refreshing.delete(id));
      this.refreshing.set(id, running);
    }
    return running;
  }

  private async refreshNow(server: McpServer): Promise<McpServer> {
    if (server.authHeaderName && !server.authEncrypted) await this.em.populate(server, ['authEncrypted']);
    await this.relist(this.em, server);
    return server;
  }

  /** Lists the tools and records the outcome: ready with them, or unavailable with the reason and none. */
  private async relist(em: EntityManager, server: McpServer): Promise<void> {
    let target: McpTarget;
    try {
      target = this.target(server);
    } catch {
      Object.assign(server, {
        status: McpServerStatus.unavailable,
        tools: [],
        lastError: 'its auth header does not open with the server’s credentials key (the operator’s to fix)',
      });
      server.refreshedAt = new Date();
      await em.flush();
      return;
    }
    const listed = await listMcpTools(target);
    server.refreshedAt = new Date();
    if ('tools' in listed) Object.assign(server, { status: McpServerStatus.ready, tools: listed.tools, lastError: null });
    else Object.assign(server, { status: McpServerStatus.unavailable, tools: [], lastError: listed.error.slice(0, 500) });
    await em.flush();
  }

  private sealedAuth(auth: ToolHeaderInput | null): { authHeaderName: string | null; authEncrypted: string | null } {
    if (!auth) return { authHeaderName: null, authEncrypted: null };
    const key = this.options.credentialsKey();
    if (!key) throw new AppError('CONFLICT', 'An MCP server’s auth header needs CREDENTIALS_KEY: the operator sets it (32 bytes) to seal it');
    return { authHeaderName: auth.name, authEncrypted: seal(auth.value, key) };
  }

  private async assertNameFree(actor: Actor, name: string, except: string | null, em: EntityManager = this.em): Promise<void> {
    const rows = await query<{ id: string }>(
      em,
      `select id from mcp_servers where organization_id = ? and name = ?${except ? ' and id <> ?' : ''}`,
      except ? [actor.organizationId, name, except] : [actor.organizationId, name],
    );
    if (rows.length > 0)
      throw new AppError('CONFLICT', `The organization already has an MCP server named ${name}`, [
        { field: 'name', message: `an MCP server named ${name} exists` },
      ]);
  }
}
