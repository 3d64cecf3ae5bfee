import { PageArgs } from '../../common/pagination.js';
import { defineRoute, ref } from '../../rest/routes.js';
import { CreateProgramInput, UpdateProgramInput } from './program.inputs.js';

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
      await services.programs.populate(page.data);
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
      await services.programs.populate([program]);
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
      await services.programs.populate([program]);
      return presenter.present('Program', program);
    },
  }),
  defineRoute({
    method: 'put',
    path: '/programs/{id}',
    operationId: 'updateProgram',
    summary: 'Change the fields that are sent; the result is checked as a whole',
    tag: 'Programs',
    body: UpdateProgramInput,
    response: ref('Program'),
    errors: [404],
    async handler({ actor, params, body, services, presenter }) {
      const program = await services.programs.update(actor, params.id!, body);
      await services.programs.populate([program]);
      return presenter.present('Program', program);
    },
  }),
  defineRoute({
    method: 'post',
    path: '/programs/{id}/activate',
    operationId: 'activateProgram',
    summary: 'draft → active; from any other state 409',
    tag: 'Programs',
    response: ref('Program'),
    errors: [404, 409],
    async handler({ actor, params, services, presenter }) {
      const program = await services.programs.activate(actor, params.id!);
      await services.programs.populate([program]);
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
