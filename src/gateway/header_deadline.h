/*-------------------------------------------------------------------------
 *
 * header_deadline.h
 *	  The request deadline while headers are still arriving.
 *
 *-------------------------------------------------------------------------
 */
#ifndef GW_HEADER_DEADLINE_H
#define GW_HEADER_DEADLINE_H

#include <microhttpd.h>

extern void gw_hdl_notify(void *cls, struct MHD_Connection *conn, void **socket_context,
						  enum MHD_ConnectionNotificationCode code);
extern void gw_hdl_headers_done(struct MHD_Connection *conn);
extern void gw_hdl_request_done(struct MHD_Connection *conn);
extern bool gw_hdl_start(void);
extern void gw_hdl_stop(void);

#endif							/* GW_HEADER_DEADLINE_H */
