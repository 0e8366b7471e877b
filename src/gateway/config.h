/*-------------------------------------------------------------------------
 *
 * config.h
 *	  Loading GwConfig from the command line and environment.
 *
 *-------------------------------------------------------------------------
 */
#ifndef LANCE_GATEWAY_CONFIG_H
#define LANCE_GATEWAY_CONFIG_H

#include "gateway.h"

extern void gw_config_load(int argc, char **argv);

#endif							/* LANCE_GATEWAY_CONFIG_H */
