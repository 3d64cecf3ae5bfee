import { IsOptional, IsString, IsUUID } from 'class-validator';
import { JSONSchema } from 'class-validator-jsonschema/build/decorators.js';
import { GraphQLJSONObject } from 'graphql-scalars';
import { Field, ID, InputType } from 'type-graphql';
import { IsTemplateValues, TEMPLATE_VALUES_SCHEMA } from '../agents/templates/template-values.js';

@InputType({ description: 'A web call to start: the agent a person will talk to from a browser tab' })
export class CreateWebCallInput {
  @Field(() => ID, { description: 'A streaming or speech-to-speech agent of the organization (draft or active)' })
  @IsUUID(undefined, { message: 'agentId must be a UUID' })
  @IsString()
  agentId!: string;

  @Field(() => GraphQLJSONObject, {
    nullable: true,
    description: 'Values of the agent’s variables for this call: at most 50, each a string, number or boolean of at most 1000 characters',
  })
  @JSONSchema(TEMPLATE_VALUES_SCHEMA)
  @IsOptional()
  @IsTemplateValues()
  variables?: Record<string, unknown> | null;
}
