#include <opscope/opscope.h>

#include <cstdio>

int main(int argc, char** argv) {
  if (argc != 2) return 2;
  opscope::ProfilerOptions opts;
  opts.output_dir = argv[1];
  opscope::Profiler prof(opts);
  prof.Start();
  for (int i = 0; i < 3; ++i) {
    OPSCOPE_SCOPE("work");
    prof.Step();
  }
  prof.Stop();
  std::printf("%s\n", prof.trace_files().at(0).c_str());
  return 0;
}
