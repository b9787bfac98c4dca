/**
 * Renewed certificates without a restart, as Kafka's dynamic SSL reconfiguration: an
 * AlterConfigs / IncrementalAlterConfigs on the broker's listener.name.<l>.ssl.* keys (or ssl.*)
 * rebuilds each TLS listener's settings from the layers (per-broker dynamic, cluster-default
 * dynamic, server.properties; listener-prefixed keys first) and re-reads its files, so the same
 * ssl.keystore.location with new content takes effect too. A set-up that does not load is
 * refused before it is stored (INVALID_REQUEST) and the listener keeps its context; as Kafka
 * (without ssl.allow.dn.changes / ssl.allow.san.changes), a new certificate must keep the
 * subject and subject alternative names of the old one. New connections get the new context,
 * open ones keep theirs.
 */
import { X509Certificate } from 'node:crypto';
import { configDef } from '../../config/defs.js';
import { ConfigError } from '../../config/errors.js';
import { usesTls, type NamedListener } from '../security-protocol.js';
import { buildListenerTls, type ListenerTls } from './server-tls.js';

export interface DynamicLayers {
  perBroker: ReadonlyMap<string, string>;
  clusterDefault: ReadonlyMap<string, string>;
}

export interface TlsListenerHost {
  listenerTlsOf(name: string): ListenerTls | undefined;
  setListenerTls(name: string, settings: ListenerTls): void;
}

export class TlsReloadError extends Error {
  override readonly name = 'TlsReloadError';
}

export class TlsReloader {
  constructor(
    private readonly listeners: readonly NamedListener[],
    private readonly staticRaw: ReadonlyMap<string, string>,
    private readonly host: TlsListenerHost,
    private readonly log: (fields: Record<string, unknown>, message: string) => void,
  ) {}

  /** Builds every TLS listener's settings from the proposed layers; throws TlsReloadError when one is unusable. */
  validate(layers: DynamicLayers): Map<string, ListenerTls> {
    const out = new Map<string, ListenerTls>();
    for (const l of this.listeners) {
      if (!usesTls(l.securityProtocol)) continue;
      let next: ListenerTls;
      try {
        const get = this.settings(l.name, layers);
        // As at start-up: on SASL_SSL only the listener-prefixed ssl.client.auth counts.
        next = buildListenerTls(
          l.name,
          l.securityProtocol === 'SASL_SSL' ? (key) => (key === 'ssl.client.auth' ? this.prefixedOnly(l.name, key, layers) : get(key)) : get,
        );
      } catch (err) {
        if (err instanceof ConfigError) throw new TlsReloadError(`Validation of dynamic config update of SSLFactory failed: ${err.message}`);
        throw err;
      }
      const current = this.host.listenerTlsOf(l.name);
      if (current !== undefined) checkSameIdentity(l.name, current, next);
      out.set(l.name, next);
    }
    return out;
  }

  /** Applies the layers: listeners whose material changed get the new context. Throws like validate. */
  apply(layers: DynamicLayers): void {
    for (const [name, next] of this.validate(layers)) {
      const current = this.host.listenerTlsOf(name);
      if (current !== undefined && sameMaterial(current, next) && current.clientAuth === next.clientAuth) continue;
      this.host.setListenerTls(name, next);
      this.log({ listener: name, files: next.files }, `TLS settings of listener ${name} reloaded: new connections use them`);
    }
  }

  private prefixedOnly(listener: string, key: string, layers: DynamicLayers): string {
    const name = `listener.name.${listener.toLowerCase()}.${key}`;
    return layers.perBroker.get(name) ?? layers.clusterDefault.get(name) ?? this.staticRaw.get(name) ?? 'none';
  }

  private settings(listener: string, layers: DynamicLayers): (key: string) => string | null {
    const prefixed = `listener.name.${listener.toLowerCase()}.`;
    const sources = [layers.perBroker, layers.clusterDefault, this.staticRaw];
    return (key) => {
      for (const s of sources) {
        const v = s.get(prefixed + key);
        if (v !== undefined) return v;
      }
      for (const s of sources) {
        const v = s.get(key);
        if (v !== undefined) return v;
      }
      return configDef(key)?.default ?? null;
    };
  }
}

function sameMaterial(a: ListenerTls, b: ListenerTls): boolean {
  const m = a.material;
  const n = b.material;
  return (
    m.cert === n.cert &&
    m.key === n.key &&
    m.ca === n.ca &&
    m.passphrase === n.passphrase &&
    (m.pfx === undefined ? n.pfx === undefined : n.pfx !== undefined && m.pfx.equals(n.pfx)) &&
    a.minVersion === b.minVersion &&
    a.maxVersion === b.maxVersion &&
    a.ciphers === b.ciphers
  );
}

function leaf(t: ListenerTls): X509Certificate | undefined {
  const pem = t.material.cert;
  if (pem === undefined) return undefined;
  try {
    return new X509Certificate(pem);
  } catch {
    return undefined;
  }
}

function checkSameIdentity(listener: string, current: ListenerTls, next: ListenerTls): void {
  const a = leaf(current);
  const b = leaf(next);
  if (a === undefined || b === undefined) return;
  if (a.subject !== b.subject || (a.subjectAltName ?? '') !== (b.subjectAltName ?? '')) {
    throw new TlsReloadError(
      `Validation of dynamic config update of SSLFactory failed: Listener ${listener}: Keystore DistinguishedName or SubjectAltNames do not match: ${a.subject.replace(/\n/g, ',')} / ${b.subject.replace(/\n/g, ',')}`,
    );
  }
}
