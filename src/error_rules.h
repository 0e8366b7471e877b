/*-------------------------------------------------------------------------
 *
 * error_rules.h
 *	  The Lance error codes and how they map to and from the outside:
 *	  SQLSTATE -> Lance code, and Lance code -> HTTP status.  Defined once
 *	  here and compiled into both the extension and the gateway.
 *
 *-------------------------------------------------------------------------
 */
#ifndef LANCE_ERROR_RULES_H
#define LANCE_ERROR_RULES_H

/*
 * Lance Namespace error codes (namespace-operations-errors.md).  The
 * extension raises each one with SQLSTATE "LN0xx", xx being the code, so
 * that any client can recover the Lance code from the SQLSTATE alone.
 */
typedef enum LanceErrorCode
{
	LANCE_UNSUPPORTED = 0,
	LANCE_NAMESPACE_NOT_FOUND = 1,
	LANCE_NAMESPACE_ALREADY_EXISTS = 2,
	LANCE_NAMESPACE_NOT_EMPTY = 3,
	LANCE_TABLE_NOT_FOUND = 4,
	LANCE_TABLE_ALREADY_EXISTS = 5,
	LANCE_TABLE_INDEX_NOT_FOUND = 6,
	LANCE_TABLE_INDEX_ALREADY_EXISTS = 7,
	LANCE_TABLE_TAG_NOT_FOUND = 8,
	LANCE_TABLE_TAG_ALREADY_EXISTS = 9,
	LANCE_TRANSACTION_NOT_FOUND = 10,
	LANCE_TABLE_VERSION_NOT_FOUND = 11,
	LANCE_TABLE_COLUMN_NOT_FOUND = 12,
	LANCE_INVALID_INPUT = 13,
	LANCE_CONCURRENT_MODIFICATION = 14,
	LANCE_PERMISSION_DENIED = 15,
	LANCE_UNAUTHENTICATED = 16,
	LANCE_SERVICE_UNAVAILABLE = 17,
	LANCE_INTERNAL = 18,
	LANCE_INVALID_TABLE_STATE = 19,
	LANCE_TABLE_SCHEMA_VALIDATION_ERROR = 20,
	LANCE_THROTTLING = 21,
	LANCE_TABLE_BRANCH_NOT_FOUND = 22,
	LANCE_TABLE_BRANCH_ALREADY_EXISTS = 23,
	LANCE_MAX_ERROR_CODE = 23
} LanceErrorCode;

extern const char *lance_error_name_of(int code);
extern int	lance_code_for_sqlstate(const char *sqlstate);
extern int	lance_http_status_for_code(int code);

#endif							/* LANCE_ERROR_RULES_H */
