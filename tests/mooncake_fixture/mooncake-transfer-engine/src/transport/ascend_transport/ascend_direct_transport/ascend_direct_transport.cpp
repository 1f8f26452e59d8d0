// The Ascend direct (ADXL/HIXL) transport: needs the CANN runtime and llm_datadist.
#include <acl/acl.h>
#include <adxl/adxl_engine.h>

#include <cstdio>

extern "C" int ascend_direct_transport_install(void) {
  // glog keeps the source file name in the binary; so does this message.
  std::fprintf(stderr, "ascend_direct_transport.cpp: install AscendDirectTransport\n");
  int32_t device = -1;
  if (aclrtGetDevice(&device) != ACL_SUCCESS) {
    return -1;
  }
  return adxl::AdxlEngineInitialize() == 0 && metadef_version() > 0 ? 0 : -1;
}
