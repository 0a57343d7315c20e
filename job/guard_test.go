package job

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/commcost/commcost/mpi"
	"github.com/commcost/commcost/mpi/local"
	"github.com/commcost/commcost/patterns"
)

// TestCommandHash: the same arguments hash alike; any difference,
// including where one argument ends, changes the hash; never negative.
func TestCommandHash(t *testing.T) {
	base := []string{"pingpong", "--sizes", "8,1K"}
	tests := []struct {
		name string
		args []string
		same bool
	}{
		{"same arguments", []string{"pingpong", "--sizes", "8,1K"}, true},
		{"another value", []string{"pingpong", "--sizes", "8,2K"}, false},
		{"another subcommand", []string{"bandwidth", "--sizes", "8,1K"}, false},
		{"arguments joined", []string{"pingpong", "--sizes8,1K"}, false},
		{"boundary moved", []string{"pingpong-", "-sizes", "8,1K"}, false},
		{"one argument more", []string{"pingpong", "--sizes", "8,1K", ""}, false},
	}
	h := CommandHash(base)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := CommandHash(tt.args)
			if (g == h) != tt.same || g < 0 {
				t.Errorf("hash %d against %d: same %v, want %v (and >= 0)", g, h, g == h, tt.same)
			}
		})
	}
}

// TestSameCommand runs the check on 4 goroutine ranks: agreement is nil
// everywhere; a mismatch is a *Mismatch on every rank, and rank 0's names
// the ranks whose arguments differ from its own.
func TestSameCommand(t *testing.T) {
	tests := []struct {
		name   string
		differ []int // ranks given other arguments
	}{
		{"all the same", nil},
		{"rank 2 differs", []int{2}},
		{"ranks 1 and 3 differ", []int{1, 3}},
		{"all but rank 0 differ", []int{1, 2, 3}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var mu sync.Mutex
			got := make([]*Mismatch, 4)
			err := local.RunWith(local.Options{Timeout: 30 * time.Second}, 4, func(c mpi.Comm) error {
				args := []string{"pingpong", "--sizes", "8"}
				if slices.Contains(tt.differ, c.Rank()) {
					args[2] = fmt.Sprint(16 + c.Rank()%2) // two different commands among the odd ones out
				}
				m, err := SameCommand(c, args)
				mu.Lock()
				got[c.Rank()] = m
				mu.Unlock()
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
			for r, m := range got {
				switch {
				case tt.differ == nil && m != nil:
					t.Errorf("rank %d: %+v, want agreement", r, m)
				case tt.differ != nil && m == nil:
					t.Errorf("rank %d: agreement, want a mismatch", r)
				case tt.differ != nil && r == 0 && !slices.Equal(m.Differ, tt.differ):
					t.Errorf("rank 0 names %v, want %v", m.Differ, tt.differ)
				case tt.differ != nil && r != 0 && m.Differ != nil:
					t.Errorf("rank %d names %v; only rank 0 reports", r, m.Differ)
				}
			}
		})
	}
}

// TestStallMessage: who is stuck and what it waits for, by backend state.
func TestStallMessage(t *testing.T) {
	s := patterns.Stall{Point: "pingpong bytes=8", Idle: 61 * time.Second, Running: 61 * time.Second, Timeout: 60 * time.Second}
	const end = "; ending the job (MPI_Abort, exit status 1)"
	tests := []struct {
		name      string
		w         Where
		who, wait string
		end       string // "" for the job's end by MPI_Abort
	}{
		{"local backend", Where{Rank: -1, LauncherRank: -1}, "watchdog: ", "", ""},
		{"before MPI is up", Where{Rank: -1, LauncherRank: 3}, "rank 3: ", "", "; ending this rank (exit status 1), and the launcher the job"},
		{"MPI up, not inside a call", Where{Rank: 1, Size: 4, LauncherRank: 1}, "rank 1 of 4: ", "", ""},
		{"receive from a peer", Where{Rank: 1, Size: 4, Inside: true, Op: "MPI_Recv", Peer: 3}, "rank 1 of 4: ", "; it waits in MPI_Recv for rank 3", ""},
		{"collective of two", Where{Rank: 1, Size: 2, Inside: true, Op: "MPI_Barrier", Peer: -1}, "rank 1 of 2: ", "; it waits in MPI_Barrier for rank 0, the only other rank", ""},
		{"collective of many", Where{Rank: 0, Size: 8, Inside: true, Op: "MPI_Allreduce", Peer: -1}, "rank 0 of 8: ",
			"; it waits in MPI_Allreduce for a rank that has not reached it (a collective over the 8 ranks, or a receive from any rank)", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := StallMessage(s, tt.w)
			e := end
			if tt.end != "" {
				e = tt.end
			}
			if want := tt.who + s.String() + tt.wait + e; got != want {
				t.Errorf("message\n%s\nwant\n%s", got, want)
			}
		})
	}
}

// TestLargest: the instance needing most memory, found among a plan's;
// the first one that cannot finish within the budget stops the check.
func TestLargest(t *testing.T) {
	small := patterns.KKAccess{K: 2, L: 64, R: 1}
	big := patterns.KKAccess{K: 4, L: 1 << 20, R: 1}
	slow := patterns.KKAccess{K: 100000000, L: 8, R: 1}
	tests := []struct {
		name    string
		plan    []patterns.Pattern
		maxTime float64
		want    int
		fails   bool
	}{
		{"largest in the middle", []patterns.Pattern{small, big, small}, 10, 1, false},
		{"largest last", []patterns.Pattern{small, big}, 10, 1, false},
		{"empty plan", nil, 10, -1, false},
		{"slow instance refused, named", []patterns.Pattern{small, slow, big}, 1e-3, 1, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			i, d, err := Largest(tt.plan, 4, tt.maxTime)
			if i != tt.want || (err != nil) != tt.fails {
				t.Fatalf("index %d, err %v; want %d, failure %v", i, err, tt.want, tt.fails)
			}
			if err != nil {
				if !strings.Contains(err.Error(), "lower --k") {
					t.Errorf("error %q does not say what to lower", err)
				}
				return
			}
			if i >= 0 && d != tt.plan[i].Demand(4) {
				t.Errorf("demand %+v, want the instance's own", d)
			}
		})
	}
}

// TestWatch: the watchdog is installed for the run and removed after it.
func TestWatch(t *testing.T) {
	if patterns.Installed() != nil {
		t.Fatal("a watchdog before the test")
	}
	remove := Watch(time.Minute, func(patterns.Stall) { t.Error("expired") })
	if patterns.Installed() == nil {
		t.Fatal("no watchdog installed")
	}
	remove()
	if patterns.Installed() != nil {
		t.Error("watchdog left installed")
	}
}

// TestNeed: the memory of a run's ranks on one host, by backend.
func TestNeed(t *testing.T) {
	const mib = 1 << 20
	tests := []struct {
		name            string
		need            Need
		ranks           int
		inProcess, host float64
	}{
		{"buffers only", Need{BufferBytes: 2 * mib}, 4, 4 * (2*mib + LocalRankBytes), 8 * mib},
		{"in flight counted in process only", Need{BufferBytes: 2 * mib, InFlightBytes: mib}, 2, 2 * (3*mib + LocalRankBytes), 4 * mib},
		{"no buffers: the local ranks' own cost", Need{}, 4096, 4096 * LocalRankBytes, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.need.InProcess(tt.ranks); got != tt.inProcess {
				t.Errorf("InProcess(%d) = %g, want %g", tt.ranks, got, tt.inProcess)
			}
			if got := tt.need.OnHost(tt.ranks); got != tt.host {
				t.Errorf("OnHost(%d) = %g, want %g", tt.ranks, got, tt.host)
			}
		})
	}
	if LocalRankBytes*4096 > 1<<30 {
		t.Errorf("4096 local ranks take %d bytes, above the 1 GiB bound", LocalRankBytes*4096)
	}
}
