# gateway.mk: the lance-namespace-gateway program (included by the
# top-level Makefile after PGXS).  It is built by the default target and
# installed into $(bindir) by "make install".

GW_PROGRAM = lance-namespace-gateway
GW_SRCS = $(wildcard src/gateway/*.c)
# the extension's rules, shared rather than copied
GW_SHARED_OBJS = src/name_rules.gw.o src/error_rules.gw.o src/manifest_rules.gw.o \
	src/location_rules.gw.o
GW_OBJS = $(GW_SRCS:.c=.gw.o) $(GW_SHARED_OBJS)
GW_HDRS = $(wildcard src/gateway/*.h)

GW_PKGS = jansson libcurl libcrypto libmicrohttpd
GW_CFLAGS = -std=gnu11 -O2 -g -pthread -Wall -Wextra -Werror -Wformat=2 \
	-Wno-format-nonliteral -fstack-protector-strong -D_FORTIFY_SOURCE=2 \
	-I$(shell $(PG_CONFIG) --includedir) -I$(srcdir)/src -DLANCE_EXTVERSION='"$(EXTVERSION)"' \
	$(shell pkg-config --cflags $(GW_PKGS) 2>/dev/null)
GW_LIBS = -pthread -L$(shell $(PG_CONFIG) --libdir) -lpq \
	-L$(shell $(PG_CONFIG) --pkglibdir) -lpgcommon -lpgport \
	$(shell pkg-config --libs $(GW_PKGS) 2>/dev/null || echo -ljansson -lcurl -lcrypto -lmicrohttpd)

all: $(GW_PROGRAM)

$(GW_PROGRAM): $(GW_OBJS)
	$(CC) -o $@ $(GW_OBJS) $(GW_LDFLAGS) $(GW_LIBS)

src/gateway/%.gw.o: src/gateway/%.c
	$(CC) $(GW_CFLAGS) -c -o $@ $<

# name_rules.c is built as a frontend file of PostgreSQL's
src/%_rules.gw.o: src/%_rules.c src/%_rules.h
	$(CC) $(GW_CFLAGS) -DFRONTEND -I$(shell $(PG_CONFIG) --includedir-server) -c -o $@ $<

$(GW_OBJS): $(GW_HDRS) src/error_rules.h src/lance_limits.h src/manifest_rules.h src/gateway/gateway.mk

.PHONY: install-gateway uninstall-gateway clean-gateway
install: install-gateway
install-gateway: $(GW_PROGRAM)
	$(MKDIR_P) '$(DESTDIR)$(bindir)'
	$(INSTALL_PROGRAM) $(GW_PROGRAM) '$(DESTDIR)$(bindir)/$(GW_PROGRAM)'

uninstall: uninstall-gateway
uninstall-gateway:
	rm -f '$(DESTDIR)$(bindir)/$(GW_PROGRAM)'

clean: clean-gateway
clean-gateway:
	rm -f $(GW_PROGRAM) $(GW_OBJS)
