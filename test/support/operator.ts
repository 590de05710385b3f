/**
 * Installing the CRDs and running the operator from source against the test control plane.
 */
import { kubectlOk } from './kube.js';

let crdsInstalled = false;

/** Server-side applies crds/ (shared by every test; idempotent) and waits until they are served. */
export function installCrds(): void {
  if (crdsInstalled) return;
  kubectlOk(['apply', '--server-side', '--force-conflicts', '--field-manager=echoperator-tests', '-f', 'crds/']);
  kubectlOk(['wait', '--for=condition=Established', '--timeout=60s', 'crd/echos.mmontes.io', 'crd/scheduledechos.mmontes.io']);
  crdsInstalled = true;
}
