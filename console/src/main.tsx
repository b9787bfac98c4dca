/**
 * The Fjord console's entry point: the navigation and the page the address names.
 *   #/cluster, #/topics, #/topics/NAME, #/topics/NAME/messages, #/groups, #/groups/ID
 * Everything it shows comes from its server's JSON API (/api/...), which reads the cluster
 * through Fjord's client library.
 */
import { render } from 'preact';
import { useRoute } from './hooks.js';
import { ClusterPage } from './pages/cluster.js';
import { GroupPage, GroupsPage } from './pages/groups.js';
import { MessagesPage } from './pages/messages.js';
import { TopicPage, TopicsPage } from './pages/topics.js';

function Page() {
  const route = useRoute();
  const [section, name, sub] = route.parts;
  if (section === 'topics' && name !== undefined && sub === 'messages') return <MessagesPage key={name} topic={name} route={route} />;
  if (section === 'topics' && name !== undefined) return <TopicPage key={name} name={name} route={route} />;
  if (section === 'topics') return <TopicsPage route={route} />;
  if (section === 'groups' && name !== undefined) return <GroupPage key={name} id={name} />;
  if (section === 'groups') return <GroupsPage />;
  return <ClusterPage />;
}

function App() {
  const route = useRoute();
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
        </nav>
      </header>
      <main>
        <Page />
      </main>
    </>
  );
}

render(<App />, document.getElementById('app')!);
