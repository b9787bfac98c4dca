import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { parseOverride, parseProperties } from '../../../src/config/index.js';

test('comments, blank lines and the three separators', () => {
  const props = parseProperties(['# a comment', '! another comment', '', '   ', 'a=1', 'b: 2', 'c 3', '  d  =  spaced value  ', 'e=', 'f', 'g=x=y'].join('\n'));
  assert.deepEqual(
    [...props],
    [
      ['a', '1'],
      ['b', '2'],
      ['c', '3'],
      ['d', 'spaced value  '],
      ['e', ''],
      ['f', ''],
      ['g', 'x=y'],
    ],
  );
});

test('line continuations drop the leading whitespace of the next line', () => {
  const props = parseProperties('listeners=PLAINTEXT://:9092,\\\n    OTHER://:9093\nnext=1\r\nlast=a\\\r\n  b');
  assert.equal(props.get('listeners'), 'PLAINTEXT://:9092,OTHER://:9093');
  assert.equal(props.get('next'), '1');
  assert.equal(props.get('last'), 'ab');
});

test('an even number of trailing backslashes is an escaped backslash, not a continuation', () => {
  const props = parseProperties('path=C:\\\\dir\\\\\nother=2');
  assert.equal(props.get('path'), 'C:\\dir\\');
  assert.equal(props.get('other'), '2');
});

test('escapes in keys and values', () => {
  const props = parseProperties('key\\=with\\:seps\\ x=tab\\there\\nnew\\u0041\\#');
  assert.equal(props.get('key=with:seps x'), 'tab\there\nnewA#');
});

test('a # inside a continued line is data, a later duplicate key wins', () => {
  const props = parseProperties('a=1\\\n# not a comment\na=2\nb=x # not a comment either');
  assert.equal(props.get('a'), '2');
  assert.equal(props.get('b'), 'x # not a comment either');
});

test('malformed \\u escape is a ConfigError', () => {
  assert.throws(() => parseProperties('a=\\u12'), { name: 'ConfigError', message: /Malformed \\uxxxx/ });
});

test('simple key=value lines round-trip (property)', () => {
  const keyArb = fc.stringMatching(/^[a-z][a-z0-9.]{0,20}$/);
  const valueArb = fc.stringMatching(/^[A-Za-z0-9.,:/_ -]{0,30}$/).map((s) => s.trim());
  fc.assert(
    fc.property(fc.dictionary(keyArb, valueArb), (dict) => {
      const text = Object.entries(dict)
        .map(([k, v]) => `${k}=${v}`)
        .join('\n');
      assert.deepEqual([...parseProperties(text)], Object.entries(dict));
    }),
  );
});

test('overrides split on the first =', () => {
  assert.deepEqual(parseOverride('log.dirs=/a=b'), ['log.dirs', '/a=b']);
  assert.deepEqual(parseOverride('empty='), ['empty', '']);
  assert.throws(() => parseOverride('novalue'), { name: 'ConfigError', message: /expected key=value/ });
  assert.throws(() => parseOverride('=x'), { name: 'ConfigError' });
});
