import type { Actor } from '../../common/actor.js';
import { PageArgs } from '../../common/pagination.js';
import { routesUsing } from '../../rest/routes.js';
import { ref } from '../../rest/json-schema.js';
import type { Program } from './program.entity.js';
import { CreateProgramInput, UpdateProgramInput } from './program.inputs.js';
import type { CallFlowService } from './call-flow.service.js';
import type { CarrierConnectionService } from '../telephony/carrier-connection.service.js';
import type { ConversationService } from '../agents/conversation.service.js';
import type { ExecutionService } from './execution.service.js';
import type { PhoneNumberService } from '../telephony/phone-number.service.js';
import type { ProgramService } from './program.service.js';

/** What showing a program's relations inline reads (the triggers' routes show them too). */
export type ProgramRelationServices = {
  callFlows: CallFlowService;
  carrierConnections: CarrierConnectionService;
  conversations: ConversationService;
  executions: ExecutionService;
  phoneNumbers: PhoneNumberService;
};

/** The services this route table calls. */
export type RouteServices = ProgramRelationServices & { programs: ProgramService };
const defineRoute = routesUsing<RouteServices>();

/**
 * Flow, agent, audience and caller ID (with its carrier connection) of the programs, inline as this door shows them: the same per-relation
 * batches GraphQL's loaders use, for managed programs and a list page's read objects alike.
 */
export async function showRelations(services: ProgramRelationServices, actor: Actor, programs: Program[]): Promise<void> {
  const ids = (refs: ({ id: string } | null)[]) => [...new Set(refs.flatMap((ref) => (ref ? [ref.id] : [])))];
  const flows = await services.callFlows.flowsFor(actor, ids(programs.map((program) => program.flow)));
  const agents = await services.conversations.agentsFor(actor, ids(programs.map((program) => program.agent)));
  const audiences = await services.executions.audiencesFor(actor, ids(programs.map((program) => program.audience)));
  const numbers = await services.phoneNumbers.numbersFor(actor, ids(programs.map((program) => program.fromNumber)));
  const connections = await services.carrierConnections.connectionsFor(actor, ids([...numbers.values()].map((number) => number.carrierConnection)));
  for (const program of programs) {
    if (program.flow) program.flow = flows.get(program.flow.id) ?? null;
    if (program.agent) program.agent = agents.get(program.agent.id) ?? null;
    if (program.audience) program.audience = audiences.get(program.audience.id) ?? null;
    if (program.fromNumber) program.fromNumber = numbers.get(program.fromNumber.id) ?? null;
    if (program.fromNumber?.carrierConnection) program.fromNumber.carrierConnection = connections.get(program.fromNumber.carrierConnection.id) ?? null;
  }
}

/** Programs: not in the interface's table; the REST body shows flow, agent and audience inline. */
export const programRoutes = [
  defineRoute({
    method: 'get',
    path: '/programs',
    operationId: 'listPrograms',
    summary: 'A page of programs: {data, meta}; search matches name or description',
    tag: 'Programs',
    query: PageArgs,
    response: ref('ProgramPage'),
    async handler({ actor, query, services, presenter }) {
      const page = await services.programs.list(actor, query);
      await showRelations(services, actor, page.data);
      return presenter.present('ProgramPage', page);
    },
  }),
  defineRoute({
    method: 'post',
    path: '/programs',
    operationId: 'createProgram',
    summary: 'Create a draft program (a campaign over an audience, or a live program with liveTrigger)',
    tag: 'Programs',
    body: CreateProgramInput,
    status: 201,
    response: ref('Program'),
    errors: [404],
    async handler({ actor, body, services, presenter }) {
      const program = await services.programs.create(actor, body);
      await showRelations(services, actor, [program]);
      return presenter.present('Program', program);
    },
  }),
  defineRoute({
    method: 'get',
    path: '/programs/{id}',
    operationId: 'getProgram',
    summary: 'Read a program',
    tag: 'Programs',
    response: ref('Program'),
    errors: [404],
    async handler({ actor, params, services, presenter }) {
      const program = await services.programs.get(actor, params.id!);
      await showRelations(services, actor, [program]);
      return presenter.present('Program', program);
    },
  }),
  defineRoute({
    method: 'put',
    path: '/programs/{id}',
    operationId: 'updateProgram',
    summary: 'Change the fields that are sent; the result is checked as a whole, and an active program as activation checks it (409 naming what is missing)',
    tag: 'Programs',
    body: UpdateProgramInput,
    response: ref('Program'),
    errors: [404, 409],
    async handler({ actor, params, body, services, presenter }) {
      const program = await services.programs.update(actor, params.id!, body);
      await showRelations(services, actor, [program]);
      return presenter.present('Program', program);
    },
  }),
  defineRoute({
    method: 'post',
    path: '/programs/{id}/activate',
    operationId: 'activateProgram',
    summary:
      'draft → active; from any other state 409, and 409 naming what a program that cannot run lacks (its carrier, its agents: active, their providers configured)',
    tag: 'Programs',
    response: ref('Program'),
    errors: [404, 409],
    async handler({ actor, params, services, presenter }) {
      const program = await services.programs.activate(actor, params.id!);
      await showRelations(services, actor, [program]);
      return presenter.present('Program', program);
    },
  }),
  defineRoute({
    method: 'delete',
    path: '/programs/{id}',
    operationId: 'deleteProgram',
    summary: 'Delete a program and its executions; 409 while one of them is not finished',
    tag: 'Programs',
    status: 204,
    errors: [404, 409],
    async handler({ actor, params, services }) {
      await services.programs.delete(actor, params.id!);
    },
  }),
];
