#!/usr/bin/env bash
# Makes a private CA and a serving certificate for the webhook Service with openssl.
#
#   certs/make-certs.sh [--out DIR] [--namespace NS] [--service NAME] [--days N] [--force]
#
# Writes DIR/ca.crt, DIR/ca.key, DIR/tls.crt, DIR/tls.key (default DIR: certs/out, git-ignored). The serving
# certificate names NAME, NAME.NS, NAME.NS.svc, NAME.NS.svc.cluster.local, localhost, 127.0.0.1 and ::1, so the
# same files serve a kube-apiserver (which dials NAME.NS.svc) and local tests. Existing files are kept unless
# --force is given or they no longer match the requested names. Keys are never meant to be committed.
set -euo pipefail

out="$(cd "$(dirname "$0")" && pwd)/out"
namespace="shortcut-webhook"
service="shortcut-webhook"
days=365
force=0
while [ $# -gt 0 ]; do
  case "$1" in
    --out) out="$2"; shift 2 ;;
    --namespace) namespace="$2"; shift 2 ;;
    --service) service="$2"; shift 2 ;;
    --days) days="$2"; shift 2 ;;
    --force) force=1; shift ;;
    -h|--help) sed -n '2,10p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "make-certs: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done

if ! command -v openssl >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "make-certs: installing openssl" >&2
    (apt-get update -qq && apt-get install -y -qq openssl) >&2
  else
    echo "make-certs: openssl is required (apt-get install openssl)" >&2; exit 1
  fi
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
