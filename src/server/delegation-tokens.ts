/**
 * The broker's delegation token manager, from its delegation.token.* configs: tokens kept in
 * ZooKeeper in cluster mode (Kafka's /delegation_token znodes), in a file beside the embedded
 * broker's metadata otherwise. Without a secret key the manager is disabled and opens no store.
 */
import type { Logger } from 'pino';
import type { BrokerConfig } from './config/index.js';
import type { ZkMode } from '../metadata/zk/zk-mode.js';
import { EmbeddedDelegationTokens } from '../metadata/embedded/embedded-delegation-tokens.js';
import { DelegationTokenManager } from '../security/delegation-tokens/token-manager.js';
import type { DelegationTokenConfig } from '../security/delegation-tokens/token-info.js';

/** Kafka's KafkaConfig: delegation.token.secret.key, else the deprecated delegation.token.master.key. */
export function delegationTokenConfig(cfg: BrokerConfig): DelegationTokenConfig {
  const secret = (cfg.values.get('delegation.token.secret.key') as string | null) ?? (cfg.values.get('delegation.token.master.key') as string | null);
  return {
    secretKey: secret === null || secret === '' ? null : secret,
    maxLifetimeMs: cfg.values.get('delegation.token.max.lifetime.ms') as number,
    expiryTimeMs: cfg.values.get('delegation.token.expiry.time.ms') as number,
    expiryCheckIntervalMs: cfg.values.get('delegation.token.expiry.check.interval.ms') as number,
  };
}

export async function openDelegationTokens(cfg: BrokerConfig, zkMode: ZkMode | undefined, logger: Logger): Promise<DelegationTokenManager> {
  const store = async () => {
    if (!zkMode) return new EmbeddedDelegationTokens(cfg.logDirs[0]!);
    const { ZkDelegationTokens } = await import('../metadata/zk/zk-delegation-tokens.js');
    return new ZkDelegationTokens(zkMode.session, logger);
  };
  const manager = await DelegationTokenManager.open(delegationTokenConfig(cfg), store, logger);
  if (manager.enabled) logger.info('delegation tokens enabled');
  return manager;
}
