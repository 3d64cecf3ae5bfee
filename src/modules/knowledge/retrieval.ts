/** At most this many distinct words of a message go into the query. */
const MAX_QUERY_WORDS = 64;
/** Longer "words" are noise (a pasted hash, say) and too long for a lexeme anyway. */
const MAX_WORD_LENGTH = 100;

/**
 * The words of a message joined with OR for to_tsquery, so a natural question matches a
 * passage that has some of its words. Only letters and digits survive: nothing the
 * tsquery syntax could read as an operator. '' when no word is left.
 */
export function toOrQuery(message: string): string {
  const words = (message.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []).filter((word) => word.length <= MAX_WORD_LENGTH);
  return [...new Set(words)].slice(0, MAX_QUERY_WORDS).join(' | ');
}

/**
 * How many matching passages are ranked at most: when more match (a query of common words over a
 * large base), the best of the first MAX_CANDIDATES found through the index are answered, so one
 * search costs a bounded amount of work whatever the size of the base.
 */
export const MAX_CANDIDATES = 1000;

/**
 * Full-text ranking that PGlite and PostgreSQL both run, over the stored `search_vector`
 * (to_tsvector('english', content), generated on write, GIN-indexed). ts_rank_cd with every
 * weight 1 and normalization 32 (rank / (rank + 1)) puts the score in 0..1: one matching word
 * scores 0.5, more matches score closer to 1.
 * Parameters: tsquery, organization id, knowledge base id, candidate limit, threshold, limit.
 */
export const RETRIEVAL_SQL = `
select ranked.* from (
  select c.id as "chunkId", c.document_id as "documentId", d.title as "title", c.content as "content",
         c.ordinal as "ordinal",
         ts_rank_cd('{1,1,1,1}'::float4[], c.search_vector, q.query, 32)::float8 as "score"
  from (select to_tsquery('english', ?) as query) q
  cross join lateral (
    select id, document_id, content, ordinal, search_vector from knowledge_chunks
    where organization_id = ? and knowledge_base_id = ? and search_vector @@ q.query
    limit ?
  ) c
  join knowledge_documents d on d.id = c.document_id
) ranked
where ranked."score" >= ?
order by ranked."score" desc, ranked."documentId", ranked."ordinal"
limit ?`;
