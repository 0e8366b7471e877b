/*-------------------------------------------------------------------------
 *
 * sweep.h
 *	  lance-namespace-gateway --sweep: removing the manifest files that a
 *	  crash can orphan.
 *
 *-------------------------------------------------------------------------
 */
#ifndef LANCE_GATEWAY_SWEEP_H
#define LANCE_GATEWAY_SWEEP_H

#include "gateway.h"

extern int	gw_sweep_run(const char *root);
extern bool gw_manifest_name(const char *name, int64_t *version, bool *v2);

#endif							/* LANCE_GATEWAY_SWEEP_H */
