package trace

import (
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/commcost/commcost/mpi/mpirun"
	"github.com/commcost/commcost/opts"
	"github.com/commcost/commcost/trace/tracetest"
)

// TestLibraryRecordsCalls runs testdata/calls.c on 3 ranks under the
// library and checks the trace against what the program does.
func TestLibraryRecordsCalls(t *testing.T) {
	tmp := t.TempDir()
	lib, bins := tracetest.BuildLibrary(t, tmp, "trace/testdata/calls.c")
	dir := filepath.Join(tmp, "trace")
	const np, iters = 3, 400 // enough events for several blocks per rank
	ctx, cancel := context.WithTimeout(context.Background(), mpirun.HangLimit(60*time.Second, np))
	defer cancel()
	launcher, _ := mpirun.Launcher()
	args := append([]string{"-np", "3"}, mpirun.Flags(np)...)
	args = append(args, tracetest.PreloadArgs(lib, dir)...)
	args = append(args, bins[0], strconv.Itoa(iters))
	if out, err := exec.CommandContext(ctx, launcher, args...).CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	tr, err := ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, rk := range tr.Ranks {
		r := int32(rk.Header.Rank)
		left, right := (r+np-1)%np, (r+1)%np
		count := map[Op]int{}
		completes := 0
		var split *Comm
		for i, e := range rk.Events {
			if e.Op == OpWaitall {
				n := 0 // its completions follow, a block's write perhaps among them
				for j := i + 1; j < len(rk.Events) && (rk.Events[j].Op == OpComplete || rk.Events[j].Op == OpFlush); j++ {
					if rk.Events[j].Op == OpComplete {
						n++
					}
				}
				if n != 4 {
					t.Errorf("rank %d, event %d: Waitall followed by %d completions, want 4", r, i, n)
				}
			}
			count[e.Op]++
			switch e.Op {
			case OpSend:
				if e.Peer != right || e.Bytes != 800 || e.Tag != 7 || e.Comm != 0 {
					t.Errorf("rank %d: Send %+v, want 800 B to %d tag 7", r, e, right)
				}
			case OpRecv:
				if e.Peer != left || e.Bytes2 != 800 || (r == 0) != (e.Flags&FlagAnySource != 0) {
					t.Errorf("rank %d: Recv %+v, want 800 B from %d", r, e, left)
				}
			case OpSendrecv:
				if e.Peer != right || e.Peer2 != left || e.Bytes != 8000 || e.Bytes2 != 8000 {
					t.Errorf("rank %d: Sendrecv %+v", r, e)
				}
			case OpBcast:
				if e.Peer != np-1 || e.Bytes != 12 {
					t.Errorf("rank %d: Bcast %+v, want root %d, 12 B", r, e, np-1)
				}
			case OpAllreduce:
				if e.Bytes != 128 || e.Flags&FlagInPlace == 0 {
					t.Errorf("rank %d: Allreduce %+v", r, e)
				}
			case OpComplete:
				completes++
			case OpCommSplit:
				split = &rk.Comms[e.Peer2]
			case OpReduce:
				// the half's rank 0 has the largest world rank (key -rank)
				want := int32(np - 1)
				if r%2 == 1 {
					want = 1
				}
				if e.Peer != want {
					t.Errorf("rank %d: Reduce to world rank %d, want %d", r, e.Peer, want)
				}
			}
			if e.Op.Call() && e.T1 < e.T0 {
				t.Errorf("rank %d: %s ends before it starts", r, e.Op)
			}
		}
		persistent := 0
		if r == 0 || r == 2 { // the even half of 3 ranks is {2, 0}
			persistent = 2
		}
		for op, want := range map[Op]int{OpSend: iters, OpRecv: iters, OpIrecv: 2 * iters, OpIsend: 2 * iters,
			OpWaitall: iters, OpSendrecv: iters, OpAllreduce: iters, OpBcast: iters, OpCommSplit: 1,
			OpCommFree: 3, OpReduce: 1, OpBarrier: 2, OpCartCreate: 1, OpCartSub: 1, OpStart: persistent, OpWait: persistent, OpFinalize: 1} {
			if count[op] != want {
				t.Errorf("rank %d: %d %s, want %d", r, count[op], op, want)
			}
		}
		if completes != 4*iters+persistent {
			t.Errorf("rank %d: %d completions, want %d", r, completes, 4*iters+persistent)
		}
		if split == nil || len(split.Members) != (np+1-int(r%2))/2 || split.Members[0] != int32(np-1-int(r%2)) {
			t.Errorf("rank %d: split communicator %+v", r, split)
		}
		if count[OpFlush] < 2 {
			t.Errorf("rank %d: %d block writes recorded, want several", r, count[OpFlush])
		}
		if rk.Header.EagerShmBytes <= 0 && mpirun.OpenMPI() {
			t.Errorf("rank %d: eager limit %d not read from the MPI", r, rk.Header.EagerShmBytes)
		}
	}
}

// TestLaunchOfNoMPIProgram: a program that never calls MPI_Init under
// the real library writes no trace, which is said (bad input, exit 2);
// a --lib that is no shared object is refused before the program runs.
func TestLaunchOfNoMPIProgram(t *testing.T) {
	tmp := t.TempDir()
	lib, _ := tracetest.BuildLibrary(t, tmp, "trace/testdata/calls.c")
	marker := filepath.Join(tmp, "ran")
	// --out under parents that do not exist: created, and removed with
	// them when nothing was written
	deep := filepath.Join(tmp, "new", "parent", "out")
	// a shared library that wraps no MPI call
	plain := filepath.Join(tmp, "plain.so")
	if err := os.WriteFile(filepath.Join(tmp, "plain.c"), []byte("int plain(void) { return 1; }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("cc", "-shared", "-fPIC", "-o", plain, filepath.Join(tmp, "plain.c")).CombinedOutput(); err != nil {
		t.Fatalf("cc: %v\n%s", err, out)
	}
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, lib, want string
		runs            bool
		out, script     string // default tmp/out, touch marker
	}{
		{"the library, a program without MPI", lib, "wrote no trace", true, "", ""},
		{"a text file as the library", filepath.Join("testdata", "calls.c"), "is not an ELF shared library", false, "", ""},
		// a position-independent executable is ET_DYN like a library; ld.so
		// ignores it with a warning
		{"a program as the library", sh, "not a shared library", false, "", ""},
		{"a shared library wrapping no MPI call", plain, plain + " is a shared library but not commcost's tracing library: it does not define MPI_Init and MPI_Finalize over the MPI's PMPI_Init", false, "", ""},
		{"a program without MPI, --out's parents missing", lib, "wrote no trace into " + deep, true, deep, ""},
		// Another rank of the launch whose program wrote nothing removes
		// the --out it created, perhaps while this rank's still runs.
		{"a program without MPI, --out removed by another rank", lib, "wrote no trace into " + deep, true, deep,
			"touch " + marker + " && rmdir " + deep},
	} {
		t.Run(tc.name, func(t *testing.T) {
			os.Remove(marker)
			out, script := filepath.Join(tmp, "out"), "touch "+marker
			if tc.out != "" {
				out = tc.out
			}
			if tc.script != "" {
				script = tc.script
			}
			l := Launch{Out: out, Lib: tc.lib, Program: "sh", Args: []string{"-c", script}}
			err := l.Run(io.Discard, io.Discard)
			if err == nil || !opts.IsBadInput(err) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want bad input holding %q", err, tc.want)
			}
			if _, serr := os.Stat(marker); (serr == nil) != tc.runs {
				t.Errorf("the program ran: %v, want %v", serr == nil, tc.runs)
			}
			if _, serr := os.Stat(filepath.Join(tmp, "new")); tc.out != "" && !os.IsNotExist(serr) {
				t.Errorf("%s left behind (%v)", filepath.Join(tmp, "new"), serr)
			}
		})
	}
}

// TestLaunchRemovesLargerRunsRanks: rank 0 of a launch of 2 removes the
// rank files 2 and 3 an earlier run of 4 left in --out, and keeps its own
// ranks' (each replaces its own at the end).
func TestLaunchRemovesLargerRunsRanks(t *testing.T) {
	tmp := t.TempDir()
	lib, _ := tracetest.BuildLibrary(t, tmp, "trace/testdata/calls.c")
	out := filepath.Join(tmp, "out")
	if err := os.MkdirAll(out, 0o755); err != nil {
		t.Fatal(err)
	}
	for r := range 4 {
		if err := os.WriteFile(filepath.Join(out, RankFile(r)), sample(t, r), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	l := Launch{Out: out, Lib: lib, Program: "true", Rank: 0, Size: 2}
	_ = l.Run(io.Discard, io.Discard) // true writes no trace: refused, after the clean-up
	for r := range 4 {
		_, err := os.Stat(filepath.Join(out, RankFile(r)))
		if (err == nil) != (r < 2) {
			t.Errorf("%s: present %v, want %v", RankFile(r), err == nil, r < 2)
		}
	}
}
