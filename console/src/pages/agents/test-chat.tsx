import { useState, type FormEvent } from 'react';
import { TestAgentDocument, type TestAgentMutation } from '../../api/generated';
import { useMutation } from '../../api/hooks';
import { useSession } from '../../api/session';
import { FormError, TextArea } from '../../components/forms';
import { Section } from '../../components/page';

interface Exchange {
  message: string;
  reply: TestAgentMutation['testAgent'];
}

/** Test messages to the agent (testAgent): each reply with the tools it called and the tokens it used. */
export function TestChat({ agentId }: { agentId: string }) {
  const { can } = useSession();
  const [message, setMessage] = useState('');
  const [exchanges, setExchanges] = useState<Exchange[]>([]);
  const test = useMutation(TestAgentDocument);
  if (!can('agents.talk')) return null;
  const submit = async (event: FormEvent) => {
    event.preventDefault();
    const sent = message;
    const result = await test.run({ id: agentId, message: sent });
    if (result) {
      setExchanges((previous) => [...previous, { message: sent, reply: result.testAgent }]);
      setMessage('');
    }
  };
  return (
    <Section title="Test chat" id="test-chat">
      <ol className="chat" aria-live="polite" aria-label="Test messages and replies">
        {exchanges.map((exchange, index) => (
          <li key={index}>
            <p className="bubble user">
              <span className="visually-hidden">You: </span>
              {exchange.message}
            </p>
            <p className="bubble assistant" data-testid="reply">
              <span className="visually-hidden">Agent: </span>
              {exchange.reply.response}
            </p>
            {exchange.reply.toolCalls.length > 0 ? (
              <ol className="tool-calls" data-testid="tool-calls" aria-label="Tools called for this reply">
                {exchange.reply.toolCalls.map((call) => (
                  <li key={call.id} data-status={call.status}>
                    <code>{call.tool}</code> {call.status}
                    {call.statusCode !== null ? ` (${call.statusCode})` : ''}, {call.durationMs} ms
                    {call.arguments ? (
                      <>
                        {' '}
                        with <code>{JSON.stringify(call.arguments)}</code>
                      </>
                    ) : null}
                    {call.error ? <span className="tool-call-error">: {call.error}</span> : null}
                    {call.answer ? (
                      <>
                        {' '}
                        → <code>{call.answer}</code>
                      </>
                    ) : null}
                  </li>
                ))}
              </ol>
            ) : null}
            <p className="usage" data-testid="usage">
              {exchange.reply.usage.model}: {exchange.reply.usage.inputTokens} in, {exchange.reply.usage.outputTokens} out, {exchange.reply.usage.totalTokens}{' '}
              tokens
            </p>
          </li>
        ))}
      </ol>
      <form onSubmit={(event) => void submit(event)} noValidate aria-label="Send a test message">
        <TextArea label="Message" field="message" value={message} onChange={setMessage} error={test.error} rows={2} />
        <FormError error={test.error} shown={['message']} />
        <button type="submit" className="primary" disabled={test.pending || message.trim() === ''}>
          {test.pending ? 'Sending…' : 'Send'}
        </button>
      </form>
    </Section>
  );
}
