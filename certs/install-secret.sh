#!/usr/bin/env bash
# Puts the webhook's TLS material into a cluster for the plain manifests (the Helm chart does this itself).
#
#   certs/install-secret.sh [--namespace NS] [--service NAME] [--secret NAME] [--webhook NAME] [--out DIR]
#                           [--days N] [--force] [--context CTX] [--print-ca-bundle]
#
# 1. makes (or keeps) a CA and a serving certificate for NAME.NS.svc with certs/make-certs.sh (files in DIR,
#    default certs/out),
# 2. creates the namespace if it is missing and applies Secret SECRET (type kubernetes.io/tls: tls.crt, tls.key,
#    ca.crt; default shortcut-webhook-tls), which the running pods pick up without a restart,
# 3. patches the CA into every webhook of MutatingWebhookConfiguration WEBHOOK (default shortcut-webhook) when it
#    exists; run it again after `kubectl apply -f manifests/` otherwise.
# --print-ca-bundle only prints the base64 caBundle and touches no cluster. KUBECTL names the kubectl to use.
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
namespace="shortcut-webhook"
service="shortcut-webhook"
secret="shortcut-webhook-tls"
webhook="shortcut-webhook"
out="$here/out"
days=365
force=()
context=()
print_only=0
while [ $# -gt 0 ]; do
  case "$1" in
    --namespace) namespace="$2"; shift 2 ;;
    --service) service="$2"; shift 2 ;;
    --secret) secret="$2"; shift 2 ;;
    --webhook) webhook="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    --days) days="$2"; shift 2 ;;
    --force) force=(--force); shift ;;
    --context) context=(--context "$2"); shift 2 ;;
    --print-ca-bundle) print_only=1; shift ;;
    -h|--help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 0 ;;
    *) echo "install-secret: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done

"$here/make-certs.sh" --out "$out" --namespace "$namespace" --service "$service" --days "$days" ${force[@]+"${force[@]}"}

# base64 without line breaks on both GNU and BSD base64.
b64() { base64 < "$1" | tr -d '\n'; }
ca_bundle="$(b64 "$out/ca.crt")"
if [ "$print_only" = 1 ]; then
  printf '%s\n' "$ca_bundle"
  exit 0
fi

kubectl_bin="${KUBECTL:-kubectl}"
# The ${a[@]+...} form keeps empty arrays working under `set -u` in bash 3.2 (macOS).
k() { "$kubectl_bin" ${context[@]+"${context[@]}"} "$@"; }

if ! k get namespace "$namespace" >/dev/null 2>&1; then
  k create namespace "$namespace" >&2
fi

# Applied from a manifest built here, so a second run updates the Secret in place (rotation) instead of failing.
k apply -f - >&2 <<SECRET
apiVersion: v1
kind: Secret
metadata:
  name: ${secret}
  namespace: ${namespace}
  labels:
    app.kubernetes.io/name: shortcut-webhook
    app.kubernetes.io/part-of: shortcut-webhook
type: kubernetes.io/tls
data:
  tls.crt: $(b64 "$out/tls.crt")
  tls.key: $(b64 "$out/tls.key")
  ca.crt: ${ca_bundle}
SECRET

if names="$(k get mutatingwebhookconfiguration "$webhook" -o jsonpath='{range .webhooks[*]}{.name}{"\n"}{end}' 2>/dev/null)"; then
  ops=""
  index=0
  while IFS= read -r name; do
    [ -n "$name" ] || continue
    ops="${ops:+$ops,}{\"op\":\"add\",\"path\":\"/webhooks/${index}/clientConfig/caBundle\",\"value\":\"${ca_bundle}\"}"
    index=$((index + 1))
  done <<< "$names"
  if [ "$index" -gt 0 ]; then
    k patch mutatingwebhookconfiguration "$webhook" --type=json -p "[${ops}]" >&2
    echo "install-secret: Secret ${namespace}/${secret} applied, caBundle set on ${index} webhook(s) of ${webhook}" >&2
    exit 0
  fi
fi
echo "install-secret: Secret ${namespace}/${secret} applied; MutatingWebhookConfiguration ${webhook} not found:" >&2
echo "install-secret: run this script again after 'kubectl apply -f manifests/' to set its caBundle" >&2
