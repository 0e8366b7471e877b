/*-------------------------------------------------------------------------
 *
 * location_rules.h
 *	  The comparable form of a table location ("location key"), defined
 *	  once for the extension, which keeps every live table's location
 *	  apart from every other's, and the gateway.
 *
 *-------------------------------------------------------------------------
 */
#ifndef LANCE_LOCATION_RULES_H
#define LANCE_LOCATION_RULES_H

#include <stdbool.h>
#include <stddef.h>

extern const char *lance_location_key(const char *location, char *buf, size_t size);
extern bool lance_location_within(const char *key, const char *outer);
extern int	lance_location_depth(const char *key);
extern size_t lance_location_prefix(const char *key, int depth);

#endif							/* LANCE_LOCATION_RULES_H */
