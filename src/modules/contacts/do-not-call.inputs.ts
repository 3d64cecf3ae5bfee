import { IsOptional, IsString, Length, Matches, MaxLength, MinLength } from 'class-validator';
import { Field, InputType } from 'type-graphql';
import { E164 } from './contact.inputs.js';

/** The most numbers one import takes (the same bound as a contacts import). */
export const DO_NOT_CALL_IMPORT_MAX_ROWS = 10_000;
/** The most characters of CSV one import takes: 10000 rows of a number and a short note. */
export const DO_NOT_CALL_IMPORT_MAX_CHARS = 1_000_000;

@InputType({ description: 'A number to add to the do-not-call list' })
export class AddDoNotCallInput {
  @Field({ description: 'E.164: + and 7 to 15 digits' })
  @Matches(E164, { message: 'phone must be an E.164 number such as +14155550100' })
  @IsString()
  phone!: string;

  @Field(() => String, { nullable: true, description: 'Why, 1 to 255 characters' })
  @IsOptional()
  @Length(1, 255)
  @IsString()
  note?: string | null;
}

@InputType({ description: 'A CSV of numbers to add to the do-not-call list' })
export class ImportDoNotCallInput {
  @Field({
    description:
      'CSV text, one number per line: a first line naming a `phone` (or `number`) column is a header, and a `note` column is kept; ' +
      'without a header the first column is the number and the second the note. At most 10000 rows and 1000000 characters',
  })
  @MaxLength(DO_NOT_CALL_IMPORT_MAX_CHARS)
  @MinLength(1)
  @IsString()
  csv!: string;
}
