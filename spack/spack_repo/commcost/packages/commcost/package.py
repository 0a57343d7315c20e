# Spack recipe for commcost: MPI communication-cost benchmarks, fitted cost
# models and model-predicted applications (https://github.com/commcost/commcost).
#
#   spack repo add spack/spack_repo/commcost      (from a commcost checkout)
#   spack install commcost ^openmpi               (or ^mpich)
#   spack test run commcost                       (commcost info under mpirun)
#
# commcost is a Go program with a cgo binding to the MPI it is built against:
# it finds the MPI through pkg-config (Open MPI's ompi-c.pc, MPICH's
# mpich.pc) and needs the build tag "mpich" for MPICH and its derivatives.

from spack.package import *
from spack_repo.builtin.build_systems.go import GoPackage


class Commcost(GoPackage):
    """Benchmarks what communication costs on an MPI cluster (OSU-style
    ping-pong and bandwidth, k-k-access, all-to-all, aggregate operations),
    fits cost models to the measurements (Hockney, LogGP, hyperbolic,
    trilinear, two-level, BSP) and compares their predictions with parallel
    applications."""

    homepage = "https://github.com/commcost/commcost"
    git = "https://github.com/commcost/commcost.git"

    version("main", branch="main")

    depends_on("go@1.26:", type="build")
    depends_on("c", type="build")
    depends_on("pkgconfig", type="build")
    depends_on("mpi")

    # The binding knows two pkg-config names; other MPIs have neither.
    requires(
        "^openmpi",
        "^mpich",
        policy="one_of",
        msg="commcost's cgo binding builds against Open MPI (ompi-c) or MPICH (mpich)",
    )

    # The MPI binding is cgo.
    cgo_enabled = True

    @property
    def build_args(self):
        """go build arguments: the mpich tag for MPICH, the version stamped
        into every record's meta.commit, and the one main package."""
        args = ["-p", str(self.module.make_jobs), "-modcacherw"]
        if self.spec["mpi"].name == "mpich":
            args += ["-tags", "mpich"]
        stamp = "github.com/commcost/commcost/results.buildCommit=spack-{0}".format(self.spec.version)
        args += ["-ldflags", "-s -w -X " + stamp, "-o", "commcost", "./cmd/commcost"]
        return args

    def test_info(self):
        """commcost info on two ranks under the MPI it was built with"""
        mpirun = which(self.spec["mpi"].prefix.bin.mpirun, required=True)
        commcost = self.prefix.bin.commcost
        args = ["-np", "2"]
        if self.spec["mpi"].name == "openmpi":
            args += ["--oversubscribe"]
        out = mpirun(*args, commcost, "info", output=str.split, error=str.split)
        assert "ranks" in out and "2" in out
