/**
 * Client entities (users, client ids, users' client ids) in ZooKeeper, where Kafka keeps them:
 * `/config/users/<u>`, `/config/clients/<c>`, `/config/users/<u>/clients/<c>`, each a config znode
 * (`{"version":1,"config":{...}}`) announced by a `/config/changes` notification whose
 * entity_path is the path below /config. Re-reading on notifications is ZkMode's job.
 */
import type { ClientEntityBackend } from '../client-entity-configs.js';
import type { KafkaZkApi } from './zk-client-types.js';

type EntityZk = Pick<KafkaZkApi, 'getEntityConfigs' | 'setEntityConfigs' | 'getConfigChildren'>;

export class ZkClientEntities implements ClientEntityBackend {
  constructor(private readonly zk: EntityZk) {}

  async loadAll(): Promise<Map<string, Record<string, string>>> {
    const all = new Map<string, Record<string, string>>();
    const children = (sub: string): Promise<string[]> => this.zk.getConfigChildren?.(sub) ?? Promise.resolve([]);
    const add = async (path: string): Promise<void> => {
      const configs = await this.load(path);
      if (Object.keys(configs).length > 0) all.set(path, configs);
    };
    for (const client of await children('clients')) await add(`clients/${client}`);
    for (const user of await children('users')) {
      await add(`users/${user}`);
      for (const client of await children(`users/${user}/clients`)) await add(`users/${user}/clients/${client}`);
    }
    return all;
  }

  load(path: string): Promise<Record<string, string>> {
    const [type, ...rest] = path.split('/');
    return this.zk.getEntityConfigs(type === 'users' ? 'users' : 'clients', rest.join('/'));
  }

  store(path: string, configs: Record<string, string>): Promise<void> {
    const [type, ...rest] = path.split('/');
    return this.zk.setEntityConfigs(type === 'users' ? 'users' : 'clients', rest.join('/'), configs);
  }
}
