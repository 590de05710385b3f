/**
 * What a program's Job or CronJob would print and whom it belongs to, read the same way for every
 * program: the judge compares these program-neutral parts, never a program's own rendering.
 *
 * - The message is the last word of the first container's command line (args when set, else
 *   command) as the kubelet passes it to the runtime: after its $(VAR) expansion. So ours
 *   (`printf '%s\n' <message with $ doubled>`), the controller-runtime peer (`printf '%s\n'
 *   <message>`) and the Go echoperator (`echo <message>`) are judged by what the pod would print.
 * - The owner is the controller owner reference (the one with controller: true), as the garbage
 *   collector and every controller read it.
 */
import type { V1ObjectMeta, V1OwnerReference, V1PodSpec } from '@kubernetes/client-node';

/**
 * Stands for a variable's value the judge cannot know (the kubelet's own KUBERNETES_* service
 * variables, a value from a ConfigMap): a NUL, which no message the CRD admits compares equal to.
 */
const UNKNOWN_VALUE = '\u0000';

export function controllerOf(meta: V1ObjectMeta | undefined): V1OwnerReference | undefined {
  return meta?.ownerReferences?.find((r) => r.controller === true);
}

/** The message a pod of this spec prints, as the kubelet would run it; undefined when it has no command line. */
export function renderedMessage(spec: V1PodSpec | undefined): string | undefined {
  const container = spec?.containers?.[0];
  if (!container) return undefined;
  const words = container.args?.length ? container.args : container.command;
  const last = words?.at(-1);
  if (last === undefined) return undefined;
  const env = new Map<string, string>();
  for (const e of container.env ?? []) env.set(e.name, e.valueFrom ? UNKNOWN_VALUE : (e.value ?? ''));
  const unknownFrom = (container.envFrom?.length ?? 0) > 0;
  return kubeletExpand(last, (name) => env.get(name) ?? (unknownFrom || name.startsWith('KUBERNETES_') ? UNKNOWN_VALUE : undefined));
}

/**
 * The kubelet's expansion of a command word (third_party/forked/golang/expansion): `$$` -> `$`,
 * `$(NAME)` -> NAME's value when `lookup` knows it (else left as written), any other `$` copied.
 */
export function kubeletExpand(word: string, lookup: (name: string) => string | undefined): string {
  let out = '';
  let i = 0;
  while (i < word.length) {
    const c = word[i]!;
    if (c !== '$' || i + 1 >= word.length) {
      out += c;
      i++;
      continue;
    }
    const next = word[i + 1]!;
    if (next === '$') {
      out += '$';
      i += 2;
      continue;
    }
    const close = next === '(' ? word.indexOf(')', i + 2) : -1;
    if (close < 0) {
      // `$x`, or an unclosed `$(`: copied, and the scan goes on after the `$`'s next character.
      out += `$${next}`;
      i += 2;
      continue;
    }
    const name = word.slice(i + 2, close);
    out += lookup(name) ?? `$(${name})`;
    i = close + 1;
  }
  return out;
}
