import { Field, Int, ObjectType } from 'type-graphql';
import { createPageType } from '../../common/pagination.js';
import { DoNotCallEntry } from './do-not-call.entity.js';

export const DoNotCallPage = createPageType(DoNotCallEntry, 'DoNotCallPage');

@ObjectType({ description: 'A row of an import that was not taken, and why' })
export class DoNotCallRejectedRow {
  @Field(() => Int, { description: 'Its line in the CSV, from 1 (the header is line 1 when there is one)' })
  line!: number;

  @Field({ description: 'Why it was not taken' })
  reason!: string;
}

@ObjectType({ description: 'A good row that added nothing: its number repeats an earlier row or is already on the list' })
export class DoNotCallSkippedRow {
  @Field(() => Int, { description: 'Its line in the CSV, from 1' })
  line!: number;

  @Field({ description: 'The number, E.164' })
  phone!: string;

  @Field({ description: 'Why it added nothing' })
  reason!: string;
}

@ObjectType({ description: 'What a do-not-call import did: the good rows were added, each other row is reported with its line' })
export class DoNotCallImportResult {
  @Field(() => Int, { description: 'Numbers added to the list' })
  added!: number;

  @Field(() => [DoNotCallSkippedRow], { description: 'Good rows merged into an entry that already was there (repeated in the file, or already on the list)' })
  skipped!: DoNotCallSkippedRow[];

  @Field(() => [DoNotCallRejectedRow], { description: 'Bad rows, in line order, none of them added' })
  rejected!: DoNotCallRejectedRow[];
}
