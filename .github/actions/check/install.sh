#!/usr/bin/env bash
# The gpumem check action's install step: puts a gpumem CLI at $1 (a path to create).
#
#   INPUT_BUILD_FROM_SOURCE=true    build the `gpumem` target from the action's own source tree (the
#                                   repository at the ref the workflow named in `uses:`), with the build
#                                   dependencies from the runner's Debian/Ubuntu archive
#   INPUT_BUILD_FROM_SOURCE=false   download the release INPUT_VERSION's Linux x86-64 CLI from
#                                   INPUT_REPOSITORY's GitHub releases and check it against the
#                                   release's SHA256SUMS
set -euo pipefail

if [ $# -ne 1 ]; then
  echo "usage: install.sh DEST" >&2
  exit 2
fi
dest=$1
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
src=$(cd "$here/../../.." && pwd)  # the action lives at .github/actions/check in gpumem's tree
mkdir -p "$(dirname "$dest")"

SUDO=""
if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi

case "${INPUT_BUILD_FROM_SOURCE:-true}" in
  true | True | TRUE | yes | 1) mode=build ;;
  false | False | FALSE | no | 0) mode=download ;;
  *) echo "gpumem check: build-from-source must be true or false, got '${INPUT_BUILD_FROM_SOURCE}'" >&2; exit 2 ;;
esac

if [ "$mode" = build ]; then
  if ! grep -qs '^project(gpumem' "$src/CMakeLists.txt"; then
    echo "gpumem check: no gpumem source tree at $src to build from" >&2
    exit 1
  fi
  command -v apt-get >/dev/null || {
    echo "gpumem check: building needs a Debian or Ubuntu runner (apt-get); set build-from-source: false" \
         "and a version to download the Linux x86-64 CLI instead" >&2
    exit 1
  }
  # What the CLI target needs, as .ci/bootstrap installs it and CMake's find_package asks for it:
  # a C++17 compiler and CMake, nlohmann-json (the core), CLI11 (the command line), libcurl (the Hub
  # client) and yaml-cpp (the config readers).
  packages=(cmake make g++ pkg-config nlohmann-json3-dev libcli11-dev libcurl4-openssl-dev libyaml-cpp-dev)
  missing=()
  for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  if [ ${#missing[@]} -gt 0 ]; then
    echo "gpumem check: apt-get install ${missing[*]}"
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
  fi
  build="${RUNNER_TEMP:-/tmp}/gpumem-check-build"
  cmake -S "$src" -B "$build" -DCMAKE_BUILD_TYPE=Release -DGPUMEM_BUILD_TESTS=OFF -DGPUMEM_BUILD_UI=OFF
  cmake --build "$build" --target gpumem -j"$(nproc 2>/dev/null || echo 2)"
  cp "$build/core/cli/gpumem" "$dest"
else
  version=${INPUT_VERSION:-}
  version=${version#v}
  [ -n "$version" ] || {
    echo "gpumem check: build-from-source is false, so the version input must name a release (e.g. 0.1.0)" >&2
    exit 1
  }
  [[ "$version" =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]] || {
    echo "gpumem check: version must look like 0.1.0, got '$INPUT_VERSION'" >&2
    exit 1
  }
  [ "$(uname -s)-$(uname -m)" = Linux-x86_64 ] || {
    echo "gpumem check: releases have a Linux x86-64 CLI only; this runner is $(uname -s) $(uname -m):" \
         "use build-from-source: true" >&2
    exit 1
  }
  repo=${INPUT_REPOSITORY:-}
  if [ -z "$repo" ]; then
    # A remote action is unpacked at .../_actions/OWNER/REPO/REF/.github/actions/check.
    case "$here" in
      */_actions/*/*/*/.github/actions/check)
        rest=${here##*/_actions/}  # OWNER/REPO/REF/.github/actions/check
        owner=${rest%%/*}
        rest=${rest#*/}
        repo="$owner/${rest%%/*}"
        ;;
      *) repo=${GITHUB_REPOSITORY:-} ;;
    esac
  fi
  [ -n "$repo" ] || { echo "gpumem check: set the repository input (owner/name of gpumem's releases)" >&2; exit 1; }
  base="${GITHUB_SERVER_URL:-https://github.com}/$repo/releases/download/v$version"
  asset="gpumem-$version-linux-x86_64"
  tmp=$(mktemp -d)
  echo "gpumem check: downloading $base/$asset"
  curl -fsSL --retry 3 -o "$tmp/$asset" "$base/$asset"
  curl -fsSL --retry 3 -o "$tmp/SHA256SUMS" "$base/SHA256SUMS"
  (cd "$tmp" && grep " $asset\$" SHA256SUMS | sha256sum -c -) || {
    echo "gpumem check: $asset does not match the release's SHA256SUMS" >&2
    exit 1
  }
  cp "$tmp/$asset" "$dest"
  rm -rf "$tmp"
fi
chmod +x "$dest"
"$dest" version
