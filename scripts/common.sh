# Shared helpers for scripts/run and scripts/test.  Sourced, not executed.
# shellcheck shell=bash

PG_MAJOR=15
PG_BINDIR=/usr/lib/postgresql/$PG_MAJOR/bin

# Debian packages needed to build the extension and the gateway and to run them.
BUILD_PACKAGES=(
	build-essential
	postgresql-$PG_MAJOR
	postgresql-server-dev-$PG_MAJOR
	postgresql-contrib
	libpq-dev
	libjansson-dev
	libcurl4-openssl-dev
	libssl-dev
	libmicrohttpd-dev
	pkg-config
	curl
)

# Debian packages of the fuzz step (test/fuzz/run): clang with the libFuzzer
# and sanitizer runtimes.  postgresql-server-dev-15 already pulls in clang-14.
FUZZ_PACKAGES=(
	clang-14
	libclang-rt-14-dev
)

log() { printf '==> %s\n' "$*"; }
warn() { printf 'warning: %s\n' "$*" >&2; }
die() { printf 'error: %s\n' "$*" >&2; exit 1; }

# Run a command as root: directly when we are root, else through sudo.
as_root() {
	if [ "$(id -u)" -eq 0 ]; then
		"$@"
	elif command -v sudo >/dev/null 2>&1; then
		sudo "$@"
	else
		die "need root (or sudo) to run: $*"
	fi
}

# Is one package (or the command it provides) already there?
package_present() {
	local pkg=$1
	case $pkg in
		# nodejs from other sources (e.g. NodeSource) bundles npm; the Debian
		# npm package would conflict with it, so accept the commands.
		nodejs) command -v node >/dev/null 2>&1 && return 0 ;;
		npm) command -v npm >/dev/null 2>&1 && return 0 ;;
	esac
	[ "$(dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null)" = "install ok installed" ]
}

# Install whichever of the named Debian packages are missing; runs
# apt-get update once, and only if something is missing.
ensure_packages() {
	local missing=() pkg
	for pkg in "$@"; do
		package_present "$pkg" || missing+=("$pkg")
	done
	if [ ${#missing[@]} -eq 0 ]; then
		log "Debian packages already installed: $*"
		return 0
	fi
	command -v apt-get >/dev/null 2>&1 || die "apt-get not found; install by hand: ${missing[*]}"
	log "Installing missing Debian packages: ${missing[*]}"
	as_root env DEBIAN_FRONTEND=noninteractive apt-get update -q \
		|| die "apt-get update failed"
	as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q \
		-o Dpkg::Options::=--force-confdef -o Dpkg::Options::=--force-confold \
		"${missing[@]}" \
		|| die "apt-get install failed for: ${missing[*]}"
}

# The pg_config of PostgreSQL 15 (Debian's /usr/bin/pg_config picks the
# newest server-dev installed, which need not be 15).
find_pg_config() {
	if [ -n "${PG_CONFIG:-}" ]; then
		printf '%s\n' "$PG_CONFIG"
	elif [ -x "$PG_BINDIR/pg_config" ]; then
		printf '%s\n' "$PG_BINDIR/pg_config"
	elif command -v pg_config >/dev/null 2>&1; then
		command -v pg_config
	else
		die "pg_config not found (is postgresql-server-dev-$PG_MAJOR installed?)"
	fi
}

# make && make install in the source tree $1.
build_and_install() {
	local src=$1 pg_config
	pg_config=$(find_pg_config)
	log "Building in $src (PG_CONFIG=$pg_config)"
	make -C "$src" PG_CONFIG="$pg_config" || die "make failed"
	log "Installing the extension (make install)"
	as_root make -C "$src" PG_CONFIG="$pg_config" install || die "make install failed"
}

# The user that owns the PostgreSQL clusters we create: initdb refuses root,
# so root uses the postgres system user; anyone else uses themselves.
cluster_user() {
	if [ "$(id -u)" -eq 0 ]; then
		id postgres >/dev/null 2>&1 || die "system user 'postgres' is missing (is postgresql-$PG_MAJOR installed?)"
		printf 'postgres\n'
	else
		id -un
	fi
}

# Run a command as the cluster user ($CLUSTER_USER), with its HOME.
as_cluster_user() {
	if [ "$(id -un)" = "$CLUSTER_USER" ]; then
		"$@"
	else
		local home
		home=$(getent passwd "$CLUSTER_USER" | cut -d: -f6)
		# From /, since the caller's directory (e.g. a clone under /root) may
		# be closed to that user; every path we pass is absolute.
		(cd / && runuser -u "$CLUSTER_USER" -- env HOME="${home:-/tmp}" "$@")
	fi
}

# Is something accepting TCP connections on 127.0.0.1:$1?
port_in_use() {
	(exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}
