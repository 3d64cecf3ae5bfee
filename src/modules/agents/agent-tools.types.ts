import { Type } from 'class-transformer';
import { ArrayMaxSize, ArrayMinSize, IsArray, IsString, IsUUID, Matches, ValidateNested } from 'class-validator';
import { Field, ID, InputType, ObjectType } from 'type-graphql';
import { Rules } from '../../common/validation.js';
import { TOOL_LIMITS } from '../tools/tool-limits.js';

/** The most tools (HTTP and MCP together) one agent may call. */
export const MAX_AGENT_TOOLS = TOOL_LIMITS.toolsPerAgent;
const NAME = /^[a-zA-Z0-9_-]{1,64}$/;

@ObjectType({ description: 'Tools of one MCP server an agent may call, by name' })
export class AgentMcpTools {
  @Field(() => ID) serverId!: string;
  @Field(() => [String]) names!: string[];
}

@InputType({ description: 'Tools of one of the organization’s MCP servers the agent may call, by the names the server lists' })
export class AgentMcpToolsInput {
  @Field(() => ID)
  @IsUUID(undefined, { message: 'serverId must be a UUID' })
  @IsString()
  serverId!: string;

  @Field(() => [String], { description: `1 to ${MAX_AGENT_TOOLS} names the server lists` })
  @Matches(NAME, { each: true, message: 'each name is 1 to 64 letters, digits, underscores or hyphens' })
  @IsString({ each: true })
  @ArrayMaxSize(MAX_AGENT_TOOLS)
  @ArrayMinSize(1)
  @IsArray()
  names!: string[];
}

/** The rules of toolIds and mcpTools, for CreateAgentInput and UpdateAgentInput. */
export const AgentToolRules = {
  toolIds: () => Rules(IsUUID(undefined, { each: true, message: 'each of toolIds must be a UUID' }), ArrayMaxSize(MAX_AGENT_TOOLS), IsArray()),
  mcpTools: () =>
    Rules(
      ValidateNested({ each: true }),
      Type(() => AgentMcpToolsInput),
      ArrayMaxSize(20),
      IsArray(),
    ),
};
