/*-------------------------------------------------------------------------
 *
 * name_rules.h
 *	  The rules for names and string identifiers, as pure functions that
 *	  build both into the extension and into the fuzz harness.
 *
 *-------------------------------------------------------------------------
 */
#ifndef LANCE_NAME_RULES_H
#define LANCE_NAME_RULES_H

#include "lance_limits.h"

typedef enum LanceNameProblem
{
	LANCE_NAME_OK = 0,
	LANCE_NAME_EMPTY,
	LANCE_NAME_TOO_LONG,
	LANCE_NAME_BAD_UTF8,
	LANCE_NAME_CONTROL,
	LANCE_NAME_SLASH,
	LANCE_NAME_DOT
} LanceNameProblem;

/* One name of a string identifier: len bytes at start. */
typedef struct LanceIdSegment
{
	const char *start;
	int			len;
} LanceIdSegment;

extern bool lance_valid_utf8(const char *s, int len);
extern LanceNameProblem lance_name_problem(const char *name, int len);
extern const char *lance_delimiter_problem(const char *delimiter);
extern int	lance_split_id(const char *str, const char *delimiter,
						   LanceIdSegment *segments, int max_segments);

#endif							/* LANCE_NAME_RULES_H */
