import { useState } from 'react';
import { CreateWebCallDocument } from '../../api/generated';
import { useMutation } from '../../api/hooks';
import { useSession } from '../../api/session';
import { formatDate } from '../../components/common';
import { FormError } from '../../components/forms';

/**
 * "Talk to this agent": a web call (createWebCall) opened on the gateway's /talk page in a new tab —
 * the page may not be framed (frame-ancestors 'none'), and the token stays in its URL's fragment. The
 * link stays on the page too, for a browser that blocked the new tab; the token opens one call.
 */
export function TalkButton({ agentId }: { agentId: string }) {
  const { can } = useSession();
  const [ticket, setTicket] = useState<{ url: string; expiresAt: string } | null>(null);
  const create = useMutation(CreateWebCallDocument);
  if (!can('agents.talk')) return null;
  const talk = async () => {
    setTicket(null);
    const result = await create.run({ input: { agentId } });
    if (!result) return;
    const url = new URL(result.createWebCall.url, location.href).toString();
    setTicket({ url, expiresAt: result.createWebCall.expiresAt });
    window.open(url, '_blank', 'noopener');
  };
  return (
    <div className="talk">
      <button type="button" onClick={() => void talk()} disabled={create.pending}>
        Talk to this agent
      </button>
      {ticket ? (
        <p className="hint" role="status">
          The call opens in a new tab.{' '}
          <a href={ticket.url} target="_blank" rel="noopener noreferrer" data-testid="talk-link">
            Open the talk page
          </a>{' '}
          if none opened (one call, until {formatDate(ticket.expiresAt)}).
        </p>
      ) : null}
      <FormError error={create.error} />
    </div>
  );
}
