/**
 * ssl.principal.mapping.rules, as Kafka's SslPrincipalMapper reads them: a comma-separated list of
 * `RULE:pattern/replacement/[LU]` and `DEFAULT`, tried in order on the RFC 2253 subject of a
 * client certificate. A RULE applies when its pattern matches the whole name; the name is then
 * rewritten with the replacement ($n back references; \ escapes), optionally lower- (L) or
 * upper-cased (U). DEFAULT keeps the name as it is. When no rule applies the connection has no
 * principal and is refused, as Kafka's NoMatchingRule.
 *
 * Patterns are JavaScript regular expressions; the ones Kafka's documentation shows behave the same.
 */

export class SslPrincipalMappingError extends Error {
  override readonly name = 'SslPrincipalMappingError';
}

interface Rule {
  readonly isDefault: boolean;
  readonly source: string;
  readonly pattern?: RegExp;
  readonly whole?: RegExp;
  readonly replacement?: string;
  readonly groups?: number;
  readonly caseChange?: 'L' | 'U' | '';
}

// A rule is DEFAULT, or RULE: then a pattern and a replacement (each free of unescaped "/"), then
// an optional L or U; commas inside a pattern do not split rules.
const SPLITTER = /\s*((DEFAULT)|RULE:((?:\\.|[^\\/])*)\/((?:\\.|[^\\/])*)\/([LU]?).*?|(.*?))\s*(,\s*|$)/g;
const PARSER = /^(?:(DEFAULT)|RULE:((?:\\.|[^\\/])*)\/((?:\\.|[^\\/])*)\/([LU]?))$/;

export class SslPrincipalMapper {
  private constructor(private readonly rules: readonly Rule[]) {}

  /** Parses the value of ssl.principal.mapping.rules (null or empty: DEFAULT). Throws on a bad rule. */
  static fromRules(value: string | null | undefined): SslPrincipalMapper {
    const text = (value ?? '').trim() === '' ? 'DEFAULT' : value!.trim();
    const rules: Rule[] = [];
    for (const m of text.matchAll(SPLITTER)) {
      const ruleText = m[1] ?? '';
      if (ruleText === '') {
        if (m.index !== undefined && m.index + m[0].length >= text.length) break;
        throw new Error(`Invalid rule: empty rule in ${JSON.stringify(text)}`);
      }
      rules.push(parseRule(ruleText));
    }
    return new SslPrincipalMapper(rules);
  }

  /** The principal name for a distinguished name; throws SslPrincipalMappingError when no rule applies. */
  getName(distinguishedName: string): string {
    for (const rule of this.rules) {
      const name = applyRule(rule, distinguishedName);
      if (name !== null) return name;
    }
    throw new SslPrincipalMappingError(`No rules apply to ${distinguishedName}, rules [${this.rules.map((r) => r.source).join(', ')}]`);
  }

  toString(): string {
    return `SslPrincipalMapper(rules = [${this.rules.map((r) => r.source).join(', ')}])`;
  }
}

function parseRule(ruleText: string): Rule {
  const m = PARSER.exec(ruleText);
  if (m === null) throw new Error(`Invalid rule: ${ruleText}`);
  if (m[1] !== undefined) return { isDefault: true, source: 'DEFAULT' };
  // Java's leading inline flag (?i) (case-insensitive) becomes JavaScript's i flag.
  const caseless = m[2]!.startsWith('(?i)');
  const patternText = caseless ? m[2]!.slice(4) : m[2]!;
  let pattern: RegExp;
  let whole: RegExp;
  try {
    pattern = new RegExp(patternText, caseless ? 'gi' : 'g');
    whole = new RegExp(`^(?:${patternText})$`, caseless ? 'i' : '');
  } catch (err) {
    throw new Error(`Invalid rule: ${ruleText}: bad pattern (${(err as Error).message})`);
  }
  const groups = new RegExp(`${patternText}|`).exec('')!.length - 1;
  return { isDefault: false, source: ruleText, pattern, whole, replacement: m[3]!, groups, caseChange: (m[4] ?? '') as 'L' | 'U' | '' };
}

function applyRule(rule: Rule, dn: string): string | null {
  if (rule.isDefault) return dn;
  if (!rule.whole!.test(dn)) return null;
  rule.pattern!.lastIndex = 0;
  let result = dn.replace(rule.pattern!, (...args: unknown[]) =>
    expandReplacement(rule.replacement!, args[0] as string, args.slice(1, 1 + rule.groups!) as (string | undefined)[]),
  );
  if (rule.caseChange === 'L') result = result.toLowerCase();
  else if (rule.caseChange === 'U') result = result.toUpperCase();
  return result;
}

/**
 * Java's Matcher replacement syntax: `\x` is a literal x, `$n` a group (taking further digits
 * while the number stays a group); a `$n` past the pattern's groups is literal, as Kafka escapes it.
 */
function expandReplacement(replacement: string, match: string, groups: (string | undefined)[]): string {
  let out = '';
  for (let i = 0; i < replacement.length; i++) {
    const c = replacement[i]!;
    if (c === '\\' && i + 1 < replacement.length) {
      out += replacement[++i];
    } else if (c === '$' && i + 1 < replacement.length && /[0-9]/.test(replacement[i + 1]!)) {
      let n = Number(replacement[i + 1]);
      if (n > groups.length) {
        out += c;
        continue;
      }
      let j = i + 2;
      while (j < replacement.length && /[0-9]/.test(replacement[j]!) && n * 10 + Number(replacement[j]) <= groups.length) {
        n = n * 10 + Number(replacement[j]);
        j++;
      }
      out += n === 0 ? match : (groups[n - 1] ?? '');
      i = j - 1;
    } else {
      out += c;
    }
  }
  return out;
}
