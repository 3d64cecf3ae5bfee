import type { TestApp, TestOrganization } from './app.js';

// Agents whose rows hold the values where two ways of writing an answer could part (the JS presenter,
// the database's JSON, the GraphQL executor): texts with quotes, backslashes, control characters,
// emoji and line separators; JSON columns with nested objects, floats, large integers and nulls.

export const TRICKY = 'quote " backslash \\ tab \t newline \n nul-ish \u0001 \u001f emoji 🎧 line sep \u2028 para \u2029 é ñ 中文 </script>';

/** The metadata of the configured agent. */
export const TRICKY_METADATA = { nested: { deep: [1, 2.5, -3e-7, null, 'x', true] }, big: 12345678901234, zero: 0, text: TRICKY };

/** An agent made through the REST door; its id. */
export async function createAgent(org: TestOrganization, body: Record<string, unknown>): Promise<string> {
  const res = await org.rest.post('/api/agents', { instructions: 'Help the caller.', modelConfig: { model: 'builtin/echo' }, ...body });
  if (res.status !== 201) throw new Error(JSON.stringify(res.body));
  return res.body.id;
}

/** "Configured": a tricky description, a policy, resolution criteria, and every JSON column set (some as no input could). */
export async function createConfiguredAgent(app: TestApp, org: TestOrganization): Promise<string> {
  const configured = await createAgent(org, {
    name: 'Configured',
    description: TRICKY,
    policy: 'Never mention the discount code.',
    resolutionCriteria: [
      { label: 'booked', description: 'An appointment was booked' },
      { label: 'declined', description: TRICKY },
    ],
  });
  await app.sql(
    `update agents set
       model_config = '{"model": "openai/gpt-4o-mini", "modelSettings": {"temperature": 0.7, "maxOutputTokens": 256}, "providerOptions": {"openai": {"reasoningEffort": "low"}}}'::jsonb,
       voice_config = '{"pipelineMode": "batch", "sttProvider": "deepgram", "ttsProvider": "elevenlabs", "voiceId": "voice-1", "language": "en-US"}'::jsonb,
       memory_config = '{"enabled": true, "lastMessages": 7}'::jsonb,
       metadata = ?::jsonb
     where id = ?`,
    [JSON.stringify(TRICKY_METADATA), configured],
  );
  return configured;
}
