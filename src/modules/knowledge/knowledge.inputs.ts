import { IsEnum, IsIn, IsInt, IsNumber, IsOptional, IsString, Length, Max, Min } from 'class-validator';
import { ArgsType, Field, Float, ID, InputType, Int } from 'type-graphql';
import { NamedRules, OptionalNonNull } from '../../common/validation.js';
import { CursorPageArgs } from '../../common/pagination.js';
import { DOCUMENT_CONTENT_TYPES, DocumentContentTypeEnum, KnowledgeDocumentStatus, type DocumentContentType } from './knowledge-document.entity.js';

/** Longest document text, in characters; the 1 MiB body limit answers 413 above that anyway. */
export const MAX_DOCUMENT_CHARS = 1_000_000;

@InputType({ description: 'A new knowledge base' })
export class CreateKnowledgeBaseInput {
  @Field({ description: '1 to 255 characters' })
  @NamedRules.name()
  name!: string;

  @Field(() => String, { nullable: true, description: 'At most 2000 characters' })
  @IsOptional()
  @NamedRules.description()
  description?: string | null;
}

@InputType({ description: 'A document to add to a knowledge base; it is chunked for retrieval at once' })
export class AddDocumentInput {
  @Field({ description: '1 to 255 characters' })
  @Length(1, 255)
  @IsString()
  title!: string;

  @Field({ description: `The text: 1 to ${MAX_DOCUMENT_CHARS} characters` })
  @Length(1, MAX_DOCUMENT_CHARS)
  @IsString()
  content!: string;

  @Field(() => DocumentContentTypeEnum, { nullable: true, description: 'text/plain (default) or text/markdown (GraphQL: text_plain, text_markdown)' })
  @OptionalNonNull()
  @IsIn(DOCUMENT_CONTENT_TYPES, { message: `contentType must be one of ${DOCUMENT_CONTENT_TYPES.join(', ')}` })
  @IsString()
  contentType?: DocumentContentType;
}

/** A page of a knowledge base's documents, optionally of one status. */
@ArgsType()
export class DocumentListArgs extends CursorPageArgs {
  @Field(() => KnowledgeDocumentStatus, { nullable: true })
  @IsOptional()
  @IsEnum(KnowledgeDocumentStatus)
  status?: KnowledgeDocumentStatus | null;
}

@ArgsType()
export class SearchKnowledgeBaseArgs {
  @Field(() => ID)
  @IsString()
  id!: string;

  @Field({ description: 'A question or keywords: 1 to 10000 characters' })
  @Length(1, 10000)
  @IsString()
  query!: string;

  @Field(() => Int, { defaultValue: 5, description: 'How many passages at most: 1 to 50' })
  @Max(50)
  @Min(1)
  @IsInt()
  topK: number = 5;

  @Field(() => Float, { defaultValue: 0, description: 'Lowest score a passage may have: 0 to 1' })
  @Max(1)
  @Min(0)
  @IsNumber()
  similarityThreshold: number = 0;
}
