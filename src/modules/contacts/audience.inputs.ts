import { ArrayMaxSize, ArrayMinSize, IsArray, IsOptional, IsUUID, ValidateBy, type ValidationOptions } from 'class-validator';
// The decorator's own file (see contact.inputs.ts).
import { JSONSchema } from 'class-validator-jsonschema/build/decorators.js';
import { GraphQLJSONObject } from 'graphql-scalars';
import { Field, ID, InputType } from 'type-graphql';
import { NamedRules, OptionalNonNull } from '../../common/validation.js';
import { SEGMENT_LIMITS, segmentFilterErrors, type SegmentFilter } from './segment-filter.js';

export const FILTER_DESCRIPTION =
  `A segment's filter: {field, op, value}, or {all: [...]}, {any: [...]}, {not: ...} of them; ops eq, in, prefix, exists, before, after; ` +
  `fields name, phone, timeZone, createdAt, optedOut, attributes.<key>. At most ${SEGMENT_LIMITS.conditions} conditions, ` +
  `${SEGMENT_LIMITS.depth} levels, ${SEGMENT_LIMITS.bytes} bytes (docs/campaigns.md)`;
const FILTER_SCHEMA = () => ({ type: 'object' as const, description: FILTER_DESCRIPTION, additionalProperties: true });

/** A segment filter within the grammar and its limits; the message names the first wrong places (`filter.all.0.op …`). */
function IsSegmentFilter(options?: ValidationOptions): PropertyDecorator {
  return ValidateBy(
    {
      name: 'isSegmentFilter',
      validator: {
        validate: (value: unknown) => segmentFilterErrors(value).length === 0,
        defaultMessage: (args) =>
          segmentFilterErrors(args?.value)
            .map((error) => error.message)
            .join('; '),
      },
    },
    options,
  );
}

@InputType({ description: 'A new audience: static (members added to it) or, with a filter, dynamic (a segment)' })
export class CreateAudienceInput {
  @Field({ description: '1 to 255 characters' })
  @NamedRules.name()
  name!: string;

  @Field(() => String, { nullable: true, description: 'At most 2000 characters' })
  @IsOptional()
  @NamedRules.description()
  description?: string | null;

  @Field(() => GraphQLJSONObject, { nullable: true, description: `Makes the audience dynamic. ${FILTER_DESCRIPTION}` })
  @JSONSchema(FILTER_SCHEMA)
  @IsOptional()
  @IsSegmentFilter()
  filter?: SegmentFilter | null;
}

@InputType({ description: 'Changes to an audience; fields left out keep their values' })
export class UpdateAudienceInput {
  @Field({ nullable: true })
  @OptionalNonNull()
  @NamedRules.name()
  name?: string;

  @Field(() => String, { nullable: true, description: 'null removes the description' })
  @IsOptional()
  @NamedRules.description()
  description?: string | null;

  @Field(() => GraphQLJSONObject, { nullable: true, description: `A dynamic audience's new filter (a static audience has none: 409). ${FILTER_DESCRIPTION}` })
  @JSONSchema(FILTER_SCHEMA)
  @OptionalNonNull()
  @IsSegmentFilter()
  filter?: SegmentFilter;
}

/** A filter to count before it is saved (REST body; GraphQL's segmentPreview takes it as its `filter` argument). */
@InputType({ description: 'A segment filter to count without saving it' })
export class SegmentPreviewInput {
  @Field(() => GraphQLJSONObject, { description: `The filter to count, as a segment's. ${FILTER_DESCRIPTION}` })
  @JSONSchema(FILTER_SCHEMA)
  @IsSegmentFilter()
  filter!: SegmentFilter;
}

/** REST body of the member routes; GraphQL takes the same list as the `contactIds` argument. */
@InputType({ description: 'Contacts to add to or remove from an audience' })
export class AudienceMembersInput {
  @Field(() => [ID], { description: '1 to 1000 contact ids of the organization' })
  @IsUUID('all', { each: true, message: 'each contactId must be a UUID' })
  @ArrayMaxSize(1000)
  @ArrayMinSize(1)
  @IsArray()
  contactIds!: string[];
}
