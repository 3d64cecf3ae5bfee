import { Field, ID, InputType } from 'type-graphql';
import { IsEnum, IsOptional, IsUUID } from 'class-validator';
import { OptionalNonNull } from '../../common/validation.js';
import { ContactImportKey, ContactImportMode } from './contact-import.entity.js';

/** A new CSV import: the same input on both doors (GraphQL's argument, REST's query string). */
@InputType({ description: 'A CSV import of contacts; its file is sent to uploadUrl (or with POST /api/imports)' })
export class CreateContactImportInput {
  @Field(() => ContactImportMode, { nullable: true, description: 'What a row whose key a contact has does; default upsert' })
  @OptionalNonNull()
  @IsEnum(ContactImportMode)
  mode?: ContactImportMode;

  @Field(() => ContactImportKey, { nullable: true, description: 'Which column says a contact is already there; default phone' })
  @OptionalNonNull()
  @IsEnum(ContactImportKey)
  key?: ContactImportKey;

  @Field(() => ID, { nullable: true, description: 'A static audience of the organization that the imported and updated contacts join' })
  @IsOptional()
  @IsUUID('all', { message: 'audienceId must be a UUID' })
  audienceId?: string | null;
}
