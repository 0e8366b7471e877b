/*-------------------------------------------------------------------------
 *
 * config.c
 *	  The gateway's options, defined once: each is a row of "options"
 *	  (name, environment variable, type and range, default, one text),
 *	  from which come the defaults, the LANCE_GATEWAY_* environment, the
 *	  command line (which wins), --help (the text without markdown), and
 *	  the options table of src/gateway/README.md (--help-markdown prints
 *	  it; the REST suite checks that the README holds exactly that).
 *
 *-------------------------------------------------------------------------
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gateway.h"

GwConfig	gw_config;

typedef enum OptType
{
	OT_STRING,					/* char *, any text */
	OT_NAME,					/* char *, NULL when empty (unset) */
	OT_INT,						/* int within [min, max] */
	OT_LONG,					/* long within [min, max] */
	OT_BOOL,					/* bool; a flag on the command line, "0" off in the environment */
	OT_LISTEN,					/* HOST:PORT into listen_host, listen_port */
	OT_CHOICE,					/* char *, one of arg's "a|b|c" */
	OT_ADDRESSING,				/* path|virtual: 0|1 into s3_virtual_hosted */
	OT_INFO						/* --help, --help-markdown, --version: print, exit */
} OptType;

typedef struct GwOption
{
	const char *name;			/* the long option, without "--" */
	const char *env;			/* LANCE_GATEWAY_* variable, or NULL */
	OptType		type;
	size_t		offset;			/* of the field in GwConfig */
	const char *arg;			/* its argument, NULL for a flag */
	const char *dflt;			/* default value, applied as if given; NULL: none */
	long		min;
	long		max;
	const char *dflt_note;		/* the default in words */
	const char *env_note;		/* other variables read, in order */
	const char *text;			/* what it does: the README's markdown, --help's plain */
} GwOption;

#define OPTION_ROW(name, env, type, field, ...) \
	{name, env, OT_##type, offsetof(GwConfig, field), __VA_ARGS__},

static const GwOption options[] = {
	GW_OPTIONS(OPTION_ROW)
	{"help", NULL, OT_INFO, 0, NULL, NULL, 0, 0, NULL, NULL, "print this help and exit"},
	{"help-markdown", NULL, OT_INFO, 0, NULL, NULL, 0, 0, NULL, NULL, NULL},
	{"version", NULL, OT_INFO, 0, NULL, NULL, 0, 0, NULL, NULL, "print the version and exit"},
};

#define NOPTIONS (sizeof(options) / sizeof(options[0]))

/* a wrong option value or combination: exit with status 2 */
#define bad_usage(...) gw_fatal(2, __VA_ARGS__)

/*
 * parse_long
 *		Parse a decimal option value within [min, max]; exit on error.
 */
static long
parse_long(const char *name, const char *value, long min, long max)
{
	char	   *end;
	long		v;

	errno = 0;
	v = strtol(value, &end, 10);
	if (errno != 0 || end == value || *end != '\0' || v < min || v > max)
		bad_usage("invalid value for %s: \"%s\" (expected %ld..%ld)", name, value, min, max);
	return v;
}

/*
 * apply
 *		Apply an option's value (NULL: a flag); errors call it name.
 */
static void
apply(const GwOption *o, const char *name, const char *value)
{
	char	   *field = (char *) &gw_config + o->offset;
	const char *colon;
	char		all[64];
	char		one[64];

	switch (o->type)
	{
		case OT_CHOICE:
		case OT_ADDRESSING:
			/* one of arg's "|"-separated choices */
			snprintf(all, sizeof(all), "|%s|", o->arg);
			snprintf(one, sizeof(one), "|%s|", value);
			if (strlen(value) >= sizeof(one) - 2 || strstr(all, one) == NULL)
				bad_usage("%s must be one of %s, got \"%s\"", name, o->arg, value);
			if (o->type == OT_ADDRESSING)
			{
				*(int *) field = strcmp(value, "virtual") == 0;
				break;
			}
			/* FALLTHROUGH */
		case OT_STRING:
		case OT_NAME:
			free(*(char **) field);
			*(char **) field = o->type == OT_NAME && value[0] == '\0' ? NULL : strdup(value);
			break;
		case OT_INT:
			*(int *) field = (int) parse_long(name, value, o->min, o->max);
			break;
		case OT_LONG:
			*(long *) field = parse_long(name, value, o->min, o->max);
			break;
		case OT_BOOL:
			*(bool *) field = (value == NULL || strcmp(value, "0") != 0);
			break;
		case OT_LISTEN:
			/* HOST:PORT or [V6]:PORT */
			colon = strrchr(value, ':');
			if (colon == NULL || colon == value || colon[1] == '\0')
				bad_usage("%s must be HOST:PORT, got \"%s\"", name, value);
			parse_long(name, colon + 1, 0, 65535);
			free(gw_config.listen_host);
			free(gw_config.listen_port);
			if (value[0] == '[' && colon[-1] == ']')
				gw_config.listen_host = strndup(value + 1, colon - value - 2);
			else
				gw_config.listen_host = strndup(value, colon - value);
			gw_config.listen_port = strdup(colon + 1);
			break;
		case OT_INFO:
			break;
	}
}

/*
 * print_help
 *		--help: each option's text and default, plain and wrapped.
 */
static void
print_help(void)
{
	printf("Usage: %s [OPTION]...\n"
		   "       %s --sweep [--dry-run] [--sweep-min-age S] [OPTION]...\n"
		   "Serve the Lance Namespace REST API from a PostgreSQL lance_namespace catalog.\n\n",
		   GW_PROGRAM, GW_PROGRAM);
	for (const GwOption *o = options; o < options + NOPTIONS; o++)
	{
		char		head[64];
		char		text[2048];
		int			col = 0;

		if (o->text == NULL)
			continue;
		snprintf(head, sizeof(head), "--%s%s%s", o->name, o->arg ? " " : "", o->arg ? o->arg : "");
		if (o->dflt_note && o->dflt_note[0] == '(')
			snprintf(text, sizeof(text), "%s %s", o->text, o->dflt_note);
		else if (o->dflt_note || (o->dflt && o->dflt[0]))
			snprintf(text, sizeof(text), "%s (default %s)", o->text, o->dflt_note ? o->dflt_note : o->dflt);
		else
			snprintf(text, sizeof(text), "%s", o->text);
		printf("  %-24s ", head);
		for (const char *p = text; *p; p += strspn(p, " "))
		{
			int			len = (int) strcspn(p, " ");

			if (col > 0 && col + 1 + len > 50)
			{
				printf("\n%27s", "");
				col = 0;
			}
			putchar(' ');
			col += len + 1;
			for (; len > 0; len--, p++)
				if (*p != '`')
					putchar(*p);
		}
		putchar('\n');
	}
	printf("\nEvery option with a variable in src/gateway/README.md can also be set in the\n"
		   "environment (LANCE_GATEWAY_...); the command line wins.  S3 credentials:\n"
		   "AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN.\n");
}

/*
 * print_markdown
 *		--help-markdown: the options table of src/gateway/README.md.
 */
static void
print_markdown(void)
{
	printf("| option | environment | default | meaning |\n|---|---|---|---|\n");
	for (const GwOption *o = options; o < options + NOPTIONS; o++)
	{
		if (o->type == OT_INFO)
			continue;
		printf("| `--%s%s", o->name, o->arg ? " " : "");
		for (const char *p = o->arg ? o->arg : ""; *p; p++)
			printf(*p == '|' ? "\\|" : "%c", *p);
		printf("` | ");
		if (o->env)
			printf("`%s%s`", o->env, o->type == OT_BOOL ? "=1" : "");
		if (o->env_note)
			printf(", else %s", o->env_note);
		printf(" | ");
		if (o->dflt_note)
			printf("%s", o->dflt_note);
		else if (o->dflt && o->dflt[0])
			printf("`%s`", o->dflt);
		else
			printf("%s", o->type == OT_BOOL ? "off" : "none");
		printf(" | %s |\n", o->text);
	}
}

/*
 * gw_config_load
 *		Defaults, environment, command line; exits on --help or an error.
 */
void
gw_config_load(int argc, char **argv)
{
	struct option longopts[NOPTIONS + 1] = {{0}};	/* flag NULL, val 0 */
	int			index = 0;		/* getopt_long sets it to a valid one */
	int			opt_result;

	gw_config.s3_virtual_hosted = -1;
	for (size_t i = 0; i < NOPTIONS; i++)
	{
		const char *v = options[i].env ? getenv(options[i].env) : NULL;

		longopts[i].name = options[i].name;
		longopts[i].has_arg = options[i].arg ? required_argument : no_argument;
		/* an option writes only its own fields: its default, then its variable */
		if (options[i].dflt != NULL)
			apply(&options[i], options[i].name, options[i].dflt);
		if (v != NULL)
			apply(&options[i], options[i].env, v);
	}

	/* each option is val 0, found by index; '?' for a wrong one */
	while ((opt_result = getopt_long(argc, argv, "", longopts, &index)) != -1)
	{
		const GwOption *o = &options[index];
		char		name[64];

		if (opt_result != 0)
		{
			fprintf(stderr, "Try \"%s --help\" for more information.\n", GW_PROGRAM);
			exit(2);
		}
		if (strcmp(o->name, "help") == 0)
			print_help();
		else if (strcmp(o->name, "help-markdown") == 0)
			print_markdown();
		else if (o->type == OT_INFO)
			printf("%s %s\n", GW_PROGRAM, GW_VERSION);
		if (o->type == OT_INFO)
			exit(0);
		/* errors name the option as it was written */
		snprintf(name, sizeof(name), "--%s", o->name);
		apply(o, name, optarg);
	}
	if (optind < argc)
		bad_usage("unexpected argument \"%s\"", argv[optind]);
	if (gw_config.api_key != NULL && gw_config.db_auth)
		bad_usage("--api-key and --db-auth are alternatives; use one");
	if (gw_config.anon_role != NULL && !gw_config.db_auth)
		bad_usage("--anon-role needs --db-auth");
	if (gw_config.dry_run && !gw_config.sweep)
		bad_usage("--dry-run needs --sweep");
	if (gw_config.root == NULL || gw_config.root[0] == '\0')
		bad_usage("--root DIR (or LANCE_GATEWAY_ROOT) is required");
	if (strcmp(gw_config.vend_credentials, "sts") == 0 && gw_config.sts_role_arn == NULL)
		bad_usage("--vend-credentials sts needs --sts-role-arn");
}
