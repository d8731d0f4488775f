// nvrtc_regs.cpp -- compile a kernel text (argv[1]) with NVRTC for sm_90 as lib/cuda/physics.cu does, print ptxas's
// register and spill counts; argv[2]: the include folder (lib/), $STUB: the folder of the standard headers' stubs
#include <nvrtc.h>
#include <cuda.h>
#include <stdio.h>
#include <stdlib.h>
#include <string>
#include <fstream>
#include <sstream>
int main(int argc, char **argv) {
  std::ifstream f(argv[1]); std::stringstream ss; ss << f.rdbuf(); std::string src = ss.str();
  nvrtcProgram p; nvrtcCreateProgram(&p, src.c_str(), "k.cu", 0, NULL, NULL);
  std::string inc = std::string("-I") + argv[2], stub = std::string("-I") + getenv("STUB");
  const char *opts[] = {"--gpu-architecture=sm_90", "-default-device", "--std=c++17", "-DMFREE_JIT", inc.c_str(), stub.c_str(), "-Xptxas=-v"};
  nvrtcResult r = nvrtcCompileProgram(p, 7, opts);
  size_t n; nvrtcGetProgramLogSize(p, &n); std::string log(n, 0); nvrtcGetProgramLog(p, &log[0]);
  printf("%s %s\n", nvrtcGetErrorString(r), log.c_str());
  return 0;
}
