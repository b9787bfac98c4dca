/**
 * A consumer group member's `SubscribedTopicRegex` (KIP-848): compiled in RE2J's dialect, as
 * Kafka 4's coordinator does (com.google.re2j), through re2js, a JavaScript port of RE2J: the
 * same syntax (no backreferences, no lookaround, no possessive quantifiers) and matching in time
 * linear in the topic name, so no pattern backtracks catastrophically. A topic matches when the
 * whole name matches (RE2J's `matcher(name).matches()`), not a substring.
 *
 * Kafka bounds neither the pattern nor the program it compiles to; Fjord does, because matching
 * costs (program size x name length) per topic and the coordinator is one event loop: a pattern
 * over MAX_SUBSCRIPTION_REGEX_LENGTH characters, or whose repetitions would expand past
 * MAX_SUBSCRIPTION_REGEX_PROGRAM instructions, is refused as invalid, the expansion estimated
 * before compiling (compiling `(x{1000}){1000}`-like patterns is itself the expensive part).
 * Invalid patterns come back as a result, not an exception: the coordinator answers
 * INVALID_REGULAR_EXPRESSION with its message. Matching a long topic list can be sliced
 * (matchTopicsInSlices) so the event loop serves requests in between.
 */
import { RE2JS, RE2JSException, RE2JSSyntaxException } from 're2js';

export const MAX_SUBSCRIPTION_REGEX_LENGTH = 1024;
export const MAX_SUBSCRIPTION_REGEX_PROGRAM = 4096;

export interface CompiledSubscriptionRegex {
  readonly ok: true;
  readonly regex: string;
  /** Whether the whole topic name matches. */
  matches(topic: string): boolean;
}

export interface InvalidSubscriptionRegex {
  readonly ok: false;
  readonly regex: string;
  /** Kafka's message for INVALID_REGULAR_EXPRESSION. */
  readonly message: string;
}

export type SubscriptionRegex = CompiledSubscriptionRegex | InvalidSubscriptionRegex;

function invalid(regex: string, description: string): InvalidSubscriptionRegex {
  return { ok: false, regex, message: `SubscribedTopicRegex \`${regex}\` is not a valid regular expression: ${description}.` };
}

/** Compiled patterns (a near-limit one takes tens of milliseconds), bounded: cleared when full. */
const compiledPatterns = new Map<string, SubscriptionRegex>();
const MAX_COMPILED_PATTERNS = 256;

/** The pattern compiled (or refused), compiled once while it is among the last few hundred. */
export function compileSubscriptionRegex(regex: string): SubscriptionRegex {
  let compiled = compiledPatterns.get(regex);
  if (!compiled) {
    if (compiledPatterns.size >= MAX_COMPILED_PATTERNS) compiledPatterns.clear();
    compiled = compilePattern(regex);
    compiledPatterns.set(regex, compiled);
  }
  return compiled;
}

function compilePattern(regex: string): SubscriptionRegex {
  if (regex.length > MAX_SUBSCRIPTION_REGEX_LENGTH) return invalid(regex, `longer than ${MAX_SUBSCRIPTION_REGEX_LENGTH} characters`);
  if (estimatedProgramSize(regex) > MAX_SUBSCRIPTION_REGEX_PROGRAM)
    return invalid(regex, `its repetitions expand past ${MAX_SUBSCRIPTION_REGEX_PROGRAM} instructions`);
  let compiled: RE2JS;
  try {
    compiled = RE2JS.compile(regex);
  } catch (e) {
    if (e instanceof RE2JSSyntaxException) return invalid(regex, e.getDescription());
    if (e instanceof RE2JSException) return invalid(regex, e.message);
    throw e;
  }
  if (compiled.programSize() > MAX_SUBSCRIPTION_REGEX_PROGRAM) return invalid(regex, `it compiles to more than ${MAX_SUBSCRIPTION_REGEX_PROGRAM} instructions`);
  return { ok: true, regex, matches: (topic) => compiled.testExact(topic) };
}

/** The topics whose whole name matches, in the order given. */
export function matchTopics(regex: CompiledSubscriptionRegex, topics: Iterable<string>): string[] {
  const out: string[] = [];
  for (const t of topics) if (regex.matches(t)) out.push(t);
  return out;
}

/**
 * matchTopics over a long list without holding the event loop: after each `sliceMs` of matching
 * it yields (setImmediate) before going on.
 */
export async function matchTopicsInSlices(regex: CompiledSubscriptionRegex, topics: readonly string[], sliceMs = 5): Promise<string[]> {
  const out: string[] = [];
  let i = 0;
  while (i < topics.length) {
    const deadline = performance.now() + sliceMs;
    // Check the clock every 8 names: a near-limit pattern costs ~0.5 ms per long name, a clock
    // read ~50 ns.
    do {
      const end = Math.min(topics.length, i + 8);
      for (; i < end; i++) if (regex.matches(topics[i]!)) out.push(topics[i]!);
    } while (i < topics.length && performance.now() < deadline);
    if (i < topics.length) await new Promise<void>((resolve) => setImmediate(resolve));
  }
  return out;
}

/**
 * An upper estimate of the instructions a pattern compiles to, from its text alone: every
 * character one (an alternation's `|` its split), a group two more, a counted repetition `{n,m}` multiplying the atom before it (a group's whole
 * estimate, nested repetitions multiplied out). Escapes and classes are skipped over so their
 * braces and parentheses do not count; an ill-formed pattern gets some number and then fails to
 * compile.
 */
export function estimatedProgramSize(regex: string): number {
  const frames: number[] = [0];
  let lastAtom = 0;
  let i = 0;
  const add = (n: number) => {
    frames[frames.length - 1]! += n;
  };
  while (i < regex.length) {
    const c = regex[i]!;
    if (c === '\\') {
      if (regex[i + 1] === 'Q') {
        const end = regex.indexOf('\\E', i + 2);
        const stop = end < 0 ? regex.length : end;
        lastAtom = Math.max(1, stop - (i + 2));
        add(lastAtom);
        i = end < 0 ? regex.length : end + 2;
        continue;
      }
      lastAtom = 1;
      add(1);
      i += regex[i + 1] === 'p' || regex[i + 1] === 'P' ? skipUnicodeClass(regex, i + 2) - i : 2;
      continue;
    }
    if (c === '[') {
      i = skipClass(regex, i);
      lastAtom = 1;
      add(1);
      continue;
    }
    if (c === '(') {
      frames.push(2); // a capture's two save instructions
      i++;
      continue;
    }
    if (c === ')') {
      const group = frames.length > 1 ? frames.pop()! : 0;
      lastAtom = group;
      add(group);
      i++;
      continue;
    }
    if (c === '{') {
      const m = /^\{(\d+)(?:,(\d*))?\}/.exec(regex.slice(i, i + 16));
      if (m) {
        const most = Math.max(Number(m[1]), m[2] ? Number(m[2]) : 0);
        add(lastAtom * Math.max(0, most - 1) + 1);
        lastAtom = lastAtom * Math.max(1, most);
        i += m[0].length;
        continue;
      }
    }
    lastAtom = 1;
    add(1);
    i++;
  }
  while (frames.length > 1) add(frames.pop()!);
  return frames[0]! + 2; // the program's fail and match instructions
}

/** The index after a `[...]` class starting at `start` (a leading `]` or `^]` is literal, `[:name:]` nested). */
function skipClass(regex: string, start: number): number {
  let i = start + 1;
  if (regex[i] === '^') i++;
  if (regex[i] === ']') i++;
  while (i < regex.length && regex[i] !== ']') {
    if (regex[i] === '\\') i += 2;
    else if (regex[i] === '[' && regex[i + 1] === ':') {
      const end = regex.indexOf(':]', i + 2);
      i = end < 0 ? i + 1 : end + 2;
    } else i++;
  }
  return i + 1;
}

/** The index after `\p{Name}` or `\pL` given the index after `\p`. */
function skipUnicodeClass(regex: string, i: number): number {
  if (regex[i] !== '{') return i + 1;
  const end = regex.indexOf('}', i);
  return end < 0 ? regex.length : end + 1;
}
