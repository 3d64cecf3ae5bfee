import type { Page } from '../../common/pagination.js';
import type { Presenter } from '../../rest/present.js';
import { arrayOf, defineRoute, objectOf, ref, refWithout } from '../../rest/routes.js';
import type { Services } from '../../services.js';
import type { Actor } from '../../common/actor.js';
import { ConversationListArgs, MessageArgs, StartConversationArgs } from './agent.args.js';
import type { Conversation } from './conversation.entity.js';

const TAG = 'Agents';

/**
 * REST shows a conversation with every field of its GraphQL type, its agent and messages included.
 * The messages of all conversations come in one statement; each view inherits from its entity
 * (Object.create) so the entity's getters still answer.
 */
async function present(services: Services, presenter: Presenter, actor: Actor, conversations: Conversation[]): Promise<unknown[]> {
  const messages = await services.conversations.messagesFor(actor, conversations.map((conversation) => conversation.id));
  return conversations.map((conversation) =>
    presenter.present('Conversation', Object.create(conversation, { messages: { value: messages.get(conversation.id) ?? [] } })),
  );
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
    response: ref('Conversation'),
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
    summary: 'Read a conversation with its messages, in order',
    tag: TAG,
    response: ref('Conversation'),
    errors: [404],
    async handler({ actor, params, services, presenter }) {
      const conversation = await services.conversations.get(actor, params.id!);
      return (await present(services, presenter, actor, [conversation]))[0];
    },
  }),
  defineRoute({
    method: 'post',
    path: '/conversations/{id}/messages',
    operationId: 'sendMessage',
    summary: 'Send a message; the message and the reply are stored in order',
    tag: TAG,
    body: MessageArgs,
    response: ref('MessageReply'),
    errors: [404, 409, 503],
    async handler({ actor, params, body, services, presenter }) {
      return presenter.present('MessageReply', await services.conversations.sendMessage(actor, params.id!, body.message));
    },
  }),
  defineRoute({
    method: 'post',
    path: '/conversations/{id}/end',
    operationId: 'endConversation',
    summary: 'End a conversation and evaluate its resolution criteria',
    tag: TAG,
    response: ref('Conversation'),
    errors: [404, 409, 503],
    async handler({ actor, params, services, presenter }) {
      const conversation = await services.conversations.end(actor, params.id!);
      return (await present(services, presenter, actor, [conversation]))[0];
    },
  }),
];
