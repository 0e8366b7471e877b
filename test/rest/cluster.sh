#!/bin/bash
# cluster.sh: sourced by test/rest/run and test/interop/run.
#
# Starts a throw-away PostgreSQL cluster (initdb/pg_ctl as the current,
# non-root user; Unix socket only, in a temp directory), creates the
# lance_namespace extension in database "catalog", and starts the gateway
# on 127.0.0.1 with an ephemeral port.  Exports what the tests need:
#   GW_URL GW_BIN GW_ROOT GW_DB GW_LOG GW_PID GW_TMP PGDATA PGHOST PGPORT
#   PGDATABASE PG_BINDIR
# Everything is removed by gw_cleanup (installed as an EXIT trap).

set -euo pipefail

REPO_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
PG_CONFIG="${PG_CONFIG:-pg_config}"
PG_BINDIR="$("$PG_CONFIG" --bindir)"
export PG_BINDIR

if [ "$(id -u)" = 0 ]; then
	echo "error: run the tests as a non-root user (initdb refuses root)" >&2
	exit 2
fi

# Settings of the caller's environment must not leak into this cluster or
# into the gateways that the tests start.
_lance_gateway_bin="${LANCE_GATEWAY_BIN:-}"
for v in $(env | sed -n 's/^\(LANCE_GATEWAY_[A-Z_]*\)=.*/\1/p'); do unset "$v"; done
unset PGSERVICE PGSERVICEFILE PGOPTIONS PGTARGETSESSIONATTRS PGPASSWORD PGPASSFILE PGHOSTADDR

# The gateway: $GW_BIN, else $LANCE_GATEWAY_BIN (scripts/test), else the one
# built in the tree, else the installed one.
if [ -n "${GW_BIN:-}" ]; then
	:
elif [ -n "$_lance_gateway_bin" ] && [ -x "$_lance_gateway_bin" ]; then
	GW_BIN="$_lance_gateway_bin"
elif [ -x "$REPO_ROOT/lance-namespace-gateway" ]; then
	GW_BIN="$REPO_ROOT/lance-namespace-gateway"
elif [ -x "$PG_BINDIR/lance-namespace-gateway" ]; then
	GW_BIN="$PG_BINDIR/lance-namespace-gateway"
else
	echo "error: lance-namespace-gateway not found (run make && make install)" >&2
	exit 2
fi
export GW_BIN

GW_TMP="$(mktemp -d "${LANCE_TEST_WORKDIR:-${TMPDIR:-/tmp}}/lance_gw_test.XXXXXX")"
export GW_TMP
export PGDATA="$GW_TMP/pgdata"
# Unix socket paths are limited to ~107 bytes: use a short directory if needed.
if [ "${#GW_TMP}" -gt 80 ]; then
	GW_SOCK="$(mktemp -d /tmp/lgw.XXXXXX)"
else
	GW_SOCK="$GW_TMP"
fi
export PGHOST="$GW_SOCK"
export PGPORT="${GW_TEST_PGPORT:-54329}"
export PGDATABASE=catalog
PGUSER="$(id -un)"
export PGUSER
export GW_ROOT="$GW_TMP/root"
export GW_LOG="$GW_TMP/gateway.log"
export GW_DB="host=$PGHOST port=$PGPORT dbname=$PGDATABASE"
GW_PID=""

# LANCE_SANITIZE=1: build an ASan+UBSan gateway from the tree into $GW_TMP
# and use it; any sanitizer report in a gateway log fails the run.
if [ "${LANCE_SANITIZE:-}" = 1 ]; then
	_san_cc="${LANCE_SANITIZE_CC:-gcc}"
	echo "sanitize: building an ASan/UBSan gateway with $_san_cc" >&2
	# shellcheck disable=SC2046
	"$_san_cc" -std=gnu11 -g -O1 -fno-omit-frame-pointer -fsanitize=address,undefined -DFRONTEND \
		-I"$("$PG_CONFIG" --includedir-server)" -c -o "$GW_TMP/name_rules.o" "$REPO_ROOT"/src/name_rules.c >&2
	# the extension version the gateway needs, as gateway.mk passes it
	_san_ver="$(sed -n "s/^default_version = '\(.*\)'$/\1/p" "$REPO_ROOT/lance_namespace.control")"
	"$_san_cc" -std=gnu11 -g -O1 -fno-omit-frame-pointer -fsanitize=address,undefined \
		-DLANCE_EXTVERSION="\"$_san_ver\"" -fno-sanitize-recover=undefined -pthread -I"$("$PG_CONFIG" --includedir)" -I"$REPO_ROOT/src" "$GW_TMP/name_rules.o" \
		$(pkg-config --cflags jansson libcurl libcrypto libmicrohttpd) "$REPO_ROOT"/src/error_rules.c "$REPO_ROOT"/src/manifest_rules.c "$REPO_ROOT"/src/gateway/*.c \
		-o "$GW_TMP/lance-namespace-gateway-asan" -L"$("$PG_CONFIG" --libdir)" -lpq -L"$("$PG_CONFIG" --pkglibdir)" -lpgcommon -lpgport \
		$(pkg-config --libs jansson libcurl libcrypto libmicrohttpd) >&2
	GW_BIN="$GW_TMP/lance-namespace-gateway-asan"
	export GW_BIN
	export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:halt_on_error=1:log_path=$GW_TMP/asan}"
	export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1:log_path=$GW_TMP/ubsan}"
fi

# Sanitizer reports of the gateways of this run (LANCE_SANITIZE=1).
gw_sanitizer_reports() {
	local f found=1
	for f in "$GW_TMP"/asan.* "$GW_TMP"/ubsan.* "$GW_LOG"; do
		[ -f "$f" ] || continue
		if grep -qE 'ERROR: (Address|Leak)Sanitizer|Sanitizer has encountered a fatal error|runtime error:' "$f"; then
			echo "---- sanitizer report in $f ----" >&2
			head -n 80 "$f" >&2
			found=0
		fi
	done
	return $found
}

gw_cleanup() {
	local rc=$?
	if [ -n "${GW_PID:-}" ] && kill -0 "$GW_PID" 2>/dev/null; then
		kill -TERM "$GW_PID" 2>/dev/null || true
		for _ in $(seq 1 50); do kill -0 "$GW_PID" 2>/dev/null || break; sleep 0.1; done
		kill -KILL "$GW_PID" 2>/dev/null || true
	fi
	if [ "${LANCE_SANITIZE:-}" = 1 ]; then
		if gw_sanitizer_reports; then
			echo "sanitize: FAILED (see the reports above)" >&2
			rc=1
		else
			echo "sanitize: no AddressSanitizer, LeakSanitizer or UBSan report" >&2
		fi
	fi
	if [ -f "$PGDATA/postmaster.pid" ]; then
		"$PG_BINDIR/pg_ctl" -D "$PGDATA" -m immediate -w stop >/dev/null 2>&1 || true
	fi
	if [ "$rc" != 0 ] && [ -f "$GW_LOG" ]; then
		echo "---- last lines of the gateway log ----" >&2
		tail -n 40 "$GW_LOG" >&2 || true
	fi
	if [ "$GW_SOCK" != "$GW_TMP" ]; then
		rm -rf "$GW_SOCK"
	fi
	if [ -z "${GW_KEEP_TMP:-${LANCE_KEEP_TMP:-}}" ]; then
		rm -rf "$GW_TMP"
	else
		echo "kept $GW_TMP" >&2
	fi
	exit "$rc"
}
trap gw_cleanup EXIT
trap 'exit 130' INT TERM

gw_start_cluster() {
	"$PG_BINDIR/initdb" -D "$PGDATA" -U "$PGUSER" -A trust --no-sync -E UTF8 --locale=C >"$GW_TMP/initdb.log" 2>&1 ||
		{ cat "$GW_TMP/initdb.log" >&2; return 1; }
	"$PG_BINDIR/pg_ctl" -D "$PGDATA" -w -l "$GW_TMP/postgres.log" \
		-o "-p $PGPORT -k $GW_SOCK -c listen_addresses= -c fsync=off -c max_connections=100" \
		start >/dev/null || { cat "$GW_TMP/postgres.log" >&2; return 1; }
	"$PG_BINDIR/createdb" "$PGDATABASE"
	"$PG_BINDIR/psql" -X -q -v ON_ERROR_STOP=1 -c "CREATE EXTENSION lance_namespace" >/dev/null
	mkdir -p "$GW_ROOT"
}

# gw_start_gateway [extra args...]: start on 127.0.0.1:0 and read the port.
gw_start_gateway() {
	: >"$GW_LOG"
	"$GW_BIN" --listen 127.0.0.1:0 --db "$GW_DB" --root "$GW_ROOT" "$@" >>"$GW_LOG" 2>&1 &
	GW_PID=$!
	export GW_PID
	local port=""
	for _ in $(seq 1 100); do
		port="$(sed -n 's/.*listening on 127\.0\.0\.1:\([0-9]*\).*/\1/p' "$GW_LOG" | head -n 1)"
		[ -n "$port" ] && break
		kill -0 "$GW_PID" 2>/dev/null || break
		sleep 0.1
	done
	if [ -z "$port" ]; then
		echo "error: the gateway did not start:" >&2
		cat "$GW_LOG" >&2
		return 1
	fi
	export GW_URL="http://127.0.0.1:$port"
}
