#ifndef OPSCOPE_CLI_BUILD_INFO_H_
#define OPSCOPE_CLI_BUILD_INFO_H_

namespace opscope::cli {

// The version, where the program was built from (`git describe` of the checkout,
// with -dirty for uncommitted changes) and the build type, as
// "0.1.0 (git 707265b1c2d3, Release)". Written at build time by
// cmake/build_info.cmake, so it follows each commit without a new configure.
const char* BuildDescription();

}  // namespace opscope::cli

#endif  // OPSCOPE_CLI_BUILD_INFO_H_
