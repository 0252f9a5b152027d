#!/usr/bin/env bash
# What the namespaces sandbox needs (docs/local.md, "What worker code can do"): bubblewrap,
# slirp4netns, and iproute2 + util-linux for its routes. Installed with apt-get when missing
# and this runs as root (CI, a fresh container); otherwise it says what to install. The sandbox
# tests fail, never skip, without them.
set -euo pipefail
missing=()
for tool in bwrap slirp4netns ip nsenter; do
  command -v "$tool" >/dev/null 2>&1 || [ -x "/usr/sbin/$tool" ] || [ -x "/sbin/$tool" ] || missing+=("$tool")
done
[ ${#missing[@]} -eq 0 ] && exit 0
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "Installing what the sandbox needs (missing: ${missing[*]})…" >&2
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq bubblewrap slirp4netns iproute2 util-linux >/dev/null
else
  echo "The sandbox tests need ${missing[*]}: sudo apt-get install bubblewrap slirp4netns iproute2" >&2
fi
