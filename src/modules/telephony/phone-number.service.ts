import type { EntityManager } from '@mikro-orm/postgresql';
import type { Actor } from '../../common/actor.js';
import { AppError } from '../../common/errors.js';
import { containsPattern, pageMeta, sortField, type Page, type PageArgs } from '../../common/pagination.js';
import { isUuid } from '../../db/base.entity.js';
import { Organization } from '../organizations/organization.entity.js';
import { authorize } from '../organizations/roles.js';
import { CarrierConnection } from './carrier-connection.entity.js';
import { PhoneNumber } from './phone-number.entity.js';
import { Agent } from '../agents/agent.entity.js';
import { CallFlow } from '../programs/call-flow.entity.js';
import type { CreatePhoneNumberInput, UpdatePhoneNumberInput } from './telephony.inputs.js';

export const PHONE_NUMBER_SORT_FIELDS = ['createdAt', 'updatedAt', 'number', 'label'] as const;

/** The numbers an organization owns at its carriers, the caller IDs of its programs. */
export class PhoneNumberService {
  constructor(private readonly em: EntityManager) {}

  /** A page of numbers; `search` matches the number or the label. */
  async list(actor: Actor, args: PageArgs): Promise<Page<PhoneNumber>> {
    const field = sortField(args.sortBy, PHONE_NUMBER_SORT_FIELDS);
    const pattern = args.search ? containsPattern(args.search) : undefined;
    if (args.cursor) throw AppError.badInput([{ field: 'cursor', message: 'phone numbers page by page and limit only (an organization has few)' }]);
    // Managed entities, not readPage: the REST list then replaces each number's carrierConnection with the loaded connection.
    const [data, total] = await this.em.findAndCount(
      PhoneNumber,
      { organization: actor.organizationId, ...(pattern ? { $or: [{ number: { $ilike: pattern } }, { label: { $ilike: pattern } }] } : {}) },
      { orderBy: [{ [field]: args.sortOrder }, { id: 'asc' }], limit: args.limit, offset: (args.page - 1) * args.limit },
    );
    return { data, meta: pageMeta(args.page, args.limit, total) };
  }

  async get(actor: Actor, id: string): Promise<PhoneNumber> {
    const number = isUuid(id) ? await this.em.findOne(PhoneNumber, { id, organization: actor.organizationId }) : null;
    if (!number) throw AppError.notFound('Phone number');
    return number;
  }

  /** A number already in the organization → 409; a carrierConnectionId not of it → 404. */
  async create(actor: Actor, input: CreatePhoneNumberInput): Promise<PhoneNumber> {
    authorize(actor, 'telephony.manage');
    await this.assertFree(actor, input.number);
    const number = this.em.create(PhoneNumber, {
      organization: this.em.getReference(Organization, actor.organizationId),
      number: input.number,
      label: input.label ?? null,
      carrierConnection: await this.connection(actor, input.carrierConnectionId),
    });
    await this.bindInbound(actor, number, input);
    await this.em.flush();
    return number;
  }

  /** Changes the fields sent; null clears label and carrierConnectionId. */
  async update(actor: Actor, id: string, input: UpdatePhoneNumberInput): Promise<PhoneNumber> {
    authorize(actor, 'telephony.manage');
    const number = await this.get(actor, id);
    if (input.number !== undefined && input.number !== number.number) {
      await this.assertFree(actor, input.number);
      number.number = input.number;
    }
    if (input.label !== undefined) number.label = input.label;
    if (input.carrierConnectionId !== undefined) number.carrierConnection = await this.connection(actor, input.carrierConnectionId);
    await this.bindInbound(actor, number, input);
    number.updatedAt = new Date();
    await this.em.flush();
    return number;
  }

  /** Deletes the number; programs that used it as caller ID lose it (a real-carrier program then cannot be activated). */
  async delete(actor: Actor, id: string): Promise<void> {
    authorize(actor, 'telephony.manage');
    const number = await this.get(actor, id);
    await this.em.remove(number).flush();
  }

  /** The organization's numbers by id, in one statement; ids of other organizations are left out. */
  async numbersFor(actor: Actor, ids: readonly string[]): Promise<Map<string, PhoneNumber>> {
    const wanted = ids.filter(isUuid);
    if (wanted.length === 0) return new Map();
    const found = await this.em.find(PhoneNumber, { organization: actor.organizationId, id: { $in: wanted } });
    return new Map(found.map((number) => [number.id, number]));
  }

  /**
   * What the number's inbound calls reach: an agent or a flow of the organization (404 otherwise),
   * never both (400 naming inboundFlowId). Fields left out keep their values; null clears.
   */
  private async bindInbound(actor: Actor, number: PhoneNumber, input: { inboundAgentId?: string | null; inboundFlowId?: string | null }): Promise<void> {
    const agentId = input.inboundAgentId === undefined ? number.inboundAgentId : input.inboundAgentId;
    const flowId = input.inboundFlowId === undefined ? number.inboundFlowId : input.inboundFlowId;
    if (agentId && flowId) {
      throw AppError.badInput([{ field: 'inboundFlowId', message: 'a number answers with an agent or a flow, not both: set the other to null' }]);
    }
    if (input.inboundAgentId && (await this.em.count(Agent, { id: input.inboundAgentId.toLowerCase(), organization: actor.organizationId })) === 0)
      throw AppError.notFound('Agent');
    if (input.inboundFlowId && (await this.em.count(CallFlow, { id: input.inboundFlowId.toLowerCase(), organization: actor.organizationId })) === 0)
      throw AppError.notFound('Call flow');
    number.inboundAgentId = agentId?.toLowerCase() ?? null;
    number.inboundFlowId = flowId?.toLowerCase() ?? null;
  }

  private async connection(actor: Actor, id: string | null | undefined): Promise<CarrierConnection | null> {
    if (!id) return null;
    const connection = await this.em.findOne(CarrierConnection, { id, organization: actor.organizationId });
    if (!connection) throw AppError.notFound('Carrier connection');
    return connection;
  }

  private async assertFree(actor: Actor, number: string): Promise<void> {
    if ((await this.em.count(PhoneNumber, { organization: actor.organizationId, number })) > 0) {
      throw new AppError('CONFLICT', `The number ${number} is already in the organization`);
    }
  }
}
