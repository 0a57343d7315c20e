# commcost: thin wrappers over scripts/ and go. `make run` and `make test` do
# all set-up on a fresh Debian/Ubuntu machine (see README.md).

GO      ?= go
# TAGS="-tags mpich" builds, runs and tests against MPICH instead of Open MPI;
# MPI=mpich alone means the same. The scripts read both (scripts/mpi.sh).
TAGS    ?=
MPI     ?=
ifeq ($(strip $(MPI)),mpich)
ifeq ($(strip $(TAGS)),)
override TAGS := -tags mpich
endif
endif
override TAGS := $(strip $(TAGS))
export TAGS MPI
BIN     := bin/commcost
# Records name the commit; builds here run with -buildvcs=false, so stamp it.
COMMIT  := $(shell git describe --always --dirty 2>/dev/null || echo unknown)
LDFLAGS := -X github.com/commcost/commcost/results.buildCommit=$(COMMIT)
NP      ?= 2

# Open MPI refuses to run as root unless told; CI and containers run as root.
ifeq ($(shell id -u),0)
export OMPI_ALLOW_RUN_AS_ROOT := 1
export OMPI_ALLOW_RUN_AS_ROOT_CONFIRM := 1
endif

.PHONY: all setup build run test unit bench lint clean

all: build

setup:
	@scripts/setup.sh

build: setup
	$(GO) build $(TAGS) -ldflags '$(LDFLAGS)' -o $(BIN) ./cmd/commcost
	scripts/build_trace.sh bin/libcommcost-trace.so

# The main job: a quick default measurement on this machine with NP ranks.
run: build
	scripts/run.sh $(NP)

# Unit tests, conformance on both backends, CLI golden and bad-input tests,
# integration tests under real mpirun.
test: setup
	scripts/test.sh

# Every pattern against C of the same protocol (on 2 ranks, and the
# collectives, point-to-point rates and one-sided on 4 too), then ping-pong
# and bandwidth against OSU 5.3 and the collectives, point-to-point rates,
# non-blocking overlap and one-sided against OSU 6.1 on 2 and 4 ranks, the
# tracing library's overhead, the replay's speed and the replay against
# SimGrid; all run to the end, and bench fails if any missed a target.
bench: build
	@rc=0; scripts/bench_vs_c.sh || rc=1; \
	scripts/bench_vs_c.sh --np 4 --cells '^(collective|nonblocking|mbwmr|multilat|onesided)' || rc=1; \
	scripts/bench_vs_osu.sh --skip-missing || rc=1; \
	scripts/bench_trace.sh || rc=1; scripts/bench_replay.sh || rc=1; scripts/bench_simgrid.sh || rc=1; exit $$rc

lint:
	scripts/lint.sh

clean:
	rm -rf bin
