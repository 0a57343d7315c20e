#!/usr/bin/env python3
"""test_spack.py: checks commcost's Spack recipe without Spack (which cannot
run here): the recipe must import as Python against stand-ins for the parts
of Spack's API it uses, declare its dependencies, and its go build arguments,
for an Open MPI and for an MPICH spec, must build commcost from a clean export
of the repository (git archive HEAD), with Spack's build environment for Go
packages (CGO_ENABLED from the recipe, GO111MODULE=on, GOTOOLCHAIN=local).
The Open MPI binary is then run (commcost info --backend local) to check the
version stamp. MPICH is built only when its pkg-config entry exists.

usage: scripts/test_spack.py
"""
import contextlib
import importlib.util
import os
import subprocess
import sys
import tempfile
import types

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RECIPE = os.path.join(ROOT, "spack", "spack_repo", "commcost", "packages", "commcost", "package.py")

declared = []  # (directive, args, kwargs)


def directive(name):
    def record(*args, **kwargs):
        declared.append((name, args, kwargs))

    return record


@contextlib.contextmanager
def when(_spec):
    yield


class GoPackage:
    """Stand-in for spack_repo.builtin.build_systems.go.GoPackage: the
    attributes the recipe reads or overrides."""

    cgo_enabled = False

    def __init__(self, spec):
        self.spec = spec
        self.module = types.SimpleNamespace(make_jobs=2)


def install_stand_ins():
    spack = types.ModuleType("spack")
    pkg = types.ModuleType("spack.package")
    for name in ("version", "depends_on", "requires", "conflicts", "variant", "maintainers", "license", "provides"):
        setattr(pkg, name, directive(name))
    pkg.when = when
    pkg.which = lambda *a, **k: None
    pkg.__all__ = [n for n in dir(pkg) if not n.startswith("_")]
    spack.package = pkg
    go = types.ModuleType("spack_repo.builtin.build_systems.go")
    go.GoPackage = GoPackage
    for name, mod in {
        "spack": spack,
        "spack.package": pkg,
        "spack_repo": types.ModuleType("spack_repo"),
        "spack_repo.builtin": types.ModuleType("spack_repo.builtin"),
        "spack_repo.builtin.build_systems": types.ModuleType("spack_repo.builtin.build_systems"),
        "spack_repo.builtin.build_systems.go": go,
    }.items():
        sys.modules[name] = mod


class Spec:
    def __init__(self, mpi, version="main"):
        self.version = version
        self._mpi = types.SimpleNamespace(name=mpi, prefix=None)

    def __getitem__(self, key):
        assert key == "mpi", key
        return self._mpi


def fail(msg):
    print("test_spack: FAIL: " + msg, file=sys.stderr)
    sys.exit(1)


def main():
    install_stand_ins()
    spec = importlib.util.spec_from_file_location("commcost_recipe", RECIPE)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    cls = mod.Commcost
    deps = {a[0]: k for d, a, k in declared if d == "depends_on"}
    for want in ("go@1.26:", "c", "pkgconfig", "mpi"):
        if want not in deps:
            fail("recipe does not depend on %s (has %s)" % (want, sorted(deps)))
    if not cls.cgo_enabled:
        fail("cgo_enabled is False: the MPI binding is cgo")
    gomod = open(os.path.join(ROOT, "go.mod")).read()
    gover = [l.split()[1] for l in gomod.splitlines() if l.startswith("go ")][0]
    if not gover.startswith("1.26"):
        fail("go.mod asks for go %s; update the recipe's go@ bound" % gover)

    with tempfile.TemporaryDirectory() as tmp:
        src = os.path.join(tmp, "src")
        os.mkdir(src)
        archive = subprocess.run(["git", "-C", ROOT, "archive", "HEAD"], check=True, capture_output=True).stdout
        subprocess.run(["tar", "-x", "-C", src], input=archive, check=True)
        env = dict(os.environ, CGO_ENABLED="1" if cls.cgo_enabled else "0", GO111MODULE="on", GOTOOLCHAIN="local")
        builds = [("openmpi", "ompi-c")]
        if subprocess.run(["pkg-config", "--exists", "mpich"]).returncode == 0:
            builds.append(("mpich", "mpich"))
        else:
            print("test_spack: note: no MPICH pkg-config entry; the ^mpich build was not tried", file=sys.stderr)
        for mpi, pc in builds:
            p = cls(Spec(mpi, version="1.2.3"))
            args = p.build_args
            if (mpi == "mpich") != ("mpich" in args):
                fail("%s: build args %s" % (mpi, args))
            for f in ("commcost",):
                with contextlib.suppress(FileNotFoundError):
                    os.remove(os.path.join(src, f))
            r = subprocess.run(["go", "build"] + args, cwd=src, env=env, capture_output=True, text=True)
            if r.returncode != 0:
                fail("%s: go build %s failed:\n%s" % (mpi, " ".join(args), r.stderr))
            print("test_spack: ok: ^%s: go build %s" % (mpi, " ".join(args)), file=sys.stderr)
            if mpi == "openmpi":
                out = subprocess.run([os.path.join(src, "commcost"), "info", "--backend", "local", "--np", "2"],
                                     capture_output=True, text=True, check=True).stdout
                if "spack-1.2.3" not in out:
                    fail("the binary does not carry the stamped version spack-1.2.3:\n" + out)
                run_stand_alone_test(mod, p, os.path.join(src, "commcost"))


class Executable:
    """Stand-in for Spack's Executable: runs the program, returns its output
    as str.split would when output=str.split."""

    def __init__(self, path):
        self.path = path

    def __call__(self, *args, output=None, error=None):
        r = subprocess.run([self.path] + [str(a) for a in args], capture_output=True, text=True)
        if r.returncode != 0:
            raise RuntimeError("%s %s: exit %d: %s" % (self.path, " ".join(map(str, args)), r.returncode, r.stderr))
        return output(r.stdout) if output else None


def run_stand_alone_test(mod, p, binary):
    """Runs the recipe's test_info (spack test run) against the built binary
    under the real mpirun, when mpirun can run here."""
    mpirun = subprocess.run(["sh", "-c", "command -v mpirun"], capture_output=True, text=True).stdout.strip()
    if not mpirun:
        print("test_spack: note: no mpirun; test_info not run", file=sys.stderr)
        return
    mod.which = lambda path, required=False: Executable(mpirun)
    p.spec._mpi.prefix = types.SimpleNamespace(bin=types.SimpleNamespace(mpirun=mpirun))
    p.prefix = types.SimpleNamespace(bin=types.SimpleNamespace(commcost=binary))
    try:
        p.test_info()
    except Exception as e:  # the recipe's assertion or mpirun's failure
        fail("recipe test_info: %r" % (e,))
    print("test_spack: ok: recipe test_info (commcost info on 2 ranks under mpirun)", file=sys.stderr)


if __name__ == "__main__":
    main()
