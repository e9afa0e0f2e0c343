#!/usr/bin/env bash
# Development certificate of the WebTransport edge (services/edge-webtransport).
#
#   bash scripts/dev-cert.sh [--force]
#
# Makes a self-signed ECDSA P-256 certificate for localhost and 127.0.0.1, valid 13 days, in
# .data/webtransport/{cert.pem,key.pem} (or WT_DEV_CERT_DIR), and regenerates it when it is missing,
# unreadable, or expires within a day. Browsers accept a self-signed WebTransport server only
# through `serverCertificateHashes`, and only for an ECDSA certificate valid at most 14 days
# (W3C WebTransport, "custom certificate requirements"); the pages read the hash from the edge's
# /cert-hash. Production sets WT_CERT_FILE / WT_KEY_FILE instead and never runs this.
# Prints the certificate path on stdout.
set -euo pipefail
# shellcheck source=scripts/_common.sh
source "$(dirname "${BASH_SOURCE[0]}")/_common.sh"

dir="${WT_DEV_CERT_DIR:-$DATA_DIR/webtransport}"
cert="$dir/cert.pem"
key="$dir/key.pem"
force=0
case "${1:-}" in
  --force) force=1 ;;
  "") ;;
  *) die dev-cert "unknown argument '$1' (usage: scripts/dev-cert.sh [--force])" ;;
esac

command -v openssl >/dev/null || die dev-cert "openssl not found: install it (apt-get install -y openssl)"

# Current when both files exist, the certificate parses, and it is still valid in 24 hours.
current() {
  [[ -s "$cert" && -s "$key" ]] || return 1
  openssl x509 -in "$cert" -noout -checkend 86400 >/dev/null 2>&1
}

if ((force == 0)) && current; then
  echo "$cert"
  exit 0
fi

mkdir -p "$dir"
tmp="$(mktemp -d "$dir/.new.XXXXXX")"
trap 'rm -rf "$tmp"' EXIT
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -sha256 -days 13 -nodes \
  -subj /CN=localhost \
  -addext subjectAltName=DNS:localhost,IP:127.0.0.1 \
  -addext basicConstraints=critical,CA:FALSE \
  -keyout "$tmp/key.pem" -out "$tmp/cert.pem" >/dev/null 2>&1 ||
  die dev-cert "openssl could not create the certificate"
chmod 600 "$tmp/key.pem"
# Key first, then certificate: a reader that sees the new certificate also finds its key.
mv -f "$tmp/key.pem" "$key"
mv -f "$tmp/cert.pem" "$cert"
say dev-cert "new certificate $cert (ECDSA P-256, valid until $(openssl x509 -in "$cert" -noout -enddate | cut -d= -f2))"
echo "$cert"
