"""Builds and installs the opscope Python package (python/opscope) with its
native module built by CMake (target opscope_python, pybind11):

    python3 -m pip install --no-build-isolation .

in a virtual environment made with --system-site-packages (Debian's numpy,
pandas and pybind11). It configures build/python-<version> with the
analyzer and reports alone (no CPU or CUDA backend is needed by the
package); OPSCOPE_BUILD_DIR names a configured build folder to reuse
instead (`make python` uses build/release).
"""
import glob
import os
import pathlib
import re
import shutil
import subprocess
import sys
import sysconfig

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = pathlib.Path(__file__).resolve().parent
VERSION = re.search(r"project\(opscope VERSION ([0-9.]+)",
                    (ROOT / "CMakeLists.txt").read_text()).group(1)


class CMakeBuild(build_ext):
    def build_extension(self, ext):
        build_dir = os.environ.get("OPSCOPE_BUILD_DIR")
        if build_dir:
            build_dir = pathlib.Path(build_dir).resolve()
            if not (build_dir / "CMakeCache.txt").exists():
                sys.exit(f"OPSCOPE_BUILD_DIR={build_dir} is not a configured build folder")
        else:
            tag = sysconfig.get_config_var("SOABI") or "python"
            build_dir = ROOT / "build" / f"python-{tag}"
            subprocess.run(
                ["cmake", "-S", str(ROOT), "-B", str(build_dir), "-DCMAKE_BUILD_TYPE=Release",
                 "-DOPSCOPE_BUILD_TESTS=OFF", "-DOPSCOPE_BUILD_BENCH=OFF",
                 "-DOPSCOPE_CPU_BACKEND=OFF", "-DOPSCOPE_CUDA=OFF", "-DOPSCOPE_PYTHON=ON",
                 f"-DPython3_EXECUTABLE={sys.executable}"]
                + (["-G", "Ninja"] if shutil.which("ninja") else []),
                check=True)
        subprocess.run(["cmake", "--build", str(build_dir), "--target", "opscope_python",
                        "--parallel", str(os.cpu_count() or 1)], check=True)
        suffix = sysconfig.get_config_var("EXT_SUFFIX")
        built = build_dir / "python" / "opscope" / f"_opscope{suffix}"
        if not built.exists():
            found = glob.glob(str(build_dir / "python" / "opscope" / "_opscope*.so"))
            sys.exit(f"the build made {found or 'no module'}, not {built.name}: was "
                     f"{build_dir} configured for another Python than {sys.executable}?")
        target = pathlib.Path(self.get_ext_fullpath(ext.name))
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(built, target)


setup(
    name="opscope",
    version=VERSION,
    description="Performance analysis for AI accelerators: traces to DataFrames, profiling "
                "scopes, a torch.profiler hand-off",
    license="Apache-2.0",
    packages=["opscope"],
    package_dir={"": "python"},
    ext_modules=[Extension("opscope._opscope", sources=[])],
    cmdclass={"build_ext": CMakeBuild},
    python_requires=">=3.9",
    install_requires=["numpy", "pandas"],
    zip_safe=False,
)
