/**
 * A container's `command` and `args` are not passed to the runtime as written: the kubelet first
 * expands them (ExpandContainerCommandAndArgs, with Kubernetes' third_party/forked/golang/expansion):
 * `$(NAME)` becomes the value of NAME when the container's environment defines it (the kubelet
 * always defines KUBERNETES_SERVICE_HOST and its siblings), `$$` becomes `$`, and every other byte,
 * a `$` before anything else included, is copied as is.
 *
 * Guarantee: for every string s, the kubelet's expansion of escapeKubeletExpansion(s) is s, whatever
 * the environment. Every `$` is doubled, so the expansion meets each one as the first of an escaped
 * pair (`$$` -> `$`) and never reads a reference. A string without `$` is returned unchanged.
 */
export function escapeKubeletExpansion(text: string): string {
  return text.split('$').join('$$');
}
