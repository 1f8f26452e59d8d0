// The legacy HCCL transport (USE_ASCEND): needs CANN's private headers.
#include "transport_mem.h"

extern "C" int ascend_direct_transport_install(void) { return hccl_transport_mem_init(); }
