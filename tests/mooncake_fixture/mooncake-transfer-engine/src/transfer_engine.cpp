#include "transfer_engine.h"

#include <ylt/version.hpp>

#ifdef USE_ASCEND_DIRECT
extern "C" int ascend_direct_transport_install(void);
#endif

extern "C" const char *te_installed_transports(void) {
#ifdef USE_ASCEND_DIRECT
  static const char *transports = ascend_direct_transport_install() == 0 ? "tcp,ascend" : "tcp";
  return transports;
#else
  return "tcp";
#endif
}

extern "C" const char *te_version(void) { return "0.3.9 (ylt " YLT_VERSION ")"; }
