import { Field, Int, ObjectType } from 'type-graphql';
import { createPageType } from '../../common/pagination.js';
import { Audience } from './audience.entity.js';
import { BusinessEntity } from './business-entity.entity.js';
import { Contact } from './contact.entity.js';

export const ContactPage = createPageType(Contact, 'ContactPage');
export const AudiencePage = createPageType(Audience, 'AudiencePage');

@ObjectType({ description: 'The answer to an import: how many contacts were written' })
export class ImportContactsResult {
  @Field(() => Int)
  imported!: number;
}

@ObjectType({ description: 'How many contacts a segment filter matches now, counted without saving it' })
export class SegmentPreview {
  @Field(() => Int, { description: 'Contacts of the organization the filter matches now: what a segment saved with it would count as its contactCount' })
  contactCount!: number;
}

export const BusinessEntityPage = createPageType(BusinessEntity, 'BusinessEntityPage');
