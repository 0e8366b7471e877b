/*-------------------------------------------------------------------------
 *
 * ident.c
 *	  Names and identifiers: validation, and the list and string styles.
 *
 * An identifier is a text[] of names, from (not including) the root down to
 * the object.  The root namespace has the empty identifier.  Names become
 * path segments of table locations, hence the rules of lance_validate_name.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "fmgr.h"
#include "mb/pg_wchar.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"

#include "lance_namespace.h"
#include "name_rules.h"

/*
 * validate_text
 *		Raise InvalidInput if s is longer than max bytes or contains a
 *		control character.
 */
static void
validate_text(const char *op, const char *what, const char *s, int max)
{
	if (strlen(s) > (size_t) max)
		lance_error(LANCE_INVALID_INPUT,
					errmsg("%s: %s is longer than %d bytes", op, what, max));
	for (const unsigned char *p = (const unsigned char *) s; *p; p++)
		if (*p < 0x20 || *p == 0x7F)
			lance_error(LANCE_INVALID_INPUT,
						errmsg("%s: %s contains a control character", op, what));
}

/*
 * lance_validate_path
 *		Raise InvalidInput unless path (a location or manifest path the
 *		catalog records) is a non-empty string of at most
 *		LANCE_MAX_PATH_BYTES without control characters.
 */
void
lance_validate_path(const char *op, const char *what, const char *path)
{
	if (path == NULL || path[0] == '\0')
		lance_error(LANCE_INVALID_INPUT,
					errmsg("%s: %s must not be empty", op, what));
	validate_text(op, what, path, LANCE_MAX_PATH_BYTES);
}

/*
 * lance_validate_e_tag
 *		Raise InvalidInput unless e_tag (NULL: none) is at most
 *		LANCE_MAX_E_TAG_BYTES without control characters (an entity tag
 *		of an object store, RFC 9110 8.8.3).
 */
void
lance_validate_e_tag(const char *op, const char *e_tag)
{
	if (e_tag != NULL)
		validate_text(op, "e_tag", e_tag, LANCE_MAX_E_TAG_BYTES);
}

/*
 * lance_validate_name
 *		Raise InvalidInput unless name is a valid object name (the rules are
 *		in name_rules.c).
 */
void
lance_validate_name(const char *op, const char *what, const char *name, int len)
{
	switch (lance_name_problem(name, len))
	{
		case LANCE_NAME_OK:
			return;
		case LANCE_NAME_EMPTY:
			lance_error(LANCE_INVALID_INPUT,
						errmsg("%s: %s must not be empty", op, what));
			break;
		case LANCE_NAME_TOO_LONG:
			lance_error(LANCE_INVALID_INPUT,
						errmsg("%s: %s is longer than %d bytes", op, what,
							   LANCE_MAX_NAME_BYTES));
			break;
		case LANCE_NAME_BAD_UTF8:
			lance_error(LANCE_INVALID_INPUT,
						errmsg("%s: %s is not valid UTF-8", op, what));
			break;
		case LANCE_NAME_CONTROL:
			lance_error(LANCE_INVALID_INPUT,
						errmsg("%s: %s contains a control character", op, what));
			break;
		case LANCE_NAME_SLASH:
			lance_error(LANCE_INVALID_INPUT,
						errmsg("%s: %s \"%.*s\" contains \"/\"", op, what, len, name));
			break;
		case LANCE_NAME_DOT:
			lance_error(LANCE_INVALID_INPUT,
						errmsg("%s: %s must not be \".\" or \"..\"", op, what));
			break;
	}
}

/*
 * lance_check_id_shape
 *		Raise InvalidInput unless id has the shape of an identifier: a
 *		one-dimensional text[] without NULLs, whatever its names.
 */
void
lance_check_id_shape(const char *op, const char *what, ArrayType *id)
{
	if (ARR_NDIM(id) > 1)
		lance_error(LANCE_INVALID_INPUT,
					errmsg("%s: %s must be a one-dimensional array", op, what));
	if (ARR_ELEMTYPE(id) != TEXTOID)
		lance_error(LANCE_INVALID_INPUT,
					errmsg("%s: %s must be a text array", op, what));
	if (array_contains_nulls(id))
		lance_error(LANCE_INVALID_INPUT,
					errmsg("%s: %s must not contain NULL", op, what));
}

/*
 * lance_validate_id
 *		Check that id is a one-dimensional text[] of valid names without
 *		NULLs, and return it normalized (lower bound 1) so that it compares
 *		equal to stored paths.  The empty identifier (the root) is accepted
 *		only when allow_root is true.
 */
ArrayType *
lance_validate_id(const char *op, const char *what, ArrayType *id, bool allow_root)
{
	Datum	   *elems;
	int			n;
	int			i;

	lance_check_id_shape(op, what, id);
	deconstruct_array(id, TEXTOID, -1, false, TYPALIGN_INT, &elems, NULL, &n);
	if (n == 0 && !allow_root)
		lance_error(LANCE_INVALID_INPUT,
					errmsg("%s: %s must not be empty", op, what));
	if (n > LANCE_MAX_ID_DEPTH)
		lance_error(LANCE_INVALID_INPUT,
					errmsg("%s: %s has more than %d levels", op, what,
						   LANCE_MAX_ID_DEPTH));
	for (i = 0; i < n; i++)
	{
		text	   *t = DatumGetTextPP(elems[i]);

		lance_validate_name(op, "name", VARDATA_ANY(t), VARSIZE_ANY_EXHDR(t));
	}
	return construct_array(elems, n, TEXTOID, -1, false, TYPALIGN_INT);
}

/*
 * lance_id_arg
 *		Fetch and validate an identifier argument; NULL is InvalidInput.
 */
ArrayType *
lance_id_arg(FunctionCallInfo fcinfo, int argno, const char *op,
			 const char *what, bool allow_root)
{
	return lance_require_id(op, what,
							PG_ARGISNULL(argno) ? NULL : PG_GETARG_ARRAYTYPE_P(argno),
							allow_root);
}

/*
 * lance_require_id
 *		Validate an identifier that must be given; NULL is InvalidInput.
 */
ArrayType *
lance_require_id(const char *op, const char *what, ArrayType *id, bool allow_root)
{
	if (id == NULL)
		lance_error(LANCE_INVALID_INPUT,
					errmsg("%s: %s must not be NULL", op, what));
	return lance_validate_id(op, what, id, allow_root);
}

/*
 * lance_id_to_cstring
 *		Join an identifier with a delimiter (the string style).
 */
char *
lance_id_to_cstring(ArrayType *id, const char *delimiter)
{
	Datum	   *elems;
	int			n;
	int			i;
	StringInfoData buf;

	deconstruct_array(id, TEXTOID, -1, false, TYPALIGN_INT, &elems, NULL, &n);
	initStringInfo(&buf);
	for (i = 0; i < n; i++)
	{
		text	   *t = DatumGetTextPP(elems[i]);

		if (i > 0)
			appendStringInfoString(&buf, delimiter);
		appendBinaryStringInfo(&buf, VARDATA_ANY(t), VARSIZE_ANY_EXHDR(t));
	}
	return buf.data;
}

/*
 * lance_id_depth
 *		Number of names in an identifier.
 */
int
lance_id_depth(ArrayType *id)
{
	return ArrayGetNItems(ARR_NDIM(id), ARR_DIMS(id));
}

/*
 * lance_id_parent
 *		The identifier without its last name.
 */
ArrayType *
lance_id_parent(ArrayType *id)
{
	Datum	   *elems;
	int			n;

	deconstruct_array(id, TEXTOID, -1, false, TYPALIGN_INT, &elems, NULL, &n);
	Assert(n > 0);
	return construct_array(elems, n - 1, TEXTOID, -1, false, TYPALIGN_INT);
}

/*
 * lance_id_last
 *		The last name of a non-empty identifier.
 */
char *
lance_id_last(ArrayType *id)
{
	Datum	   *elems;
	int			n;

	deconstruct_array(id, TEXTOID, -1, false, TYPALIGN_INT, &elems, NULL, &n);
	Assert(n > 0);
	return TextDatumGetCString(elems[n - 1]);
}

/*
 * lance_id_append
 *		A new identifier: id followed by name.
 */
ArrayType *
lance_id_append(ArrayType *id, const char *name)
{
	Datum	   *elems;
	Datum	   *out;
	int			n;

	deconstruct_array(id, TEXTOID, -1, false, TYPALIGN_INT, &elems, NULL, &n);
	out = palloc(sizeof(Datum) * (n + 1));
	memcpy(out, elems, sizeof(Datum) * n);
	out[n] = CStringGetTextDatum(name);
	return construct_array(out, n + 1, TEXTOID, -1, false, TYPALIGN_INT);
}

/*
 * lance_validate_delimiter
 *		A delimiter by the shared rule (lance_delimiter_problem).
 */
void
lance_validate_delimiter(const char *op, const char *delimiter)
{
	const char *problem = lance_delimiter_problem(delimiter);

	if (problem != NULL)
		lance_error(LANCE_INVALID_INPUT, errmsg("%s: %s", op, problem));
}

/*
 * lance_cstring_to_id
 *		Split a string-style identifier.  The empty string and the delimiter
 *		alone both denote the root.  The result is validated.
 */
ArrayType *
lance_cstring_to_id(const char *str, const char *delimiter, const char *op)
{
	LanceIdSegment segments[LANCE_MAX_ID_DEPTH];
	Datum		elems[LANCE_MAX_ID_DEPTH];
	int			n;
	int			i;

	lance_validate_delimiter(op, delimiter);
	n = lance_split_id(str, delimiter, segments, LANCE_MAX_ID_DEPTH);
	if (n < 0)
		lance_error(LANCE_INVALID_INPUT,
					errmsg("%s: id has more than %d levels", op, LANCE_MAX_ID_DEPTH));
	for (i = 0; i < n; i++)
		elems[i] = PointerGetDatum(cstring_to_text_with_len(segments[i].start,
															segments[i].len));
	return lance_validate_id(op, "id",
							 construct_array(elems, n, TEXTOID, -1, false, TYPALIGN_INT),
							 true);
}

PG_FUNCTION_INFO_V1(lance_parse_id);

/*
 * lance_parse_id(id text, delimiter text) returns text[]
 *		The list style of a string-style identifier.
 */
Datum
lance_parse_id(PG_FUNCTION_ARGS)
{
	const char *op = "ParseId";
	char	   *delimiter;

	if (PG_ARGISNULL(0))
		lance_error(LANCE_INVALID_INPUT, errmsg("%s: id must not be NULL", op));
	delimiter = PG_ARGISNULL(1) ? NULL : text_to_cstring(PG_GETARG_TEXT_PP(1));
	lance_validate_delimiter(op, delimiter);
	PG_RETURN_ARRAYTYPE_P(lance_cstring_to_id(text_to_cstring(PG_GETARG_TEXT_PP(0)),
											  delimiter, op));
}

PG_FUNCTION_INFO_V1(lance_format_id);

/*
 * lance_format_id(id text[], delimiter text) returns text
 *		The string style of a list-style identifier.
 */
Datum
lance_format_id(PG_FUNCTION_ARGS)
{
	const char *op = "FormatId";
	char	   *delimiter;
	ArrayType  *id;

	id = lance_id_arg(fcinfo, 0, op, "id", true);
	delimiter = PG_ARGISNULL(1) ? NULL : text_to_cstring(PG_GETARG_TEXT_PP(1));
	lance_validate_delimiter(op, delimiter);
	PG_RETURN_TEXT_P(cstring_to_text(lance_id_to_cstring(id, delimiter)));
}
