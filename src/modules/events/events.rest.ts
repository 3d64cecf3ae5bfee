import { Event } from './event.entity.js';
import { routesUsing } from '../../rest/routes.js';
import { ref } from '../../rest/json-schema.js';
import { EventListArgs } from './event.args.js';
import type { EventService } from './event.service.js';

/** The services this route table calls. */
export type RouteServices = { events: EventService };
const defineRoute = routesUsing<RouteServices>();

/** The events API: the outbox, read. */
export const eventRoutes = [
  defineRoute({
    method: 'get',
    path: '/events',
    operationId: 'listEvents',
    summary: 'A page of events, newest first: {data, meta}; filter by type (one or more) and createdAfter/createdBefore',
    description:
      'Every change worth telling, written in the same transaction as the change. type takes one or more known event types (repeat the parameter or separate with commas); ' +
      'an unknown one is 400. createdAfter is inclusive and createdBefore exclusive (ISO 8601 date-times). search matches the type; sortBy is createdAt. ' +
      'Events are kept EVENTS_RETENTION_DAYS days (default 30).',
    tag: 'Events',
    query: EventListArgs,
    response: ref('EventPage'),
    async handler({ actor, query, services, presenter }) {
      return presenter.listAnswer('EventPage', Event, {
        json: (row) => services.events.listJson(actor, query, row),
        rows: () => services.events.list(actor, query),
      });
    },
  }),
  defineRoute({
    method: 'get',
    path: '/events/{id}',
    operationId: 'getEvent',
    summary: 'Read an event',
    tag: 'Events',
    response: ref('Event'),
    errors: [404],
    async handler({ actor, params, services, presenter }) {
      return presenter.present('Event', await services.events.get(actor, params.id!));
    },
  }),
];
