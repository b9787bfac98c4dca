/**
 * The Fjord console's entry point: the navigation and the page the address names.
 *   #/cluster, #/topics, #/topics/NAME, #/topics/NAME/messages, #/groups, #/groups/ID,
 *   #/acls, #/users, #/quotas
 * Everything it shows comes from its server's JSON API (/api/...), which reads the cluster
 * through Fjord's client library; when the cluster needs SASL, a login first (session.tsx).
 */
import { render } from 'preact';
import { useRoute } from './hooks.js';
import { ClusterPage } from './pages/cluster.js';
import { GroupPage, GroupsPage } from './pages/groups.js';
import { MessagesPage } from './pages/messages.js';
import { TopicPage, TopicsPage } from './pages/topics.js';
import { AclsPage } from './pages/acls.js';
import { QuotasPage, UsersPage } from './pages/users.js';
import { ErrorLine } from './components.js';
import { LoginPage, UserBadge, useSession } from './session.js';

function Page() {
  const route = useRoute();
  const [section, name, sub] = route.parts;
  if (section === 'topics' && name !== undefined && sub === 'messages') return <MessagesPage key={name} topic={name} route={route} />;
  if (section === 'topics' && name !== undefined) return <TopicPage key={name} name={name} route={route} />;
  if (section === 'topics') return <TopicsPage route={route} />;
  if (section === 'groups' && name !== undefined) return <GroupPage key={name} id={name} />;
  if (section === 'groups') return <GroupsPage />;
  if (section === 'acls') return <AclsPage />;
  if (section === 'users') return <UsersPage />;
  if (section === 'quotas') return <QuotasPage />;
  return <ClusterPage />;
}

function App() {
  const route = useRoute();
  const session = useSession();
  const current = route.parts[0] ?? 'cluster';
  const link = (section: string, label: string) => (
    <a href={`#/${section}`} class={current === section ? 'current' : ''} aria-current={current === section ? 'page' : undefined}>
      {label}
    </a>
  );
  return (
    <>
      <header>
        <span class="brand">Fjord</span>
        <nav>
          {link('cluster', 'Cluster')}
          {link('topics', 'Topics')}
          {link('groups', 'Consumer groups')}
          {link('acls', 'ACLs')}
          {link('users', 'Users')}
          {link('quotas', 'Quotas')}
        </nav>
        {session.info?.user !== undefined && <UserBadge user={session.info.user} loggedOut={session.refresh} />}
      </header>
      <main>
        <ErrorLine message={session.error} />
        {session.info?.loginRequired && session.info.user === undefined ? (
          <LoginPage info={session.info} loggedIn={session.refresh} />
        ) : (
          session.info && <Page />
        )}
      </main>
    </>
  );
}

render(<App />, document.getElementById('app')!);
