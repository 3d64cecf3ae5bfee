import { Route, Switch } from 'wouter';
import { Overview } from './pages/overview';
import { AgentList } from './pages/agents/agent-list';
import { AgentPage } from './pages/agents/agent-page';
import { ContactList } from './pages/contacts/contact-list';
import { ImportList } from './pages/contacts/import-list';
import { AudienceList } from './pages/contacts/audience-list';
import { AudiencePage } from './pages/contacts/audience-page';
import { DoNotCallList } from './pages/contacts/do-not-call-list';
import { SegmentList } from './pages/segments/segment-list';
import { SegmentPage } from './pages/segments/segment-page';
import { ProgramList } from './pages/campaigns/program-list';
import { ProgramNew } from './pages/campaigns/program-new';
import { ProgramPage } from './pages/campaigns/program-page';
import { ExecutionPage } from './pages/campaigns/execution-page';
import { CallList } from './pages/calls/call-list';
import { CallPage } from './pages/calls/call-page';
import { ApiKeysPage } from './pages/settings/api-keys';
import { WebhooksPage } from './pages/settings/webhooks';
import { WebhookPage } from './pages/settings/webhook-page';
import { TelephonyPage } from './pages/settings/telephony';
import { TeamPage } from './pages/settings/team';
import { Page } from './components/page';

/** The console's pages; each route's page reads what it shows through the public GraphQL API. */
export function Routes() {
  return (
    <Switch>
      <Route path="/" component={Overview} />
      <Route path="/agents" component={AgentList} />
      <Route path="/agents/new">{() => <AgentPage id={null} />}</Route>
      <Route path="/agents/:id">{(params) => <AgentPage key={params.id} id={params.id} />}</Route>
      <Route path="/contacts" component={ContactList} />
      <Route path="/contacts/imports" component={ImportList} />
      <Route path="/audiences" component={AudienceList} />
      <Route path="/audiences/:id">{(params) => <AudiencePage key={params.id} id={params.id} />}</Route>
      <Route path="/segments" component={SegmentList} />
      <Route path="/segments/:id">{(params) => <SegmentPage key={params.id} id={params.id} />}</Route>
      <Route path="/do-not-call" component={DoNotCallList} />
      <Route path="/campaigns" component={ProgramList} />
      <Route path="/campaigns/new" component={ProgramNew} />
      <Route path="/campaigns/:id">{(params) => <ProgramPage key={params.id} id={params.id} />}</Route>
      <Route path="/executions/:id">{(params) => <ExecutionPage key={params.id} id={params.id} />}</Route>
      <Route path="/calls" component={CallList} />
      <Route path="/calls/:id">{(params) => <CallPage key={params.id} id={params.id} />}</Route>
      <Route path="/settings" component={ApiKeysPage} />
      <Route path="/settings/webhooks" component={WebhooksPage} />
      <Route path="/settings/webhooks/:id">{(params) => <WebhookPage key={params.id} id={params.id} />}</Route>
      <Route path="/settings/telephony" component={TelephonyPage} />
      <Route path="/settings/team" component={TeamPage} />
      <Route>
        <Page title="Page not found">
          <p>There is no such page in the console.</p>
        </Page>
      </Route>
    </Switch>
  );
}
