# lance_namespace: PGXS build of the extension and the REST gateway.

EXTENSION = lance_namespace
# the version is the control file's default_version, for both halves
EXTVERSION := $(shell sed -n "s/^default_version = '\(.*\)'/\1/p" $(EXTENSION).control)

MODULE_big = lance_namespace
OBJS = \
	src/lance_namespace.o \
	src/errors.o \
	src/error_rules.o \
	src/ident.o \
	src/name_rules.o \
	src/manifest_rules.o \
	src/jsonutil.o \
	src/pagetoken.o \
	src/spiutil.o \
	src/catalog.o \
	src/entry_probe.o \
	src/catalog_oids.o \
	src/namespace_ops.o \
	src/table_ops.o \
	src/version_ops.o \
	src/rest_bindings.o \
	src/rest_table.o \
	src/rest_acl.o \
	src/version_check.o \
	src/history.o \
	src/audit.o \
	src/branch_ops.o \
	src/tag_ops.o \
	src/txn_ops.o \
	src/txn_alter.o \
	src/batch_commit.o \
	src/auth.o \
	src/privileges.o \
	src/postgrest.o \
	src/limits.o \
	src/location_rules.o \
	src/table_location.o

DATA = $(wildcard sql/$(EXTENSION)--*.sql)

# pg_regress: inputs in sql/, expected outputs in expected/ (PGXS default).
REGRESS = $(patsubst sql/%.sql,%,$(filter-out sql/$(EXTENSION)--%,$(sort $(wildcard sql/*.sql))))
REGRESS_OPTS = --inputdir=.

# Isolation specs live under test/ (test/specs, test/expected).
ISOLATION = $(patsubst test/specs/%.spec,%,$(sort $(wildcard test/specs/*.spec)))
ISOLATION_OPTS = --inputdir=test

# TAP tests (PostgreSQL::Test::Cluster) under test/t.
TAP_TESTS = 1
PROVE_TESTS = $(sort $(wildcard test/t/*.pl))

PG_CPPFLAGS = -I$(srcdir)/src
PG_CFLAGS = -Wall -Wextra -Werror -Wno-unused-parameter -Wno-missing-field-initializers \
	-Wno-sign-compare -Wno-cast-function-type

EXTRA_CLEAN = results regression.diffs regression.out output_iso tmp_check log

PG_CONFIG ?= pg_config
PGXS := $(shell $(PG_CONFIG) --pgxs)
include $(PGXS)

# PGXS tracks no header dependencies: rebuild every object when a header
# changes (the plan ids of spiutil.c are an enum in lance_namespace.h).
$(OBJS): $(wildcard src/*.h)

# The REST gateway is a separate program with its own rules.
-include src/gateway/gateway.mk

# Benchmarks (issue 4): builds and installs, then runs bench/run, which
# starts its own cluster and gateway and prints one table of ratios; see
# BENCHMARKS.md.  "make bench BENCH_ARGS=--smoke" is the short CI mode.
.PHONY: bench
bench: all install
	./bench/run $(BENCH_ARGS)
