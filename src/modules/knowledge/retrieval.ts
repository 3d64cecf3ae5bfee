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
 * Full-text ranking that PGlite and PostgreSQL both run. ts_rank_cd with every weight 1 and
 * normalization 32 (rank / (rank + 1)) puts the score in 0..1: one matching word scores 0.5,
 * more matches score closer to 1. `to_tsvector('english', content)` matches the GIN index.
 * Parameters: tsquery, organization id, knowledge base id, threshold, limit.
 */
export const RETRIEVAL_SQL = `
select ranked.* from (
  select c.id as "chunkId", c.document_id as "documentId", d.title as "title", c.content as "content",
         c.ordinal as "ordinal",
         ts_rank_cd('{1,1,1,1}'::float4[], to_tsvector('english', c.content), q.query, 32)::float8 as "score"
  from knowledge_chunks c
  join knowledge_documents d on d.id = c.document_id
  cross join (select to_tsquery('english', ?) as query) q
  where c.organization_id = ? and c.knowledge_base_id = ?
    and to_tsvector('english', c.content) @@ q.query
) ranked
where ranked."score" >= ?
order by ranked."score" desc, ranked."documentId", ranked."ordinal"
limit ?`;
