import { Type } from 'class-transformer';
import { ArrayMaxSize, IsArray, IsObject, IsString, Length, MaxLength, ValidateNested } from 'class-validator';
import { Rules } from '../../common/validation.js';
import {
  KnowledgeBaseConfigInput,
  MemoryConfigInput,
  ModelConfigInput,
  ResolutionCriterionInput,
  VoiceConfigInput,
} from './agent-config.inputs.js';
import { AnalysisPlanInput } from './analysis/analysis.types.js';

/** A nested object: @IsObject runs first, then the inner class is validated. */
const nested = (type: new () => object) => Rules(ValidateNested(), Type(() => type), IsObject());

/**
 * The rules of an agent's fields, in one place for CreateAgentInput and UpdateAgentInput; each
 * input says whether the field is required, optional or nullable.
 */
export const AgentRules = {
  name: () => Rules(Length(1, 128), IsString()),
  description: () => Rules(MaxLength(2000), IsString()),
  instructions: () => Rules(Length(1, 10000), IsString()),
  policy: () => Rules(MaxLength(10000), IsString()),
  modelConfig: () => nested(ModelConfigInput),
  voiceConfig: () => nested(VoiceConfigInput),
  memoryConfig: () => nested(MemoryConfigInput),
  metadata: () => IsObject(),
  knowledgeBaseConfig: () => nested(KnowledgeBaseConfigInput),
  analysisPlan: () => nested(AnalysisPlanInput),
  resolutionCriteria: () => Rules(ValidateNested({ each: true }), Type(() => ResolutionCriterionInput), ArrayMaxSize(5), IsArray()),
};
