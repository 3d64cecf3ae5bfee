import { Type } from 'class-transformer';
import { ArrayMaxSize, IsArray, IsEnum, IsInt, IsObject, IsOptional, IsString, Length, Matches, Max, MaxLength, Min, ValidateNested } from 'class-validator';
import { GraphQLJSONObject } from 'graphql-scalars';
import { Field, InputType, Int } from 'type-graphql';
import { OptionalNonNull, Rules } from '../../common/validation.js';
import { ToolMethod } from './tool.entity.js';
import { HEADER_NAME, TOOL_LIMITS } from './tool-limits.js';

@InputType({ description: 'A header an HTTP tool (or an MCP server) sends; its value is sealed and never shown again' })
export class ToolHeaderInput {
  @Field({ description: 'An HTTP header name (at most 64 characters); not one the gateway sets itself (content-type, host, webhook-*)' })
  @Matches(HEADER_NAME, { message: 'name must be an HTTP header name of at most 64 characters' })
  @IsString()
  name!: string;

  @Field({ description: `At most ${TOOL_LIMITS.headerValueChars} characters, no line breaks` })
  @Matches(/^[^\r\n\0]*$/, { message: 'value must not hold line breaks' })
  @Length(1, TOOL_LIMITS.headerValueChars)
  @IsString()
  value!: string;
}

const URL_DESCRIPTION =
  'https URL (at most 2048 characters) the request goes to; it must not resolve to a private, loopback or link-local address (http and those only with TOOLS_ALLOW_PRIVATE=true)';

/** The field rules create and update share. */
const ToolRules = {
  name: () => Rules(Length(1, 64), IsString()),
  description: () => Rules(Length(1, 1000), IsString()),
  parameters: () => IsObject({ message: 'parameters must be a JSON Schema object' }),
  url: () => Rules(Length(1, 2048), IsString()),
  method: () => IsEnum(ToolMethod, { message: 'method must be POST, PUT or PATCH' }),
  headers: () =>
    Rules(
      ValidateNested({ each: true }),
      Type(() => ToolHeaderInput),
      ArrayMaxSize(TOOL_LIMITS.headers),
      IsArray(),
    ),
  timeoutMs: () => Rules(Max(TOOL_LIMITS.maxTimeoutMs), Min(100), IsInt()),
};

@InputType({ description: 'A new HTTP tool; its signing secret is in the answer, and only there' })
export class CreateToolInput {
  @Field({ description: '1 to 64 letters, digits, _ or -; unique in the organization; not end_call, reach_resolution, opt_out, transfer_call or send_digits' })
  @ToolRules.name()
  name!: string;

  @Field({ description: 'What the model is told the tool does: 1 to 1000 characters' })
  @ToolRules.description()
  description!: string;

  @Field(() => GraphQLJSONObject, {
    description: 'A JSON Schema of type object for the arguments: at most 5 levels, 50 properties, no $ref (docs/tools.md#parameters)',
  })
  @ToolRules.parameters()
  parameters!: Record<string, unknown>;

  @Field({ description: URL_DESCRIPTION })
  @ToolRules.url()
  url!: string;

  @Field(() => ToolMethod, { nullable: true, description: 'Default POST' })
  @OptionalNonNull()
  @ToolRules.method()
  method?: ToolMethod;

  @Field(() => [ToolHeaderInput], { nullable: true, description: `At most ${TOOL_LIMITS.headers}; their values are sealed and never shown again` })
  @OptionalNonNull()
  @ToolRules.headers()
  headers?: ToolHeaderInput[];

  @Field(() => Int, {
    nullable: true,
    description: `The deadline of the whole exchange in milliseconds: 100 to ${TOOL_LIMITS.maxTimeoutMs}, default ${TOOL_LIMITS.defaultTimeoutMs}`,
  })
  @OptionalNonNull()
  @ToolRules.timeoutMs()
  timeoutMs?: number;
}

@InputType({ description: 'Changes to an HTTP tool; fields left out keep their values. headers, when sent, replace them all' })
export class UpdateToolInput {
  @Field({ nullable: true })
  @OptionalNonNull()
  @ToolRules.name()
  name?: string;

  @Field({ nullable: true })
  @OptionalNonNull()
  @ToolRules.description()
  description?: string;

  @Field(() => GraphQLJSONObject, { nullable: true })
  @OptionalNonNull()
  @ToolRules.parameters()
  parameters?: Record<string, unknown>;

  @Field({ nullable: true, description: URL_DESCRIPTION })
  @OptionalNonNull()
  @ToolRules.url()
  url?: string;

  @Field(() => ToolMethod, { nullable: true })
  @OptionalNonNull()
  @ToolRules.method()
  method?: ToolMethod;

  @Field(() => [ToolHeaderInput], { nullable: true, description: 'Replaces every header; [] removes them' })
  @OptionalNonNull()
  @ToolRules.headers()
  headers?: ToolHeaderInput[];

  @Field(() => Int, { nullable: true })
  @OptionalNonNull()
  @ToolRules.timeoutMs()
  timeoutMs?: number;
}

@InputType({ description: 'A new MCP server (Streamable HTTP); its tools are listed at once' })
export class CreateMcpServerInput {
  @Field({ description: '1 to 64 characters, unique in the organization' })
  @Length(1, 64)
  @IsString()
  name!: string;

  @Field({ description: URL_DESCRIPTION })
  @ToolRules.url()
  url!: string;

  @Field(() => ToolHeaderInput, {
    nullable: true,
    description: 'The header that authenticates the gateway (e.g. Authorization: Bearer …); its value is sealed and never shown again',
  })
  @IsOptional()
  @ValidateNested()
  @Type(() => ToolHeaderInput)
  @IsObject()
  auth?: ToolHeaderInput | null;
}

@InputType({ description: 'Changes to an MCP server; fields left out keep their values; a new URL or auth lists its tools again' })
export class UpdateMcpServerInput {
  @Field({ nullable: true })
  @OptionalNonNull()
  @Length(1, 64)
  @IsString()
  name?: string;

  @Field({ nullable: true, description: URL_DESCRIPTION })
  @OptionalNonNull()
  @MaxLength(2048)
  @ToolRules.url()
  url?: string;

  @Field(() => ToolHeaderInput, { nullable: true, description: 'null removes it' })
  @IsOptional()
  @ValidateNested()
  @Type(() => ToolHeaderInput)
  @IsObject()
  auth?: ToolHeaderInput | null;
}
