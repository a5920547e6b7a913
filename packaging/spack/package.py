# Spack recipe for fabricbench. Copy this folder into a Spack repository
# (`spack repo create site; cp -r packaging/spack site/packages/fabricbench`), or build a clone
# in place with `spack develop fabricbench@main` then `spack install`.
# tests/packaging.sh checks that the version and the variants below agree with CMakeLists.txt.

from spack.package import *


class Fabricbench(CMakePackage, CudaPackage):
    """MPI-launched micro-benchmarks for the fabrics that distributed deep-learning training
    runs on: P2P GPU bandwidth and latency, NCCL all-reduce at DenseNet-121 gradient sizes,
    host-to-device input pipelines, a DenseNet-121 compute step, node acceptance against
    hardware profiles, and regression reports between runs."""

    # The project has no public home yet: point `git` at your clone (or use `spack develop`).
    git = "https://example.org/fabricbench.git"

    maintainers("fabricbench")
    license("UNKNOWN")

    version("main", branch="main")
    version("0.1.0", tag="v0.1.0")

    # CudaPackage brings +cuda and cuda_arch=...; the CMake option is FB_WITH_CUDA.
    variant("nccl", default=True, when="+cuda",
            description="NCCL collectives (loaded at run time; FB_WITH_NCCL)")
    variant("verbs", default=True, description="Read InfiniBand ports with libibverbs (FB_WITH_VERBS)")

    depends_on("cmake@3.24:", type="build")
    depends_on("pkgconfig", type="build")
    depends_on("mpi")
    depends_on("hwloc@2:")
    depends_on("cjson")
    depends_on("inih")
    depends_on("libpng")
    depends_on("libjpeg-turbo")
    depends_on("openblas")
    depends_on("nccl", when="+nccl")
    depends_on("rdma-core", when="+verbs")
    depends_on("gnuplot", type="run")

    def cmake_args(self):
        on_off = lambda v: "ON" if self.spec.satisfies("+" + v) else "OFF"
        args = [
            self.define("FB_WITH_CUDA", on_off("cuda")),
            self.define("FB_WITH_NCCL", on_off("nccl") if self.spec.satisfies("+cuda") else "OFF"),
            self.define("FB_WITH_VERBS", on_off("verbs")),
            self.define("BUILD_TESTING", self.run_tests),
        ]
        if self.spec.satisfies("+cuda"):
            archs = self.spec.variants["cuda_arch"].value
            if archs and archs[0] != "none":
                args.append(self.define("CMAKE_CUDA_ARCHITECTURES", ";".join(archs)))
        if self.spec.satisfies("+nccl"):
            args.append(self.define("NCCL_HOME", self.spec["nccl"].prefix))
        return args

    def setup_run_environment(self, env):
        env.prepend_path("FB_PROFILE_PATH", self.prefix.share.fabricbench.profiles)
