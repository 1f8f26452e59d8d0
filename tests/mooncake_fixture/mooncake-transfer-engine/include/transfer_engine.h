#pragma once
#ifdef __cplusplus
extern "C" {
#endif
/* Comma-separated transports compiled in ("tcp", "ascend"), and the version string. */
const char *te_installed_transports(void);
const char *te_version(void);
#ifdef __cplusplus
}
#endif
