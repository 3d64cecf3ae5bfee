import { Link } from 'wouter';
import { CallDocument, type CallQuery } from '../../api/generated';
import { useQuery } from '../../api/hooks';
import { Badge, formatDate, Loading, QueryError } from '../../components/common';
import { Page, Section } from '../../components/page';
import { LatencyBar, LatencyLegend, type Turn } from './latency-bar';
import { RecordingPlayer } from './recording-player';

type Call = CallQuery['call'];
type Message = NonNullable<Call['conversation']>['messages']['data'][number];
type ToolCall = NonNullable<Call['conversation']>['toolCalls']['data'][number];

/**
 * The transcript in its order: each tool call after the message it came after (its afterSequence, the
 * sequence of the last message before it; 0: before the first), tool calls after one message in their
 * own order. A tool call after the last message shown (a transcript of more than a page) comes last.
 */
function transcriptOrder(messages: Message[], toolCalls: ToolCall[]): ({ message: Message } | { toolCall: ToolCall })[] {
  const pending = [...toolCalls].sort((a, b) => a.afterSequence - b.afterSequence || a.sequence - b.sequence);
  const entries: ({ message: Message } | { toolCall: ToolCall })[] = [];
  const toolCallsBefore = (sequence: number) => {
    while (pending.length > 0 && pending[0]!.afterSequence < sequence) entries.push({ toolCall: pending.shift()! });
  };
  for (const message of messages) {
    toolCallsBefore(message.sequence);
    entries.push({ message });
  }
  toolCallsBefore(Number.POSITIVE_INFINITY);
  return entries;
}

/**
 * The turns belong to the agent's replies to the caller, in order (the first message, spoken before the
 * caller said anything, is not a turn: it is `firstAudioMs`). Turns left over are listed after the transcript.
 */
function turnsOfReplies(messages: Message[], turns: Turn[]): { byMessage: Map<string, number>; leftOver: number[] } {
  const byMessage = new Map<string, number>();
  let next = 0;
  messages.forEach((message, index) => {
    if (message.role === 'assistant' && messages[index - 1]?.role === 'user' && next < turns.length) byMessage.set(message.id, next++);
  });
  return { byMessage, leftOver: turns.map((_, index) => index).slice(next) };
}

export function CallPage({ id }: { id: string }) {
  const answer = useQuery(CallDocument, { id });
  if (answer.error && !answer.data) {
    return (
      <Page title="Call">
        <QueryError error={answer.error} what="Call" />
      </Page>
    );
  }
  if (!answer.data) return <Loading what="the call" />;
  const { call, events } = answer.data;
  const messages = call.conversation?.messages.data ?? [];
  const toolCalls = call.conversation?.toolCalls.data ?? [];
  const turns = call.turnLatency?.turns ?? [];
  const scaleMs = Math.max(1, ...turns.map((turn) => turn.totalMs));
  const { byMessage, leftOver } = turnsOfReplies(messages, turns);
  return (
    <Page title={`Call ${call.direction === 'inbound' ? `from ${call.from ?? 'unknown'}` : `to ${call.to}`}`}>
      <p className="meta">
        <Badge value={call.status} /> <Badge value={call.outcome} /> {formatDate(call.queuedAt)}
      </p>
      <dl className="facts">
        <dt>Contact</dt>
        <dd>{call.contact ? `${call.contact.name ?? '—'} (${call.contact.phone})` : '—'}</dd>
        <dt>Program</dt>
        <dd>{call.program ? <Link href={`/campaigns/${call.program.id}`}>{call.program.name}</Link> : '—'}</dd>
        <dt>Execution</dt>
        <dd>{call.execution ? <Link href={`/executions/${call.execution.id}`}>{call.execution.status.replace(/_/g, ' ')}</Link> : '—'}</dd>
        <dt>Agent</dt>
        <dd>{call.agent ? <Link href={`/agents/${call.agent.id}`}>{call.agent.name}</Link> : '—'}</dd>
        <dt>Answered</dt>
        <dd>
          {formatDate(call.answeredAt)}
          {call.answeredBy ? ` by a ${call.answeredBy}` : ''}
        </dd>
        <dt>Ended</dt>
        <dd>{formatDate(call.endedAt)}</dd>
        <dt>Duration</dt>
        <dd>{call.durationSeconds === null ? '—' : `${call.durationSeconds} s`}</dd>
        <dt>Attempt, carrier, credits</dt>
        <dd>
          {call.attempt} · {call.carrier} · {call.creditsCharged}
        </dd>
        {call.transfer ? (
          <>
            <dt>Transfer</dt>
            <dd data-testid="call-transfer">
              <TransferFact transfer={call.transfer} />
            </dd>
          </>
        ) : null}
        {call.errorText ? (
          <>
            <dt>Error</dt>
            <dd>{call.errorText}</dd>
          </>
        ) : null}
      </dl>

      <Section title="Transcript" id="transcript">
        {call.turnLatency ? (
          <p className="hint">
            {call.turnLatency.provider}: median {Math.round(call.turnLatency.p50Ms)} ms, slowest {Math.round(call.turnLatency.maxMs)} ms
            {call.turnLatency.firstAudioMs !== null ? `, first line after ${Math.round(call.turnLatency.firstAudioMs)} ms` : ''}
            {call.turnLatency.bargeIns !== null ? `, ${call.turnLatency.bargeIns} barge-ins` : ''}.
          </p>
        ) : null}
        {turns.length > 0 ? <LatencyLegend /> : null}
        {messages.length === 0 && toolCalls.length === 0 ? (
          <p>No words were exchanged on this call.</p>
        ) : (
          <ol className="transcript" data-testid="transcript">
            {transcriptOrder(messages, toolCalls).map((entry) => {
              if ('toolCall' in entry) return <ToolCallTurn key={entry.toolCall.id} toolCall={entry.toolCall} />;
              const { message } = entry;
              const turn = byMessage.get(message.id);
              return (
                <li key={message.id} className={`turn ${message.role}`}>
                  <p className="speaker">{message.role === 'user' ? 'Caller' : 'Agent'}</p>
                  <p className="words">{message.content}</p>
                  {turn !== undefined ? <LatencyBar turn={turns[turn]!} index={turn} scaleMs={scaleMs} /> : null}
                </li>
              );
            })}
          </ol>
        )}
        {leftOver.length > 0 ? (
          <div className="left-over">
            <h3>Other turns</h3>
            {leftOver.map((index) => (
              <LatencyBar key={index} turn={turns[index]!} index={index} scaleMs={scaleMs} />
            ))}
          </div>
        ) : null}
        {call.conversation && call.conversation.messages.meta.total > messages.length ? (
          <p className="hint">
            The first {messages.length} of {call.conversation.messages.meta.total} messages.
          </p>
        ) : null}
        {call.conversation && call.conversation.toolCalls.meta.total > toolCalls.length ? (
          <p className="hint">
            The first {toolCalls.length} of {call.conversation.toolCalls.meta.total} tool calls.
          </p>
        ) : null}
      </Section>

      <Section title="Analysis" id="analysis">
        {call.analysis ? (
          <div data-testid="analysis">
            <p>
              <Badge value={call.analysis.status} /> {call.analysis.model ? `by ${call.analysis.model}` : ''}{' '}
              {call.analysis.analyzedAt ? formatDate(call.analysis.analyzedAt) : ''}
            </p>
            {call.analysis.summary ? <p className="summary">{call.analysis.summary}</p> : null}
            {call.analysis.error ? <p className="field-error">{call.analysis.error}</p> : null}
            {call.analysis.data ? (
              <dl className="facts">
                {Object.entries(call.analysis.data).map(([name, value]) => (
                  <div key={name} className="fact">
                    <dt>{name}</dt>
                    <dd>{typeof value === 'string' ? value : JSON.stringify(value)}</dd>
                  </div>
                ))}
              </dl>
            ) : null}
          </div>
        ) : (
          <p>No analysis: the agent has no analysis plan, or nothing was said.</p>
        )}
      </Section>

      <Section title="Recording" id="recording">
        <RecordingPlayer callId={call.id} recording={call.recording} />
      </Section>

      <Section title="Events" id="events">
        {events.data.length === 0 ? (
          <p>No event is kept for this call.</p>
        ) : (
          <ol className="events" data-testid="call-events">
            {events.data.map((event) => (
              <li key={event.id}>
                <time dateTime={event.createdAt}>{formatDate(event.createdAt)}</time> <code>{event.type}</code>
                <details>
                  <summary>
                    Payload <span className="visually-hidden">of {event.type}</span>
                  </summary>
                  <pre>{JSON.stringify(event.payload, null, 2)}</pre>
                </details>
              </li>
            ))}
          </ol>
        )}
      </Section>
    </Page>
  );
}

/** A tool the agent called, at its place among the turns: what it sent, and what came back or went wrong. */
function ToolCallTurn({ toolCall }: { toolCall: ToolCall }) {
  return (
    <li className="turn tool-call" data-testid="tool-call" data-status={toolCall.status}>
      <p className="speaker">
        Tool call <code>{toolCall.tool}</code> <Badge value={toolCall.status} />
      </p>
      <p className="latency-words">
        {toolCall.statusCode !== null ? `HTTP ${toolCall.statusCode}, ` : ''}
        {toolCall.durationMs} ms
      </p>
      <dl className="tool-call-facts">
        <dt>Arguments</dt>
        <dd>{toolCall.arguments ? <code>{JSON.stringify(toolCall.arguments)}</code> : 'withheld (they repeated the hidden policy)'}</dd>
        {toolCall.answer !== null ? (
          <>
            <dt>Result</dt>
            <dd>
              <code>{toolCall.answer}</code>
            </dd>
          </>
        ) : null}
        {toolCall.error !== null ? (
          <>
            <dt>Error</dt>
            <dd className="tool-call-error">{toolCall.error}</dd>
          </>
        ) : null}
      </dl>
    </li>
  );
}

/** A call's transfer: to whom and when, and how the carrier's dial to them ended once it reported. */
function TransferFact({ transfer }: { transfer: NonNullable<CallQuery['call']['transfer']> }) {
  return (
    <>
      To {transfer.destinationName} (<code>{transfer.destination}</code>), {transfer.mode}, at{' '}
      <time dateTime={transfer.transferredAt}>{formatDate(transfer.transferredAt)}</time>
      {'; '}
      {transfer.dialStatus === null ? (
        'the carrier has not reported how the dial ended yet.'
      ) : (
        <>
          the dial ended <Badge value={transfer.dialStatus} />
          {transfer.dialDurationSeconds !== null ? ` after ${transfer.dialDurationSeconds} s on the line` : ''}
          {transfer.dialEndedAt ? (
            <>
              {' '}
              at <time dateTime={transfer.dialEndedAt}>{formatDate(transfer.dialEndedAt)}</time>
            </>
          ) : null}
          .
        </>
      )}
      {transfer.returnedAt ? (
        <>
          {' '}
          No one took the call: the caller was back with the agent at <time dateTime={transfer.returnedAt}>{formatDate(transfer.returnedAt)}</time>.
        </>
      ) : null}
    </>
  );
}
