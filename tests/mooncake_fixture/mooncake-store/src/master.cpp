// mooncake_master: only --version (gflags' format since Mooncake v0.3.11).
#include <cstdio>
#include <cstring>

#include "transfer_engine.h"

int main(int argc, char **argv) {
  if (argc > 1 && std::strcmp(argv[1], "--version") == 0) {
    std::printf("mooncake_master version %s (git: fixture)\n", MOONCAKE_VERSION);
    return 0;
  }
  std::printf("transports: %s\n", te_installed_transports());
  return 0;
}
