#!/usr/bin/env bash
# Installs what the data-path end-to-end test (test/e2e/datapath.test.ts) and `npm run demo -- datapath` need
# besides Go: nft (nftables) and ip (iproute2), with apt-get, only when missing. Root only, as the test itself.
set -euo pipefail
missing=()
command -v nft >/dev/null 2>&1 || missing+=(nftables)
command -v ip >/dev/null 2>&1 || missing+=(iproute2)
command -v unshare >/dev/null 2>&1 || missing+=(util-linux)
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi
if [ "$(id -u)" != 0 ]; then
  echo "install-net-tools: ${missing[*]} missing, and installing them needs root" >&2
  exit 1
fi
apt-get update -qq
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"
