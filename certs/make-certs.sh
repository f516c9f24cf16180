#!/usr/bin/env bash
# Makes a private CA and a serving certificate for the webhook Service with openssl.
#
#   certs/make-certs.sh [--out DIR] [--namespace NS] [--service NAME] [--days N] [--force]
#
# Writes DIR/ca.crt, DIR/ca.key, DIR/tls.crt, DIR/tls.key (default DIR: certs/out, git-ignored). The serving
# certificate names NAME, NAME.NS, NAME.NS.svc, NAME.NS.svc.cluster.local, localhost, 127.0.0.1 and ::1, so the
# same files serve a kube-apiserver (which dials NAME.NS.svc) and local tests. Existing files are kept unless
# --force is given or they no longer match the requested names. Keys are never meant to be committed.
# Needs openssl (it installs nothing itself). Exit codes: 0 done, 2 a bad argument, other: openssl missing or failed.
set -euo pipefail

# The comment block at the top, and nothing after it.
usage() { awk 'NR == 1 { next } /^#/ { sub(/^# ?/, ""); print; next } { exit }' "$0"; }
bad() { echo "make-certs: $1 (see --help)" >&2; exit 2; }

out="$(cd "$(dirname "$0")" && pwd)/out"
namespace="shortcut-webhook"
service="shortcut-webhook"
days=365
force=0
while [ $# -gt 0 ]; do
  case "$1" in
    --out|--namespace|--service|--days)
      if [ $# -lt 2 ] || [ -z "$2" ] || [ "${2#--}" != "$2" ]; then bad "$1 needs a value"; fi
      case "$1" in
        --out) out="$2" ;;
        --namespace) namespace="$2" ;;
        --service) service="$2" ;;
        --days) days="$2" ;;
      esac
      shift 2 ;;
    --out=*|--namespace=*|--service=*|--days=*) bad "write $1 as ${1%%=*} ${1#*=}" ;;
    --force) force=1; shift ;;
    -h|--help) usage; exit 0 ;;
    *) bad "unknown argument $1" ;;
  esac
done
# Names the certificate carries: DNS labels, as Kubernetes requires of a Service and a namespace.
label='^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$'
[[ "$namespace" =~ $label ]] || bad "--namespace $namespace: expected a DNS label (lower-case letters, digits, '-')"
[[ "$service" =~ $label ]] || bad "--service $service: expected a DNS label (lower-case letters, digits, '-')"
[[ "$days" =~ ^[1-9][0-9]{0,4}$ ]] || bad "--days $days: expected a whole number of days from 1 to 99999"

if ! command -v openssl >/dev/null 2>&1; then
  echo "make-certs: openssl is required and not installed (e.g. apt-get install openssl)" >&2; exit 1
fi

host="${service}.${namespace}.svc"
mkdir -p "$out"
if [ "$force" = 0 ] && [ -s "$out/tls.crt" ] && [ -s "$out/tls.key" ] && [ -s "$out/ca.crt" ] \
  && openssl x509 -in "$out/tls.crt" -noout -checkend 86400 >/dev/null 2>&1 \
  && openssl x509 -in "$out/tls.crt" -noout -ext subjectAltName 2>/dev/null | grep -q "DNS:${host}\b" \
  && openssl verify -CAfile "$out/ca.crt" "$out/tls.crt" >/dev/null 2>&1; then
  echo "make-certs: keeping the certificates in $out" >&2
  exit 0
fi

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
umask 077

openssl req -x509 -new -nodes -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -sha256 -days "$days" \
  -subj "/CN=${service}-ca" -addext "basicConstraints=critical,CA:TRUE" \
  -addext "keyUsage=critical,keyCertSign,cRLSign" \
  -keyout "$work/ca.key" -out "$work/ca.crt" 2>/dev/null

cat > "$work/ext.cnf" <<EXT
basicConstraints=critical,CA:FALSE
keyUsage=critical,digitalSignature,keyEncipherment
extendedKeyUsage=serverAuth
subjectAltName=DNS:${service},DNS:${service}.${namespace},DNS:${host},DNS:${host}.cluster.local,DNS:localhost,IP:127.0.0.1,IP:::1
EXT
openssl req -new -nodes -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -subj "/CN=${host}" \
  -keyout "$work/tls.key" -out "$work/tls.csr" 2>/dev/null
openssl x509 -req -in "$work/tls.csr" -CA "$work/ca.crt" -CAkey "$work/ca.key" -CAcreateserial \
  -days "$days" -sha256 -extfile "$work/ext.cnf" -out "$work/tls.crt" 2>/dev/null
openssl verify -CAfile "$work/ca.crt" "$work/tls.crt" >/dev/null

# Key before certificate, each by rename: a watcher never sees a certificate whose key is not there yet.
for file in ca.key ca.crt tls.key tls.crt; do
  cp "$work/$file" "$out/.$file.tmp" && mv -f "$out/.$file.tmp" "$out/$file"
done
chmod 600 "$out/ca.key" "$out/tls.key"
chmod 644 "$out/ca.crt" "$out/tls.crt"
echo "make-certs: wrote CA and serving certificate for ${host} to $out" >&2
