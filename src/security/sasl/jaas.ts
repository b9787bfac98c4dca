/**
 * Kafka's JAAS configuration text, as `sasl.jaas.config` takes it:
 * `org.apache.kafka.common.security.plain.PlainLoginModule required username="admin" password="s" user_admin="s";`
 * One login module, its control flag, and its options (quoted or bare values).
 */
export interface JaasEntry {
  loginModule: string;
  controlFlag: string;
  options: Map<string, string>;
}

export class JaasParseError extends Error {
  override readonly name = 'JaasParseError';
}

const FLAGS = new Set(['required', 'requisite', 'sufficient', 'optional']);

export function parseJaasConfig(text: string): JaasEntry {
  let i = 0;
  const s = text.trim();
  const skipSpace = (): void => {
    while (i < s.length && /\s/.test(s[i]!)) i++;
  };
  const word = (): string => {
    skipSpace();
    const start = i;
    while (i < s.length && /[^\s=;"]/.test(s[i]!)) i++;
    return s.slice(start, i);
  };
  const loginModule = word();
  if (loginModule === '') throw new JaasParseError('JAAS config has no login module');
  const controlFlag = word().toLowerCase();
  if (!FLAGS.has(controlFlag))
    throw new JaasParseError(`JAAS config entry ${loginModule} has no valid control flag (required, requisite, sufficient, optional)`);
  const options = new Map<string, string>();
  for (;;) {
    skipSpace();
    if (i >= s.length) throw new JaasParseError('JAAS config entry is not terminated with ";"');
    if (s[i] === ';') {
      i++;
      skipSpace();
      if (i < s.length) throw new JaasParseError('JAAS config property contains more than one login module');
      return { loginModule, controlFlag, options };
    }
    const key = word();
    skipSpace();
    if (key === '' || s[i] !== '=') throw new JaasParseError(`JAAS config option ${JSON.stringify(key)} has no value`);
    i++;
    skipSpace();
    let value: string;
    if (s[i] === '"') {
      i++;
      let out = '';
      while (i < s.length && s[i] !== '"') {
        if (s[i] === '\\' && i + 1 < s.length) i++;
        out += s[i++];
      }
      if (i >= s.length) throw new JaasParseError(`JAAS config option ${key} has an unterminated quoted value`);
      i++;
      value = out;
    } else {
      value = word();
    }
    options.set(key, value);
  }
}

export const PLAIN_LOGIN_MODULE = 'org.apache.kafka.common.security.plain.PlainLoginModule';
export const SCRAM_LOGIN_MODULE = 'org.apache.kafka.common.security.scram.ScramLoginModule';
