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

export const BusinessEntityPage = createPageType(BusinessEntity, 'BusinessEntityPage');
