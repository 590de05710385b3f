/**
 * Credentials out of errors and logs: what a user configures as a URL (a proxy, the API server)
 * or gives an exec credential plugin may carry a password, and the messages that name those
 * settings must still say which one is wrong.
 *
 * The rules, one place for all of them:
 *  - a URL's password (`user:password@host`) is written `xxxxx`, as Go's url.URL.Redacted()
 *    writes it; the user name stays (it tells which account, and is no secret);
 *  - a URL's query parameter whose name says it holds a credential (SECRET_NAME: token,
 *    password, secret, credential, api key, access key, private key, authorization, signature)
 *    keeps its name and loses its value;
 *  - in free text (an error message, a plugin's stderr), every URL-shaped `user:password@` and
 *    such query parameter, with or without a scheme (`svc-user:pw@proxy:3128`, as a proxy
 *    setting may be written);
 *  - a proxy setting, parsed or not: everything between its scheme and its last `@` (user and
 *    password), since a password may hold the characters (`/`, `#`, `?`, `"`) that end a URL's
 *    authority or stop it from parsing, and no URL rule can tell where it ends (redactProxy);
 *  - an exec plugin's arguments: the value of an argument named like a credential (`--token=v`,
 *    `--password v`, `-client-secret=v`), and every URL inside any argument, as above.
 *
 * Guarantees: pure functions, never throw; what they do not recognise as a credential is left as
 * it was, byte for byte (a message keeps pointing at the setting the user wrote).
 */

/** What a redacted value is written as (Go's url.URL.Redacted()). */
export const REDACTED = 'xxxxx';

/** A setting, flag or parameter name that says its value is a credential. */
const SECRET_NAME = /token|passw(?:or)?d|pwd|secret|credential|api[-_]?key|access[-_]?key|private[-_]?key|authorization|signature|sig$/i;

/**
 * `user:password@` where a URL's authority can start: after `scheme://`, or at the start of a
 * word (a scheme-less proxy setting). The password runs to the authority's last `@`, as WHATWG
 * and Go parse it, so a raw `@` inside it is hidden too.
 */
const USERINFO = /((?:[a-z][a-z0-9+.-]*:\/\/|^|(?<=[\s"'`(<[{=,;]))[^\s:/?#@"'`<>]+:)([^\s/?#"'`<>]+)@/gi;

/** `?name=value` or `&name=value`; the name is checked against SECRET_NAME. */
const QUERY_PARAM = /([?&]([^=&#\s"'`<>]+)=)([^&#\s"'`<>]+)/g;

/** Every URL password and credential-named query value in `text` replaced by REDACTED. */
export function redactText(text: string): string {
  return text
    .replace(USERINFO, `$1${REDACTED}@`)
    .replace(QUERY_PARAM, (all: string, head: string, name: string) => (SECRET_NAME.test(name) ? `${head}${REDACTED}` : all));
}

/** A URL (or a setting meant to be one) as an error or a log line may show it. */
export function redactUrl(url: string | URL): string {
  return redactText(typeof url === 'string' ? url : url.href);
}

/** A scheme with its `//`, at the start of a setting. */
const SCHEME_PREFIX = /^[a-z][a-z0-9+.-]*:\/\//i;

/**
 * A proxy setting as a message may quote it, parsed or not: from its scheme (if any) to its last
 * `@`, everything is REDACTED; what follows is redactText'ed. Without `@`, redactText alone.
 */
export function redactProxy(value: string): string {
  const at = value.lastIndexOf('@');
  if (at < 0) return redactText(value);
  const scheme = SCHEME_PREFIX.exec(value)?.[0] ?? '';
  return `${scheme}${REDACTED}${redactText(value.slice(at))}`;
}

/** `--name=value` / `-name=value`: its name and value. */
const FLAG_WITH_VALUE = /^(-{1,2}([^=\s]+))=(.*)$/s;
/** `--name` alone: its value is the next argument. */
const FLAG = /^-{1,2}([^=\s]+)$/;

/** An exec plugin's arguments as a message may show them (the rules above). */
export function redactArgs(args: readonly string[]): string[] {
  return args.map((arg, i) => {
    const withValue = FLAG_WITH_VALUE.exec(arg);
    if (withValue && SECRET_NAME.test(withValue[2]!)) return `${withValue[1]}=${REDACTED}`;
    const previous = i > 0 ? FLAG.exec(args[i - 1]!) : null;
    if (previous && SECRET_NAME.test(previous[1]!)) return REDACTED;
    return redactText(arg);
  });
}

/**
 * The secrets the rules find in `args` and in `env` (values of variables named like a
 * credential, and URL passwords anywhere), as literal strings: what a plugin's own output must
 * not repeat. Values shorter than 4 characters are left out (scrubbing them would garble text).
 */
export function secretsIn(args: readonly string[], env: readonly { name: string; value: string }[] = []): string[] {
  const found = new Set<string>();
  const redacted = redactArgs(args);
  args.forEach((arg, i) => {
    if (redacted[i] === arg) return;
    const value = FLAG_WITH_VALUE.exec(arg);
    if (value && SECRET_NAME.test(value[2]!)) found.add(value[3]!);
    else if (redacted[i] === REDACTED) found.add(arg);
    for (const m of arg.matchAll(USERINFO)) found.add(m[2]!);
    for (const m of arg.matchAll(QUERY_PARAM)) if (SECRET_NAME.test(m[2]!)) found.add(m[3]!);
  });
  for (const { name, value } of env) {
    if (SECRET_NAME.test(name)) found.add(value);
    for (const m of value.matchAll(USERINFO)) found.add(m[2]!);
  }
  return [...found].filter((s) => s.length >= 4);
}

/** `text` with every literal occurrence of `secrets` (see secretsIn) replaced by REDACTED, then redactText. */
export function scrub(text: string, secrets: readonly string[]): string {
  let out = text;
  // Longest first, so a secret that contains another is hidden whole.
  for (const s of [...secrets].sort((a, b) => b.length - a.length)) out = out.split(s).join(REDACTED);
  return redactText(out);
}
