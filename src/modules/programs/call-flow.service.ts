import type { EntityManager } from '@mikro-orm/postgresql';
import { sortedPage } from '../../db/keyset.js';
import type { Actor } from '../../common/actor.js';
import { AppError, type FieldError } from '../../common/errors.js';
import { isUuid } from '../../db/base.entity.js';
import { Agent } from '../agents/agent.entity.js';
import { Organization } from '../organizations/organization.entity.js';
import { CallFlow } from './call-flow.entity.js';
import type { CallFlowEdgeInput, CallFlowNodeInput, CreateCallFlowInput, UpdateCallFlowInput } from './call-flow.inputs.js';
import type { FlowEdge, FlowNode } from './call-flow.types.js';
import { FlowNodeType } from './program.enums.js';
import { E164 } from '../telephony/telephony.inputs.js';
import { EDGE_CONDITION_HINT, isEdgeCondition } from './edge-condition.js';
import { authorize } from '../organizations/roles.js';
import { nameOrDescriptionMatch, sortField, type Page, type PageArgs, type JsonPage } from '../../common/pagination.js';
import { type ListRead, readJsonList, readList, type RowJson } from '../../db/read-model.js';

export const CALL_FLOW_SORT_FIELDS = ['createdAt', 'updatedAt', 'name'] as const;

/** What a node needs to be spoken on a call: a say its words, an ask its agent, a transfer its E.164 target. */
function nodeErrors(node: CallFlowNodeInput, index: number): FieldError[] {
  if (node.type === FlowNodeType.say && !node.label?.trim())
    return [{ field: `nodes.${index}.label`, message: `say node ${node.id} needs a label: the text it speaks` }];
  if (node.type === FlowNodeType.ask && !node.agentId)
    return [{ field: `nodes.${index}.agentId`, message: `ask node ${node.id} needs an agentId: the agent that listens and answers` }];
  if (node.type === FlowNodeType.transfer && !E164.test(node.transferTo ?? '')) {
    return [{ field: `nodes.${index}.transferTo`, message: `transfer node ${node.id} needs transferTo in E.164 form, e.g. +14155550100` }];
  }
  return [];
}

/** The rules across nodes and edges that a single field's validator cannot see; errors name the field. */
export function flowGraphErrors(nodes: CallFlowNodeInput[], edges: CallFlowEdgeInput[]): FieldError[] {
  const errors: FieldError[] = [];
  const seen = new Set<string>();
  nodes.forEach((node, index) => {
    if (seen.has(node.id)) errors.push({ field: `nodes.${index}.id`, message: `node id ${node.id} is used twice` });
    seen.add(node.id);
  });
  const starts = nodes.filter((node) => node.type === FlowNodeType.start).length;
  if (starts !== 1) errors.push({ field: 'nodes', message: `a flow needs exactly one start node; it has ${starts}` });
  nodes.forEach((node, index) => errors.push(...nodeErrors(node, index)));
  edges.forEach((edge, index) => {
    if (edge.condition && !isEdgeCondition(edge.condition)) {
      errors.push({ field: `edges.${index}.condition`, message: `edge ${edge.from} → ${edge.to}: ${EDGE_CONDITION_HINT}` });
    }
    if (!seen.has(edge.from)) errors.push({ field: `edges.${index}.from`, message: `no node ${edge.from}` });
    if (!seen.has(edge.to)) errors.push({ field: `edges.${index}.to`, message: `no node ${edge.to}` });
  });
  return errors;
}

/** Call flows of the caller's organization. */
export class CallFlowService {
  constructor(
    private readonly em: EntityManager,
    /** Called in the transaction that changes a flow's graph, after the change: refuses (409) one that would leave an active program unable to run. */
    private readonly onGraphChanged?: (em: EntityManager, actor: Actor, flowId: string) => Promise<void>,
  ) {}

  /** A page of call flows; `search` matches name or description. */
  async list(actor: Actor, args: PageArgs): Promise<Page<CallFlow>> {
    return readList(this.em, this.listRead(actor, args));
  }

  /** The same page as `list`, each row as the JSON text `row` builds (the REST door's answer, src/rest/present-sql.ts). */
  async listJson(actor: Actor, args: PageArgs, row: RowJson): Promise<JsonPage> {
    return readJsonList(this.em, this.listRead(actor, args), row);
  }

  /** What a page of `list` reads. */
  private listRead(actor: Actor, args: PageArgs): ListRead<CallFlow> {
    const field = sortField(args.sortBy, CALL_FLOW_SORT_FIELDS);
    return {
      entity: CallFlow,
      where: {
        organization: actor.organizationId,
        ...nameOrDescriptionMatch(args.search),
      },
      options: sortedPage(args, field),
      page: args.page,
      limit: args.limit,
    };
  }

  async get(actor: Actor, id: string, em: EntityManager = this.em): Promise<CallFlow> {
    const flow = isUuid(id) ? await em.findOne(CallFlow, { id, organization: actor.organizationId }) : null;
    if (!flow) throw AppError.notFound('Call flow');
    return flow;
  }

  /** The flows with these ids, of the caller's organization, in one statement. */
  async flowsFor(actor: Actor, ids: readonly string[]): Promise<Map<string, CallFlow>> {
    const flows = await this.em.find(CallFlow, { organization: actor.organizationId, id: { $in: ids.filter(isUuid) } });
    return new Map(flows.map((flow) => [flow.id, flow]));
  }

  async create(actor: Actor, input: CreateCallFlowInput): Promise<CallFlow> {
    authorize(actor, 'flows.manage');
    const graph = await this.checkGraph(actor, input.nodes, input.edges ?? []);
    const flow = this.em.create(CallFlow, {
      organization: this.em.getReference(Organization, actor.organizationId),
      name: input.name,
      description: input.description ?? null,
      ...graph,
    });
    await this.em.flush();
    return flow;
  }

  /** Changes the fields that are sent; nodes and edges are checked together, whichever was sent. */
  async update(actor: Actor, id: string, input: UpdateCallFlowInput): Promise<CallFlow> {
    authorize(actor, 'flows.manage');
    return this.em.transactional(async (tx) => {
      const flow = await this.get(actor, id, tx);
      const graph = input.nodes !== undefined || input.edges !== undefined;
      if (graph) Object.assign(flow, await this.checkGraph(actor, input.nodes ?? flow.nodes, input.edges ?? flow.edges));
      if (input.name !== undefined) flow.name = input.name;
      if (input.description !== undefined) flow.description = input.description;
      flow.updatedAt = new Date();
      await tx.flush();
      if (graph) await this.onGraphChanged?.(tx, actor, flow.id);
      return flow;
    });
  }

  /** Programs that used the flow keep their record with no flow (the foreign key sets null). */
  async delete(actor: Actor, id: string): Promise<void> {
    authorize(actor, 'flows.manage');
    const flow = await this.get(actor, id);
    await this.em.remove(flow).flush();
  }

  private async checkGraph(actor: Actor, nodes: CallFlowNodeInput[], edges: CallFlowEdgeInput[]): Promise<{ nodes: FlowNode[]; edges: FlowEdge[] }> {
    const errors = flowGraphErrors(nodes, edges);
    if (errors.length > 0) throw AppError.badInput(errors);
    const agentIds = [...new Set(nodes.flatMap((node) => (node.agentId ? [node.agentId.toLowerCase()] : [])))];
    if (agentIds.length > 0) {
      const found = await this.em.count(Agent, { id: { $in: agentIds }, organization: actor.organizationId });
      if (found !== agentIds.length) throw AppError.notFound('Agent');
    }
    return {
      nodes: nodes.map((node) => ({
        id: node.id,
        type: node.type,
        agentId: node.agentId?.toLowerCase() ?? null,
        label: node.label ?? null,
        transferTo: node.transferTo ?? null,
      })),
      edges: edges.map((edge) => ({ from: edge.from, to: edge.to, condition: edge.condition ?? null })),
    };
  }
}
