import DataLoader from 'dataloader';
import type { Actor } from '../../common/actor.js';
import type { Page } from '../../common/pagination.js';
import type { Contact } from '../contacts/contact.entity.js';
import type { Conversation } from '../agents/conversation.entity.js';
import type { Execution } from '../programs/execution.entity.js';
import type { CallPageArgs } from './call.args.js';
import type { Call } from './call.entity.js';
import type { CallService } from './call.service.js';

type Pages = (actor: Actor, ids: readonly string[], args: CallPageArgs) => Promise<Map<string, Page<Call>>>;

/** Per-request batches for Execution.calls, Contact.calls, Call.execution and Call.contact: one statement per relation (and per page arguments). */
export class CallLoaders {
  readonly executions: DataLoader<string, Execution | null>;
  readonly contacts: DataLoader<string, Contact | null>;
  readonly conversations: DataLoader<string, Conversation | null>;
  readonly byId: DataLoader<string, Call | null>;
  private readonly pages = new Map<string, DataLoader<string, Page<Call>>>();

  constructor(
    private readonly calls: CallService,
    private readonly actor: Actor,
  ) {
    this.executions = new DataLoader(async (ids) => {
      const found = await calls.executionsFor(actor, ids);
      return ids.map((id) => found.get(id) ?? null);
    });
    this.contacts = new DataLoader(async (ids) => {
      const found = await calls.contactsFor(actor, ids);
      return ids.map((id) => found.get(id) ?? null);
    });
    this.conversations = new DataLoader(async (ids) => {
      const found = await calls.conversationsFor(actor, ids);
      return ids.map((id) => found.get(id) ?? null);
    });
    this.byId = new DataLoader(async (ids) => {
      const found = await calls.callsFor(actor, ids);
      return ids.map((id) => found.get(id) ?? null);
    });
  }

  ofExecution(executionId: string, args: CallPageArgs): Promise<Page<Call>> {
    return this.page('execution', (actor, ids, pageArgs) => this.calls.pagesForExecutions(actor, ids, pageArgs), executionId, args);
  }

  ofContact(contactId: string, args: CallPageArgs): Promise<Page<Call>> {
    return this.page('contact', (actor, ids, pageArgs) => this.calls.pagesForContacts(actor, ids, pageArgs), contactId, args);
  }

  private page(parent: string, load: Pages, parentId: string, args: CallPageArgs): Promise<Page<Call>> {
    const key = `${parent}|${args.status ?? ''}|${args.page}|${args.limit}|${args.cursor ?? ''}`;
    let loader = this.pages.get(key);
    if (!loader) {
      loader = new DataLoader(async (ids) => {
        const byParent = await load(this.actor, ids, args);
        return ids.map((id) => byParent.get(id)!);
      });
      this.pages.set(key, loader);
    }
    return loader.load(parentId);
  }
}

declare module '../../graphql/context.js' {
  interface GraphQLLoaders {
    calls: CallLoaders;
  }
}
