#!/usr/bin/env bash
# Runs a command on the main line's Node: the image's line, MAIN_NODE_LINE of
# scripts/ship/runtimes.ts. A machine whose node is of that major keeps its own; on any other
# (Node 20, say) the line's official binary, npm's node-<os>-<arch> package, is installed once into
# ~/.cache/echoperator/node-v<version>/, where runtimes.ts's nodeBinary() installs every supported
# line, and its folder goes first on PATH: `node`, and npm run under it, are then that Node.
#
#   scripts/testbed/main-node.sh COMMAND [ARG...]   COMMAND in its place (exec: signals reach it
#                                                   as they would directly)
#   scripts/testbed/main-node.sh --path             the folder to put first on PATH (.ci/run)
#   scripts/testbed/main-node.sh --version          the main line's pinned release
#
# In bash, not TypeScript: .ci/run needs it before `npm ci`, when there is no tsx yet.
set -euo pipefail
shopt -s inherit_errexit

runtimes="$(dirname "${BASH_SOURCE[0]}")/../ship/runtimes.ts"
version=$(sed -n "s/^export const MAIN_NODE_LINE\b[^=]*= '\([0-9]*\.[0-9]*\.[0-9]*\)';$/\1/p" "$runtimes")
if [[ -z $version ]]; then
  echo "main-node: no MAIN_NODE_LINE = '<major.minor.patch>' in $runtimes" >&2
  exit 1
fi
[[ ${1:-} == --version ]] && { echo "$version"; exit 0; }
if [[ $# -eq 0 ]]; then
  echo "usage: $0 COMMAND [ARG...] | --path | --version" >&2
  exit 2
fi

# The folder of the node to run: the machine's when its major is the main line's, else the cached line's.
bin_dir() {
  local current os arch dir pkg # not tmp: the EXIT trap that removes it runs after the function returns
  current=$(node -p process.versions.node 2>/dev/null || true)
  if [[ ${current%%.*} == "${version%%.*}" ]]; then
    dirname "$(command -v node)"
    return
  fi
  case "$(uname -s)" in Linux) os=linux ;; Darwin) os=darwin ;; *) os=unknown ;; esac
  case "$(uname -m)" in x86_64 | amd64) arch=x64 ;; aarch64 | arm64) arch=arm64 ;; *) arch=unknown ;; esac
  pkg="node-$os-$arch"
  dir="${XDG_CACHE_HOME:-$HOME/.cache}/echoperator/node-v$version"
  if [[ ! -x $dir/node_modules/$pkg/bin/node ]]; then
    echo "main-node: Node ${current:-(none)} is not the main line's major; installing $pkg@$version from npm into $dir" >&2
    mkdir -p "$(dirname "$dir")"
    # Into a folder of its own, renamed into place: an interrupted install leaves no half binary
    # that a later run would trust, and of two runs at once the second's rename finds the first's.
    tmp=$(mktemp -d "$dir.XXXXXX")
    chmod u=rwx,go=rx "$tmp"
    trap 'rm -rf "$tmp"' EXIT
    npm install --no-save --no-package-lock --no-audit --no-fund --prefix "$tmp" "$pkg@$version" >&2
    mv -T "$tmp" "$dir" 2>/dev/null || true
    rm -rf "$tmp"
    trap - EXIT
    if [[ ! -x $dir/node_modules/$pkg/bin/node ]]; then
      echo "main-node: $dir has no node_modules/$pkg/bin/node; remove the folder and run again" >&2
      exit 1
    fi
  fi
  echo "$dir/node_modules/$pkg/bin"
}

dir=$(bin_dir)
if [[ $1 == --path ]]; then
  echo "$dir"
  exit 0
fi
PATH="$dir:$PATH" exec "$@"
