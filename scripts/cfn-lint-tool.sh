#!/usr/bin/env bash
# cfn-lint, which test/unit/stackCfnLint.test.ts runs on the synthesized template (docs/deploy.md,
# "Checking the template"). Debian's package when the release has one (bookworm has none);
# otherwise the pinned version from PyPI, with pipx when it is there, else pip --user.
# Does nothing when cfn-lint is already on the PATH.
set -euo pipefail
CFN_LINT_VERSION=1.51.0
command -v cfn-lint >/dev/null 2>&1 && exit 0
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  apt-get update -qq
  if apt-cache policy cfn-lint 2>/dev/null | grep -q 'Candidate: [0-9]'; then
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq cfn-lint >/dev/null
    exit 0
  fi
fi
echo "Installing cfn-lint ${CFN_LINT_VERSION} from PyPI (no Debian package for this release)…" >&2
# A machine that cannot reach PyPI still runs the tests: the template check is then skipped,
# saying why (stackCfnLint.test.ts), rather than failing the whole run here.
if command -v pipx >/dev/null 2>&1; then
  pipx install "cfn-lint==${CFN_LINT_VERSION}" || echo "cfn-lint could not be installed (is PyPI reachable?): the template check will be skipped" >&2
elif python3 -m pip install --user --quiet "cfn-lint==${CFN_LINT_VERSION}"; then
  echo "cfn-lint is in $(python3 -m site --user-base)/bin: put it on the PATH" >&2
else
  echo "cfn-lint could not be installed (is PyPI reachable?): the template check will be skipped" >&2
fi
exit 0
