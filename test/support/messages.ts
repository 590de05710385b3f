/**
 * Messages that try to get changed on their way to the pod's output, as fast-check arbitraries: the
 * kubelet's expansion syntax (`$`, `$$`, `$(VAR)`, variables the kubelet does define), printf's
 * directives and escapes, quotes and backticks a shell would read, multi-byte and combining
 * Unicode, control characters, mixed with random strings; every one a message the CRD admits.
 * Shared by the unit tests of the escaping and the node test that prints them.
 */
import fc from 'fast-check';
import { MESSAGE_MAX_LENGTH } from '../../src/api/schema.js';

/** The message of issue 32: the kubelet printed `Total: $5 host=10.0.0.1`. */
export const ISSUE_MESSAGE = 'Total: $$5 host=$(KUBERNETES_SERVICE_HOST)';

/** Variables every container's environment defines for the kubelet (enableServiceLinks: false or not). */
export const KUBELET_DEFINED_VARIABLES = ['KUBERNETES_SERVICE_HOST', 'KUBERNETES_SERVICE_PORT', 'KUBERNETES_PORT'];

export const TRICKY_FRAGMENTS: readonly string[] = [
  '$',
  '$$',
  '$$$',
  '$(',
  ')',
  '$)',
  '$(VAR)',
  '$$(VAR)',
  '$$$(VAR)',
  '$(VAR',
  '${VAR}',
  '$VAR',
  '$(HOME)',
  '$(PATH)',
  ...KUBELET_DEFINED_VARIABLES.flatMap((v) => [`$(${v})`, `$$(${v})`, `$$$(${v})`]),
  '$($(KUBERNETES_SERVICE_HOST))',
  '$(rm -rf /)',
  '%s',
  '%d',
  '%%',
  '%',
  '%n',
  '%b',
  '%c',
  '%5.2f',
  '%*s',
  '\\',
  '\\n',
  '\\t',
  '\\0',
  '\\x41',
  '\\u00e9',
  '\\c',
  '"',
  "'",
  '`',
  '`id`',
  '-n',
  '-e',
  '--',
  ' ',
  '\t',
  '\n',
  '\u001b[31m',
  'ñ',
  '世界',
  '👋',
  '𝄞',
  'e\u0301',
  'n\u0303\u0323',
  '👩\u200d👩\u200d👧',
  '🇪🇸',
  '\u200b',
  '\ufeff',
  '\u{10ffff}',
  '\ufffd',
];

/** What the CRD admits: 1 to MESSAGE_MAX_LENGTH characters (code points, as the API server counts), no NUL. */
export function admittedByCrd(message: string): boolean {
  const length = [...message].length;
  return length >= 1 && length <= MESSAGE_MAX_LENGTH && !message.includes('\u0000');
}

/**
 * Fragments of TRICKY_FRAGMENTS and random strings (any code point but half surrogates, which no
 * UTF-8 text and so no stored message can hold; printable graphemes, combining ones included),
 * joined; only the messages the CRD admits.
 */
export const messageArbitrary: fc.Arbitrary<string> = fc
  .array(
    fc.oneof(
      { arbitrary: fc.constantFrom(...TRICKY_FRAGMENTS), weight: 3 },
      { arbitrary: fc.string({ unit: 'binary', maxLength: 12 }), weight: 1 },
      { arbitrary: fc.string({ unit: 'grapheme', maxLength: 6 }), weight: 1 },
    ),
    { minLength: 1, maxLength: 24 },
  )
  .map((parts) => parts.join(''))
  .filter(admittedByCrd);

/**
 * The longest messages the CRD admits, each MESSAGE_MAX_LENGTH code points: all `$` (the escaped
 * argument is twice as long), the tricky fragments repeated, `$` between 4-byte characters, and
 * 4-byte characters only (16 KiB of UTF-8, the most a message can take).
 */
export function longestMessages(): string[] {
  const fill = (unit: string): string =>
    [...unit.repeat(Math.ceil(MESSAGE_MAX_LENGTH / [...unit].length))].slice(0, MESSAGE_MAX_LENGTH).join('');
  return [fill('$'), fill(`${ISSUE_MESSAGE} 世𝄞e\u0301%s\\n"'\`$$$`), fill('𝄞$'), fill('𝄞')];
}
