import { CursorPageArgs, type Page } from '../../common/pagination.js';
import type { Presenter } from '../../rest/present.js';
import { routesUsing } from '../../rest/routes.js';
import { arrayOf, objectOf, ref, refWithout } from '../../rest/json-schema.js';
import type { Actor } from '../../common/actor.js';
import { ConversationListArgs, MessageArgs, StartConversationArgs } from './agent.args.js';
import type { Conversation } from './conversation.entity.js';
import type { ConversationService } from './conversation.service.js';

/** The services this route table calls. */
export type RouteServices = { conversations: ConversationService };
const defineRoute = routesUsing<RouteServices>();

const TAG = 'Agents';

/** How many of its last messages a REST conversation embeds; the rest are paged at /conversations/{id}/messages. */
export const EMBEDDED_MESSAGES = 20;

/** A conversation as REST shows it: its GraphQL type's fields plus its last messages, in order. */
const CONVERSATION_WITH_MESSAGES = {
  allOf: [ref('Conversation'), { type: 'object', properties: { messages: arrayOf(ref('Message')) }, required: ['messages'] }],
};

/**
 * REST shows a conversation with every field of its GraphQL type and its last EMBEDDED_MESSAGES
 * messages (messageCount tells how many there are). Those of all conversations come in one statement.
 */
async function present(services: RouteServices, presenter: Presenter, actor: Actor, conversations: Conversation[]): Promise<unknown[]> {
  const messages = await services.conversations.lastMessagesFor(
    actor,
    conversations.map((conversation) => conversation.id),
    EMBEDDED_MESSAGES,
  );
  return conversations.map((conversation) => ({
    ...(presenter.present('Conversation', conversation) as Record<string, unknown>),
    messages: (messages.get(conversation.id) ?? []).map((message) => presenter.present('Message', message)),
  }));
}

/** List items leave out the messages (read one conversation for them) and the agent (the path names it; `agentId` stays). */
const LIST_OMITS = ['messages', 'agent'];

function presentPage(presenter: Presenter, page: Page<Conversation>) {
  const data = page.data.map((conversation) => {
    const item = presenter.present('Conversation', Object.create(conversation, { messages: { value: [] } }));
    for (const field of LIST_OMITS) delete (item as Record<string, unknown>)[field];
    return item;
  });
  return { data, meta: page.meta };
}

/** Endpoints 6–7 of the interface, plus start, read and end. */
export const conversationRoutes = [
  defineRoute({
    method: 'get',
    path: '/agents/{agentId}/conversations',
    operationId: 'listConversations',
    summary: "List an agent's conversations, without their messages and agent (read one conversation for those)",
    tag: TAG,
    query: ConversationListArgs,
    response: objectOf({ data: arrayOf(refWithout('Conversation', LIST_OMITS)), meta: ref('PageMeta') }),
    errors: [404],
    async handler({ actor, params, query, services, presenter }) {
      return presentPage(presenter, await services.conversations.list(actor, params.agentId!, query));
    },
  }),
  defineRoute({
    method: 'post',
    path: '/agents/{agentId}/conversations',
    operationId: 'startConversation',
    summary: 'Start a conversation (pending until its first message), with an optional title',
    tag: TAG,
    status: 201,
    body: StartConversationArgs,
    response: CONVERSATION_WITH_MESSAGES,
    errors: [404, 409],
    idempotent: true,
    async handler({ actor, params, body, services, presenter }) {
      const conversation = await services.conversations.start(actor, params.agentId!, body);
      return (await present(services, presenter, actor, [conversation]))[0];
    },
  }),
  defineRoute({
    method: 'get',
    path: '/conversations/{id}',
    operationId: 'getConversation',
    summary: `Read a conversation with its last ${EMBEDDED_MESSAGES} messages, in order`,
    tag: TAG,
    response: CONVERSATION_WITH_MESSAGES,
    errors: [404],
    async handler({ actor, params, services, presenter }) {
      const conversation = await services.conversations.get(actor, params.id!);
      return (await present(services, presenter, actor, [conversation]))[0];
    },
  }),
  defineRoute({
    method: 'get',
    path: '/conversations/{conversationId}/messages',
    operationId: 'listMessages',
    summary: "A page of a conversation's messages, in order",
    tag: TAG,
    query: CursorPageArgs,
    response: ref('MessagePage'),
    errors: [404],
    async handler({ actor, params, query, services, presenter }) {
      const page = await services.conversations.messagePage(actor, params.conversationId!, query);
      return { data: page.data.map((message) => presenter.present('Message', message)), meta: page.meta };
    },
  }),
  defineRoute({
    method: 'post',
    path: '/conversations/{conversationId}/messages',
    operationId: 'sendMessage',
    summary: 'Send a message; the message and the reply are stored in order',
    tag: TAG,
    body: MessageArgs,
    response: ref('MessageReply'),
    errors: [404, 409, 503],
    async handler({ actor, params, body, services, presenter }) {
      return presenter.present('MessageReply', await services.conversations.sendMessage(actor, params.conversationId!, body.message, body.variables));
    },
  }),
  defineRoute({
    method: 'post',
    path: '/conversations/{id}/end',
    operationId: 'endConversation',
    summary: 'End a conversation and evaluate its resolution criteria',
    tag: TAG,
    response: CONVERSATION_WITH_MESSAGES,
    errors: [404, 409, 503],
    async handler({ actor, params, services, presenter }) {
      const conversation = await services.conversations.end(actor, params.id!);
      return (await present(services, presenter, actor, [conversation]))[0];
    },
  }),
];
