import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Logger } from 'pino';
import { compileTenantSchema, type TenantValidator } from '../../common/tenant-schema-ajv.js';
import { isUuid } from '../../db/base.entity.js';
import { CredentialsError, open } from '../../platform/credentials.js';
import { saysPolicy } from '../agents/prompt.js';
import { toolRequestContext } from '../agents/templates/call-context.js';
import type { ModelTool } from '../models/model.types.js';
import { sendToolRequest } from './http-tool.js';
import { callMcpTool } from './mcp-client.js';
import type { McpServerService } from './mcp-server.service.js';
import { McpServerStatus } from './mcp-server.entity.js';
import { ToolCallStatus, ToolSource } from './tool-call.entity.js';
import type { ToolCallRecord } from './tool-call.store.js';
import type { AgentToolChoice, ToolSession } from './tool-session.types.js';
import { Tool } from './tool.entity.js';
import { TOOL_LIMITS, TOOL_SCHEMA_LIMITS } from './tool-limits.js';

export interface ToolRunnerOptions {
  credentialsKey: () => Buffer | undefined;
  allowPrivate: boolean;
  logger?: Logger;
}

/** The text of every string in the arguments (what saysPolicy reads), keys included. */
function stringsOf(value: unknown, into: string[] = []): string[] {
  const stack = [value];
  while (stack.length > 0) {
    const current = stack.pop();
    if (typeof current === 'string') into.push(current);
    else if (Array.isArray(current)) stack.push(...current);
    else if (current && typeof current === 'object') {
      for (const [key, inner] of Object.entries(current)) {
        into.push(key);
        stack.push(inner);
      }
    }
  }
  return into;
}

/** What the model is given of an answer: the JSON as it is when it fits, else its text cut to TOOL_LIMITS.modelChars. */
function forModel(answer: unknown, text: string | null, truncated: boolean): Record<string, unknown> {
  const json = typeof answer === 'string' ? answer : JSON.stringify(answer ?? null);
  if (!truncated && json.length <= TOOL_LIMITS.modelChars) return { answer };
  return { answer: (text ?? json).slice(0, TOOL_LIMITS.modelChars), truncated: true };
}

const cut = (text: string | null) => (text === null ? null : text.length > TOOL_LIMITS.recordChars ? `${text.slice(0, TOOL_LIMITS.recordChars)}…` : text);

/**
 * Runs the tools an agent may call, the same in every door and pipeline: each call's arguments are
 * checked against the tool's schema (a problem goes back to the model, nothing is sent) and for the
 * hidden policy (not sent, the model is told), then one request goes out (HTTP: signed, under the
 * address rules and the tool's deadline; MCP: tools/call through the SDK under the same rules), and
 * the answer, or the failure in words the model can apologise with, goes back. Never throws into
 * the model's loop; each call is told to the session as a record.
 */
export class ToolRunner {
  constructor(
    private readonly em: EntityManager,
    private readonly mcpServers: McpServerService,
    private readonly options: ToolRunnerOptions,
  ) {}

  /** The agent's tools for one session, as the model is given them (no tool of another organization; a refused MCP tool left out). */
  async toolsFor(agent: AgentToolChoice, session: ToolSession): Promise<ModelTool[]> {
    const tools: ModelTool[] = [];
    const ids = agent.toolIds.filter(isUuid);
    if (ids.length > 0) {
      const rows = await this.em.fork().find(Tool, { organization: session.organizationId, id: { $in: ids } });
      for (const tool of rows) tools.push(this.httpTool(tool, session));
    }
    if (agent.mcpTools.length > 0) {
      const servers = await this.mcpServers.serversFor(
        session.organizationId,
        agent.mcpTools.map((entry) => entry.serverId),
      );
      for (const entry of agent.mcpTools) {
        const server = servers.get(entry.serverId);
        if (!server || server.status !== McpServerStatus.ready) continue;
        for (const name of entry.names) {
          const listed = server.tools.find((tool) => tool.name === name);
          if (!listed?.inputSchema || listed.refused) continue;
          const target = () => this.mcpServers.target(server);
          tools.push(
            this.tool(
              session,
              { name, source: ToolSource.mcp, toolId: server.id, description: listed.description ?? name, parameters: listed.inputSchema },
              async (args) => {
                const answer = await callMcpTool(target(), name, args, TOOL_LIMITS.defaultTimeoutMs);
                return { ok: answer.ok, statusCode: null, answer: answer.answer, text: answer.text, truncated: false, error: answer.error };
              },
            ),
          );
        }
      }
    }
    // One name, one tool: the agent's save refused clashes; a tool renamed since keeps the first.
    const seen = new Set<string>();
    return tools.filter((tool) => !seen.has(tool.name) && Boolean(seen.add(tool.name)));
  }

  private httpTool(tool: Tool, session: ToolSession): ModelTool {
    return this.tool(
      session,
      { name: tool.name, source: ToolSource.http, toolId: tool.id, description: tool.description, parameters: tool.parameters },
      (args, callId) => this.sendHttp(tool.id, session, tool.name, args, callId),
    );
  }

  /** Read again at call time: the tool may have changed (its URL, its headers) or gone since the session began. */
  private async sendHttp(id: string, session: ToolSession, name: string, args: Record<string, unknown>, callId: string) {
    const tool = await this.em
      .fork()
      .findOne(Tool, { id, organization: session.organizationId }, { populate: ['headersEncrypted', 'secretEncrypted', 'previousSecretEncrypted'] });
    if (!tool)
      return { ok: false, statusCode: null, answer: null, text: null, truncated: false, error: `the tool ${name} is no longer available`, rejected: true };
    const key = this.options.credentialsKey();
    let headers: Record<string, string> = {};
    const secrets: string[] = [];
    try {
      if (!key) throw new CredentialsError('no key');
      if (tool.headersEncrypted) headers = JSON.parse(open(tool.headersEncrypted, key)) as Record<string, string>;
      secrets.push(open(tool.secretEncrypted, key));
      if (tool.previousSecretEncrypted && tool.previousSecretExpiresAt && tool.previousSecretExpiresAt > new Date())
        secrets.push(open(tool.previousSecretEncrypted, key));
    } catch (error) {
      if (!(error instanceof CredentialsError)) throw error;
      this.options.logger?.error(
        { toolId: tool.id },
        'a tool’s secrets do not open with CREDENTIALS_KEY: its calls fail until the operator sets the key they were sealed with',
      );
      return {
        ok: false,
        statusCode: null,
        answer: null,
        text: null,
        truncated: false,
        error: 'the tool cannot be called right now (a configuration problem of the service)',
      };
    }
    const body = JSON.stringify({ tool: tool.name, arguments: args, ...requestContext(session) });
    const answer = await sendToolRequest(
      { url: tool.url, method: tool.method, headers, secrets, timeoutMs: tool.timeoutMs, messageId: callId, body },
      this.options.allowPrivate,
    );
    if (answer.refusedBecause) this.options.logger?.info({ toolId: tool.id, reason: answer.refusedBecause }, 'a tool request was refused: the tool’s address');
    return answer;
  }

  /** A tool as the model is given it: the checks, the send, the record and what the model is told. */
  private tool(
    session: ToolSession,
    spec: { name: string; source: ToolSource; toolId: string; description: string; parameters: Record<string, unknown> },
    send: (
      args: Record<string, unknown>,
      callId: string,
    ) => Promise<{
      ok: boolean;
      statusCode: number | null;
      answer: unknown;
      text: string | null;
      truncated: boolean;
      error: string | null;
      rejected?: boolean;
    }>,
  ): ModelTool {
    let validator: Promise<TenantValidator> | null = null;
    return {
      name: spec.name,
      description: spec.description,
      parameters: spec.parameters,
      execute: async (raw) => {
        const started = performance.now();
        const id = randomUUID();
        const args = raw && typeof raw === 'object' && !Array.isArray(raw) ? raw : {};
        const finish = async (status: ToolCallStatus, fields: Partial<ToolCallRecord>, output: Record<string, unknown>) => {
          const now = new Date();
          const record: ToolCallRecord = {
            id,
            organizationId: session.organizationId,
            conversationId: session.conversationId,
            agentId: session.agentId,
            callId: session.callId,
            sequence: 0,
            afterSequence: 0,
            tool: spec.name,
            source: spec.source,
            toolId: spec.toolId,
            arguments: args,
            status,
            statusCode: null,
            durationMs: Math.round(performance.now() - started),
            answer: null,
            error: null,
            createdAt: now,
            updatedAt: now,
            ...fields,
          };
          try {
            await session.onRecord(record);
          } catch (error) {
            this.options.logger?.error({ toolCallId: id, err: error instanceof Error ? error.message : String(error) }, 'a tool call could not be recorded');
          }
          return output;
        };
        const refuse = (error: string, fields: Partial<ToolCallRecord> = {}) =>
          finish(ToolCallStatus.rejected, { error, ...fields }, { error: `${error}. Nothing was sent.` });
        if (JSON.stringify(args).length > TOOL_LIMITS.argumentsChars)
          return refuse(`the arguments are longer than ${TOOL_LIMITS.argumentsChars} characters`, { arguments: null });
        let problem;
        try {
          validator ??= compileTenantSchema(spec.parameters, TOOL_SCHEMA_LIMITS);
          problem = (await validator)(args);
        } catch {
          return refuse(`the tool's parameters can no longer be checked: it cannot be called`);
        }
        if (problem)
          return refuse(
            `the arguments do not match the tool's parameters: ${problem.path || 'the arguments'} ${problem.message}; call it again with arguments that match, or tell the caller`,
          );
        if (saysPolicy(stringsOf(args).join('\n'), session.guardPolicy, session.callerSaid())) {
          this.options.logger?.warn(
            { agentId: session.agentId, tool: spec.name },
            'the model wrote the hidden policy into a tool’s arguments: the request was not sent',
          );
          return refuse('the arguments repeated the hidden policy, which is never shared with a tool or a caller', { arguments: null });
        }
        const answer = await send(args, id);
        if (answer.rejected) return refuse(answer.error ?? 'the tool is not available');
        if (!answer.ok) {
          return finish(
            ToolCallStatus.failed,
            { statusCode: answer.statusCode, answer: cut(answer.text), error: answer.error },
            { error: `${answer.error}. Apologise to the caller that it could not be done right now` },
          );
        }
        return finish(
          ToolCallStatus.succeeded,
          { statusCode: answer.statusCode, answer: cut(answer.text) },
          { ...(answer.statusCode !== null ? { status: answer.statusCode } : {}), ...forModel(answer.answer, answer.text, answer.truncated) },
        );
      },
    };
  }
}

/** The request body's call, contact, conversation and agent (agents/templates toolRequestContext), also for a session without a context. */
function requestContext(session: ToolSession) {
  if (session.context) return { ...toolRequestContext(session.context), conversationId: session.conversationId ?? session.context.conversationId };
  return { call: null, contact: null, conversationId: session.conversationId, agentId: session.agentId };
}
