import type { EntityManager } from '@mikro-orm/postgresql';
import type { Actor } from '../../common/actor.js';
import { AppError } from '../../common/errors.js';
import { nameOrDescriptionMatch, sortField, type Page, type PageArgs } from '../../common/pagination.js';
import { sortedPage } from '../../db/keyset.js';
import { isUuid } from '../../db/base.entity.js';
import { readPage } from '../../db/read-model.js';
import { query } from '../../db/sql.js';
import { open, seal } from '../../platform/credentials.js';
import { Organization } from '../organizations/organization.entity.js';
import { authorize } from '../organizations/roles.js';
import { newWebhookSecret, ROTATION_OVERLAP_MS, secretHint } from '../webhooks/webhook-secret.js';
import { assertHeaders, assertParameters, assertToolName, assertToolUrl } from './tool-checks.js';
import { Tool, ToolMethod, ToolWithSecret } from './tool.entity.js';
import type { CreateToolInput, ToolHeaderInput, UpdateToolInput } from './tool.inputs.js';
import { TOOL_LIMITS } from './tool-limits.js';

export const TOOL_SORT_FIELDS = ['createdAt', 'updatedAt', 'name'] as const;

export interface ToolOptions {
  /** CREDENTIALS_KEY, read when needed (unset: no tool can be created). */
  credentialsKey: () => Buffer | undefined;
  /** TOOLS_ALLOW_PRIVATE. */
  allowPrivate: boolean;
  clock?: () => Date;
}

/**
 * An organization's HTTP tools. Header values and the signing secret are write-once: sealed under
 * CREDENTIALS_KEY; the secret is answered only by create and rotate, the headers never again.
 */
export class ToolService {
  constructor(
    private readonly em: EntityManager,
    private readonly options: ToolOptions,
  ) {}

  /** A page of tools; `search` matches the name or the description. */
  async list(actor: Actor, args: PageArgs): Promise<Page<Tool>> {
    const field = sortField(args.sortBy, TOOL_SORT_FIELDS);
    const { rows: data, meta } = await readPage(
      this.em,
      Tool,
      { organization: actor.organizationId, ...nameOrDescriptionMatch(args.search) },
      sortedPage<Tool>(args, field),
    );
    return { data, meta };
  }

  async get(actor: Actor, id: string): Promise<Tool> {
    const tool = isUuid(id) ? await this.em.findOne(Tool, { id, organization: actor.organizationId }) : null;
    if (!tool) throw AppError.notFound('Tool');
    return tool;
  }

  /** Checks the name, the parameters (bounded), the URL (address rules) and the headers; seals the headers and a new signing secret, answered here only. */
  async create(actor: Actor, input: CreateToolInput): Promise<ToolWithSecret> {
    authorize(actor, 'tools.manage');
    const key = this.requireKey();
    assertToolName(input.name);
    await assertParameters(input.parameters);
    if (input.headers) assertHeaders(input.headers);
    await assertToolUrl(input.url, this.options.allowPrivate);
    const secret = newWebhookSecret();
    // The cap is taken under the organization's row lock, so a burst of creates cannot pass it together.
    const tool = await this.em.transactional(async (tx) => {
      await tx.execute('select id from organizations where id = ? for update', [actor.organizationId]);
      await this.assertNameFree(actor, input.name, null, tx);
      const held = await tx.count(Tool, { organization: actor.organizationId });
      if (held >= TOOL_LIMITS.toolsPerOrganization)
        throw new AppError('CONFLICT', `An organization may hold at most ${TOOL_LIMITS.toolsPerOrganization} tools; delete one first`);
      const created = tx.create(Tool, {
        organization: tx.getReference(Organization, actor.organizationId),
        name: input.name,
        description: input.description,
        parameters: input.parameters,
        url: input.url,
        method: input.method ?? ToolMethod.POST,
        ...sealedHeaders(input.headers ?? [], key),
        timeoutMs: input.timeoutMs ?? TOOL_LIMITS.defaultTimeoutMs,
        secretEncrypted: seal(secret, key),
        secretHint: secretHint(secret),
      });
      await tx.flush();
      return created;
    });
    return Object.assign(tool, { secret }) as ToolWithSecret;
  }

  /** Changes the fields sent, each checked as on create; headers sent replace them all. */
  async update(actor: Actor, id: string, input: UpdateToolInput): Promise<Tool> {
    authorize(actor, 'tools.manage');
    const tool = await this.get(actor, id);
    if (input.name !== undefined && input.name !== tool.name) {
      assertToolName(input.name);
      await this.assertNameFree(actor, input.name, tool.id);
      tool.name = input.name;
    }
    if (input.parameters !== undefined) {
      await assertParameters(input.parameters);
      tool.parameters = input.parameters;
    }
    if (input.url !== undefined) {
      await assertToolUrl(input.url, this.options.allowPrivate);
      tool.url = input.url;
    }
    if (input.headers !== undefined) {
      assertHeaders(input.headers);
      Object.assign(tool, sealedHeaders(input.headers, this.requireKey()));
    }
    if (input.description !== undefined) tool.description = input.description;
    if (input.method !== undefined) tool.method = input.method;
    if (input.timeoutMs !== undefined) tool.timeoutMs = input.timeoutMs;
    tool.updatedAt = new Date();
    await this.em.flush();
    return tool;
  }

  /**
   * Deletes the tool. An agent that is not archived and lists it keeps it: 409 naming those agents
   * (take the tool off them first); archived agents have it taken off their lists in the same transaction.
   */
  async delete(actor: Actor, id: string): Promise<void> {
    authorize(actor, 'tools.manage');
    const tool = await this.get(actor, id);
    await this.em.transactional(async (tx) => {
      const users = await query<{ id: string; name: string; status: string }>(
        tx,
        `select id, name, status from agents where organization_id = ? and tool_ids @> ?::jsonb order by name, id for update`,
        [actor.organizationId, JSON.stringify([tool.id])],
      );
      const live = users.filter((agent) => agent.status !== 'archived');
      if (live.length > 0) {
        throw new AppError(
          'CONFLICT',
          `The tool ${tool.name} is used by ${live.map((agent) => `${agent.name} (${agent.id})`).join(', ')}: take it off their toolIds first`,
          live.map((agent) => ({ field: `agents.${agent.id}`, message: `${agent.name} lists the tool in its toolIds` })),
        );
      }
      await query(tx, `update agents set tool_ids = tool_ids - ? where organization_id = ? and tool_ids @> ?::jsonb`, [
        tool.id,
        actor.organizationId,
        JSON.stringify([tool.id]),
      ]);
      await query(tx, 'delete from tools where id = ? and organization_id = ?', [tool.id, actor.organizationId]);
    });
  }

  /** A new signing secret, answered once; the old one keeps signing alongside it for 24 hours. */
  async rotateSecret(actor: Actor, id: string): Promise<ToolWithSecret> {
    authorize(actor, 'tools.manage');
    const tool = isUuid(id) ? await this.em.findOne(Tool, { id, organization: actor.organizationId }, { populate: ['secretEncrypted'] }) : null;
    if (!tool) throw AppError.notFound('Tool');
    const key = this.requireKey();
    // A wrong key (CredentialsError, 503) changes nothing rather than seal a secret no other one shares a key with.
    open(tool.secretEncrypted, key);
    const secret = newWebhookSecret();
    const now = this.options.clock?.() ?? new Date();
    tool.previousSecretEncrypted = tool.secretEncrypted;
    tool.previousSecretExpiresAt = new Date(now.getTime() + ROTATION_OVERLAP_MS);
    tool.secretEncrypted = seal(secret, key);
    tool.secretHint = secretHint(secret);
    tool.updatedAt = new Date();
    await this.em.flush();
    return Object.assign(tool, { secret }) as ToolWithSecret;
  }

  /** The organization's tools by id, in one statement; ids of other organizations are left out. */
  async toolsFor(organizationId: string, ids: readonly string[]): Promise<Map<string, Tool>> {
    const wanted = ids.filter(isUuid);
    if (wanted.length === 0) return new Map();
    const found = await this.em.find(Tool, { organization: organizationId, id: { $in: wanted } });
    return new Map(found.map((tool) => [tool.id, tool]));
  }

  private async assertNameFree(actor: Actor, name: string, except: string | null, em: EntityManager = this.em): Promise<void> {
    const clash = await em.findOne(Tool, { organization: actor.organizationId, name, ...(except ? { id: { $ne: except } } : {}) }, { fields: ['id'] });
    if (clash) throw new AppError('CONFLICT', `The organization already has a tool named ${name}`, [{ field: 'name', message: `a tool named ${name} exists` }]);
  }

  private requireKey(): Buffer {
    const key = this.options.credentialsKey();
    if (!key)
      throw new AppError('CONFLICT', 'Tools need CREDENTIALS_KEY: the operator sets it (32 bytes, e.g. `openssl rand -base64 32`) to seal their secrets');
    return key;
  }
}

/** The header names to show and their values sealed as one JSON object (null without headers). */
export function sealedHeaders(headers: ToolHeaderInput[], key: Buffer): { headerNames: string[]; headersEncrypted: string | null } {
  if (headers.length === 0) return { headerNames: [], headersEncrypted: null };
  return {
    headerNames: headers.map((header) => header.name),
    headersEncrypted: seal(JSON.stringify(Object.fromEntries(headers.map((header) => [header.name, header.value]))), key),
  };
}
