/*-------------------------------------------------------------------------
 *
 * sweep.h
 *	  lance-namespace-gateway --sweep (sweep.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef LANCE_GATEWAY_SWEEP_H
#define LANCE_GATEWAY_SWEEP_H

#include "gateway.h"

extern int	gw_sweep_run(void);

#endif							/* LANCE_GATEWAY_SWEEP_H */
