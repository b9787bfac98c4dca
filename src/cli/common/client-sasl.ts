/**
 * Kafka's client SASL configs for the tools (--command-config, --producer.config, ...):
 * `security.protocol=SASL_PLAINTEXT|SASL_SSL`, `sasl.mechanism=PLAIN|SCRAM-SHA-256|SCRAM-SHA-512`
 * (Kafka's default GSSAPI is not served) and
 * `sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required username="alice" password="...";`
 * (PlainLoginModule likewise), mapped into ClientSecurity.
 */
import type { ClientSecurity, SaslMechanism } from '../../security/client-security.js';
import { isSecurityProtocol, usesSasl } from '../../security/security-protocol.js';
import { type JaasParseError, parseJaasConfig } from '../../security/sasl/jaas.js';
import { CliError } from './tool.js';

const MECHANISMS: readonly SaslMechanism[] = ['PLAIN', 'SCRAM-SHA-256', 'SCRAM-SHA-512'];

/** undefined unless security.protocol names a SASL protocol. */
export function clientSaslSecurity(props: Map<string, string>): ClientSecurity | undefined {
  const protocol = props.get('security.protocol')?.trim().toUpperCase();
  if (protocol === undefined || !isSecurityProtocol(protocol) || !usesSasl(protocol)) return undefined;
  const mechanism = (props.get('sasl.mechanism') ?? 'GSSAPI').trim().toUpperCase();
  if (!(MECHANISMS as readonly string[]).includes(mechanism)) {
    throw new CliError(`sasl.mechanism ${mechanism} is not supported: use PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512`);
  }
  const jaasText = props.get('sasl.jaas.config');
  if (jaasText === undefined || jaasText.trim() === '') {
    throw new CliError(
      `security.protocol ${protocol} needs sasl.jaas.config, e.g. org.apache.kafka.common.security.scram.ScramLoginModule required username="alice" password="...";`,
    );
  }
  let username: string | undefined;
  let password: string | undefined;
  let tokenAuth = false;
  try {
    const jaas = parseJaasConfig(jaasText);
    username = jaas.options.get('username');
    password = jaas.options.get('password');
    // ScramLoginModule's tokenauth="true": a delegation token (username = token id, password = HMAC).
    tokenAuth = jaas.options.get('tokenauth')?.toLowerCase() === 'true';
  } catch (err) {
    throw new CliError(`Invalid sasl.jaas.config: ${(err as JaasParseError).message}`);
  }
  if (username === undefined || password === undefined) throw new CliError('sasl.jaas.config needs username="..." and password="..."');
  return { protocol, sasl: { mechanism: mechanism as SaslMechanism, username, password, ...(tokenAuth ? { tokenAuth } : {}) } };
}
