import { IsBoolean, IsObject, IsOptional } from 'class-validator';
import { GraphQLJSONObject } from 'graphql-scalars';
import { Field, InputType, ObjectType, registerEnumType } from 'type-graphql';
import { OptionalNonNull } from '../../../common/validation.js';

export enum AnalysisStatus {
  pending = 'pending',
  completed = 'completed',
  failed = 'failed',
}
registerEnumType(AnalysisStatus, {
  name: 'AnalysisStatus',
  description: 'Where the analysis of an ended call is',
  valuesConfig: {
    pending: { description: 'The conversation ended; the agent’s model has not filled the plan yet' },
    completed: { description: 'The summary and the fields are filled and valid against the schema' },
    failed: { description: 'The model could not fill the plan (its answer was outside the schema twice, or it was unavailable); error says why' },
  },
});

@ObjectType({ description: 'What the agent’s model fills when one of its calls ends' })
export class AnalysisPlan {
  @Field(() => Boolean, { description: 'Whether a short summary of the call is written' })
  summary!: boolean;

  @Field(() => GraphQLJSONObject, { nullable: true, description: 'A JSON Schema (type object) of the fields to extract from each call; null when none' })
  structuredData?: Record<string, unknown> | null;

  /** The top-level fields in the order they were written: jsonb keeps keys in an order of its own, and the CSV's columns follow this one. */
  fields?: string[];
}

@InputType({ description: 'What the agent’s model fills when one of its calls ends: a summary, fields by a JSON Schema, or both' })
export class AnalysisPlanInput {
  @Field(() => Boolean, { nullable: true, description: 'Whether a short summary of the call is written; default true' })
  @OptionalNonNull()
  @IsBoolean()
  summary?: boolean;

  @Field(() => GraphQLJSONObject, {
    nullable: true,
    description:
      'A JSON Schema (draft-07) of the fields to extract: top-level type object with 1 to 50 properties, at most 16 KB and nested at most 5 levels deep; ' +
      'no $ref, $async or $schema; minItems and maxItems at most 100, minLength and maxLength at most 2000; patterns that RE2 can run (no lookarounds or backreferences)',
  })
  @IsOptional()
  @IsObject()
  structuredData?: Record<string, unknown> | null;
}

/** The stored shape of `analysis` on a conversation and its call (jsonb; analyzedAt kept as ISO 8601). */
export interface StoredAnalysis {
  status: AnalysisStatus;
  summary: string | null;
  data: Record<string, unknown> | null;
  error: string | null;
  model: string | null;
  analyzedAt: string | null;
}

@ObjectType({ description: 'What came out of a call: the summary and the fields of its agent’s analysis plan' })
export class CallAnalysis {
  @Field(() => AnalysisStatus, { description: 'pending until the model has answered, then completed or failed' })
  status!: AnalysisStatus;

  @Field(() => String, { nullable: true, description: 'A short summary of the call; null when the plan asks for none, or while pending or failed' })
  summary!: string | null;

  @Field(() => GraphQLJSONObject, {
    nullable: true,
    description: 'The fields extracted, valid against the plan’s structuredData schema; null when it has none, or while pending or failed',
  })
  data!: Record<string, unknown> | null;

  @Field(() => String, { nullable: true, description: 'Why the analysis failed; null otherwise' })
  error!: string | null;

  @Field(() => String, { nullable: true, description: 'The model that filled it (<provider>/<model_name>); null while pending' })
  model!: string | null;

  @Field(() => Date, { nullable: true, description: 'When the analysis was completed or failed (ISO 8601); null while pending' })
  analyzedAt!: string | null;
}
