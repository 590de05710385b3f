// The local git server of the GitOps tooling (scripts/testbed/controlplane/gitops.ts): the standard
// library only, so no go.sum.
module echoperator.local/controlplane/githttp

go 1.24.0
