import { Type } from 'class-transformer';
import { ArrayMaxSize, IsArray, IsEnum, IsObject, IsString, Length, MaxLength, ValidateNested } from 'class-validator';
import { nestedInput as nested } from './nested-input.js';
import { Rules } from '../../common/validation.js';
import { KnowledgeBaseConfigInput, MemoryConfigInput, ModelConfigInput, ResolutionCriterionInput, VoiceConfigInput } from './agent-config.inputs.js';
import { AnalysisPlanInput } from './analysis/analysis.types.js';
import { FirstMessageMode } from './agent.enums.js';
import { AgentVariableInput, MAX_AGENT_VARIABLES } from './templates/agent-variable.types.js';

/** The longest first message template. */
export const MAX_FIRST_MESSAGE = 1000;

/**
 * The rules of an agent's fields, in one place for CreateAgentInput and UpdateAgentInput; each
 * input says whether the field is required, optional or nullable.
 */
export const AgentRules = {
  name: () => Rules(Length(1, 128), IsString()),
  description: () => Rules(MaxLength(2000), IsString()),
  instructions: () => Rules(Length(1, 10000), IsString()),
  policy: () => Rules(MaxLength(10000), IsString()),
  firstMessage: () => Rules(Length(1, MAX_FIRST_MESSAGE), IsString()),
  firstMessageMode: () => IsEnum(FirstMessageMode),
  variables: () =>
    Rules(
      ValidateNested({ each: true }),
      Type(() => AgentVariableInput),
      ArrayMaxSize(MAX_AGENT_VARIABLES),
      IsArray(),
    ),
  modelConfig: () => nested(ModelConfigInput),
  voiceConfig: () => nested(VoiceConfigInput),
  memoryConfig: () => nested(MemoryConfigInput),
  metadata: () => IsObject(),
  knowledgeBaseConfig: () => nested(KnowledgeBaseConfigInput),
  analysisPlan: () => nested(AnalysisPlanInput),
  resolutionCriteria: () =>
    Rules(
      ValidateNested({ each: true }),
      Type(() => ResolutionCriterionInput),
      ArrayMaxSize(5),
      IsArray(),
    ),
};
