import { IsOptional } from 'class-validator';
import { GraphQLJSONObject } from 'graphql-scalars';
import { Field, ID, InputType } from 'type-graphql';
import { OptionalNonNull } from '../../common/validation.js';
import { KnowledgeBaseConfigInput, MemoryConfigInput, ModelConfigInput, ResolutionCriterionInput, VoiceConfigInput } from './agent-config.inputs.js';
import { AgentRules } from './agent.rules.js';
import { AnalysisPlanInput } from './analysis/analysis.types.js';
import { FirstMessageMode } from './agent.enums.js';
import { AgentVariableInput } from './templates/agent-variable.types.js';
import { AgentMcpToolsInput, AgentToolRules } from './agent-tools.types.js';
import { TransferDestinationInput, transferDestinationRules, MAX_TRANSFER_DESTINATIONS } from './transfer-destination.types.js';

/** The limits of CreateAgentInput; fields left out keep their values, null clears a nullable one. */
@InputType({ description: 'Changes to an agent; each update adds one to its version' })
export class UpdateAgentInput {
  @Field({ nullable: true })
  @OptionalNonNull()
  @AgentRules.name()
  name?: string;

  @Field(() => String, { nullable: true })
  @IsOptional()
  @AgentRules.description()
  description?: string | null;

  @Field({ nullable: true })
  @OptionalNonNull()
  @AgentRules.instructions()
  instructions?: string;

  @Field(() => String, { nullable: true })
  @IsOptional()
  @AgentRules.policy()
  policy?: string | null;

  @Field(() => String, {
    nullable: true,
    description:
      'What the agent says first on a call, a template of 1 to 1000 characters; null: the default greeting (docs/agents-and-knowledge.md#a-first-message)',
  })
  @IsOptional()
  @AgentRules.firstMessage()
  firstMessage?: string | null;

  @Field(() => FirstMessageMode, { nullable: true, description: 'Default agent_speaks_first' })
  @OptionalNonNull()
  @AgentRules.firstMessageMode()
  firstMessageMode?: FirstMessageMode;

  @Field(() => [AgentVariableInput], { nullable: true, description: 'The variables the templates use, with their defaults; at most 50' })
  @OptionalNonNull()
  @AgentRules.variables()
  variables?: AgentVariableInput[];

  @Field(() => ModelConfigInput, { nullable: true })
  @OptionalNonNull()
  @AgentRules.modelConfig()
  modelConfig?: ModelConfigInput;

  @Field(() => VoiceConfigInput, { nullable: true })
  @IsOptional()
  @AgentRules.voiceConfig()
  voiceConfig?: VoiceConfigInput | null;

  @Field(() => MemoryConfigInput, { nullable: true })
  @IsOptional()
  @AgentRules.memoryConfig()
  memoryConfig?: MemoryConfigInput | null;

  @Field(() => GraphQLJSONObject, { nullable: true })
  @IsOptional()
  @AgentRules.metadata()
  metadata?: Record<string, unknown> | null;

  @Field(() => KnowledgeBaseConfigInput, { nullable: true })
  @IsOptional()
  @AgentRules.knowledgeBaseConfig()
  knowledgeBaseConfig?: KnowledgeBaseConfigInput | null;

  @Field(() => [ResolutionCriterionInput], { nullable: true })
  @OptionalNonNull()
  @AgentRules.resolutionCriteria()
  resolutionCriteria?: ResolutionCriterionInput[];

  @Field(() => AnalysisPlanInput, { nullable: true, description: 'What the agent’s model fills when one of its calls ends; null for nothing' })
  @IsOptional()
  @AgentRules.analysisPlan()
  analysisPlan?: AnalysisPlanInput | null;

  @Field(() => [ID], { nullable: true, description: 'The organization’s HTTP tools the agent may call (GET /api/tools); at most 32' })
  @OptionalNonNull()
  @AgentToolRules.toolIds()
  toolIds?: string[];

  @Field(() => [AgentMcpToolsInput], { nullable: true, description: 'Tools of the organization’s MCP servers the agent may call, by server and name' })
  @OptionalNonNull()
  @AgentToolRules.mcpTools()
  mcpTools?: AgentMcpToolsInput[];

  @Field(() => [TransferDestinationInput], {
    nullable: true,
    description: `Whom the agent may hand a call to (its transfer_call tool); at most ${MAX_TRANSFER_DESTINATIONS}`,
  })
  @OptionalNonNull()
  @transferDestinationRules()
  transferDestinations?: TransferDestinationInput[];
}
