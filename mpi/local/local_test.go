package local_test

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/commcost/commcost/mpi"
	"github.com/commcost/commcost/mpi/local"
	"github.com/commcost/commcost/mpi/mpitest"
)

// testOptions turn a hang into a failure that names where each rank is.
var testOptions = local.Options{Timeout: time.Minute, DetectDeadlock: true}

func runTest(n int, fn func(c mpi.Comm) error) error { return local.RunWith(testOptions, n, fn) }

func TestConformance(t *testing.T) {
	mpitest.RunWorlds(t, []int{1, 2, 3, 4, 7, 8}, runTest)
}

// TestConformanceHarness runs mpitest.Run itself, as mpi/native does, with
// every rank calling it on its own goroutine.
func TestConformanceHarness(t *testing.T) {
	if testing.Short() {
		t.Skip("the cases already run in TestConformance")
	}
	if err := runTest(3, func(c mpi.Comm) error { mpitest.Run(t, c); return nil }); err != nil {
		t.Fatal(err)
	}
}

// finishes fails the test if run does not return within limit: the point
// of the tests that use it is that Run must not hang.
func finishes(t *testing.T, limit time.Duration, run func() error) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- run() }()
	select {
	case err := <-done:
		return err
	case <-time.After(limit):
		t.Fatalf("Run still blocked after %v", limit)
		return nil
	}
}

func wantErr(t *testing.T, err error, parts ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("got no error, want one containing %q", parts)
	}
	for _, p := range parts {
		if !strings.Contains(err.Error(), p) {
			t.Errorf("error does not contain %q:\n%v", p, err)
		}
	}
}

func TestRankErrorAbortsBlockedRanks(t *testing.T) {
	boom := errors.New("boom")
	err := finishes(t, 10*time.Second, func() error {
		return local.Run(4, func(c mpi.Comm) error {
			switch c.Rank() {
			case 0:
				_, err := c.Recv(nil, 1, 0) // rank 1 never sends
				return err
			case 1:
				return boom
			case 2:
				return c.Barrier()
			default:
				return c.Ssend([]byte{1}, 0, 9) // never received
			}
		})
	})
	if !errors.Is(err, boom) {
		t.Errorf("error does not wrap the rank's error: %v", err)
	}
	wantErr(t, err, "rank 1: boom", "3 other rank(s) returned the world-abort error")
}

// TestOwnErrorAfterAbortListed: a rank that saw the world abort (its
// blocked call returned the abort error) but then returned an error of its
// own is listed with that error, not counted among the consequences (an
// emulated application that failed just as the rank it had warned
// returned first lost its error that way).
func TestOwnErrorAfterAbortListed(t *testing.T) {
	boom, first := errors.New("boom"), errors.New("first")
	err := local.Run(3, func(c mpi.Comm) error {
		switch c.Rank() {
		case 0:
			return first
		case 1:
			if _, err := c.Recv(nil, 0, 0); err == nil {
				return errors.New("Recv from a failed rank succeeded")
			}
			return boom
		default:
			_, err := c.Recv(nil, 0, 0)
			return fmt.Errorf("wrapped: %w", err)
		}
	})
	if !errors.Is(err, boom) || !errors.Is(err, first) {
		t.Errorf("error does not wrap both ranks' own errors: %v", err)
	}
	wantErr(t, err, "rank 0: first", "rank 1: boom", "1 other rank(s) returned the world-abort error")
}

func TestAbortErrorOnBlockedCall(t *testing.T) {
	var got error
	err := local.Run(2, func(c mpi.Comm) error {
		if c.Rank() == 1 {
			return errors.New("boom")
		}
		_, got = c.Recv(nil, 1, 0)
		return got
	})
	wantErr(t, err, "rank 1: boom")
	var e *mpi.Error
	if !errors.As(got, &e) || e.Op != "MPI_Recv" || e.Class != mpi.ErrOther || !strings.HasPrefix(e.Msg, "local: world aborted: rank 1 failed: boom") {
		t.Errorf("blocked Recv returned %#v", got)
	}
}

func TestPanicAbortsWorld(t *testing.T) {
	err := finishes(t, 10*time.Second, func() error {
		return local.Run(3, func(c mpi.Comm) error {
			if c.Rank() == 2 {
				panic("kaput")
			}
			return c.Barrier()
		})
	})
	wantErr(t, err, "rank 2: panic: kaput", "local_test.go") // with the stack
}

func TestGoexitIsAnError(t *testing.T) {
	err := finishes(t, 10*time.Second, func() error {
		return local.Run(2, func(c mpi.Comm) error {
			if c.Rank() == 0 {
				runtime.Goexit()
			}
			return c.Barrier()
		})
	})
	wantErr(t, err, "rank 0: rank goroutine exited via runtime.Goexit")
}

func TestTimeout(t *testing.T) {
	err := finishes(t, 10*time.Second, func() error {
		return local.RunWith(local.Options{Timeout: 100 * time.Millisecond}, 3, func(c mpi.Comm) error {
			if c.Rank() == 2 {
				return nil
			}
			_, err := c.Recv(nil, 1-c.Rank(), 4)
			return err
		})
	})
	wantErr(t, err, "timeout of 100ms exceeded", "rank 0: blocked in MPI_Recv(peer 1, tag 4) on comm 0", "rank 1: blocked in MPI_Recv(peer 0, tag 4)")
	if strings.Contains(err.Error(), "rank 2:") {
		t.Errorf("a rank that returned is listed:\n%v", err)
	}
}

func TestAbortGraceForRanksOutsideCalls(t *testing.T) {
	stuck := make(chan struct{})
	defer close(stuck)
	err := finishes(t, 10*time.Second, func() error {
		return local.RunWith(local.Options{AbortGrace: 50 * time.Millisecond}, 2, func(c mpi.Comm) error {
			if c.Rank() == 0 {
				<-stuck // not a local call: the abort cannot reach it
				return nil
			}
			return errors.New("boom")
		})
	})
	wantErr(t, err, "rank 1: boom", "rank(s) 0 did not return after the abort")
}

func TestDeadlockDetection(t *testing.T) {
	opts := local.Options{DetectDeadlock: true}
	for _, tc := range []struct {
		name  string
		n     int
		fn    func(c mpi.Comm) error
		parts []string
	}{
		{"RecvCycle", 3, func(c mpi.Comm) error {
			_, err := c.Recv(nil, (c.Rank()+1)%c.Size(), 0)
			return err
		}, []string{"deadlock", "rank 0: blocked in MPI_Recv(peer 1, tag 0)", "rank 2: blocked in MPI_Recv(peer 0, tag 0)"}},
		{"SsendToSelf", 1, func(c mpi.Comm) error { return c.Ssend([]byte{1}, 0, 0) },
			[]string{"deadlock", "MPI_Ssend(peer 0, tag 0)"}},
		{"MissingCollective", 3, func(c mpi.Comm) error {
			if c.Rank() == 1 {
				return nil
			}
			return c.Bcast(make([]byte, 4), 1)
		}, []string{"deadlock", "rank 0: blocked in MPI_Bcast(root 1)"}},
		{"ProbeNothing", 2, func(c mpi.Comm) error {
			_, err := c.Probe(mpi.AnySource, mpi.AnyTag)
			return err
		}, []string{"deadlock", "MPI_Probe(peer any, tag any)"}},
		{"WaitOnSplit", 2, func(c mpi.Comm) error {
			sub, err := c.Split(0, 0)
			if err != nil {
				return err
			}
			r, err := sub.Irecv(nil, mpi.AnySource, 3)
			if err != nil {
				return err
			}
			_, err = r.Wait()
			return err
		}, []string{"deadlock", "MPI_Wait(peer any, tag 3) on comm 1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := finishes(t, 10*time.Second, func() error { return local.RunWith(opts, tc.n, tc.fn) })
			wantErr(t, err, tc.parts...)
		})
	}
}

// TestNoFalseDeadlock drives many short blocking waits, where a detector
// that counted a woken rank as still blocked would fire.
func TestNoFalseDeadlock(t *testing.T) {
	const rounds = 2000
	err := local.RunWith(local.Options{DetectDeadlock: true}, 4, func(c mpi.Comm) error {
		peer := c.Rank() ^ 1
		buf := make([]byte, 8)
		for i := range rounds {
			if (c.Rank()+i)%2 == 0 {
				if err := c.Ssend(buf, peer, 0); err != nil {
					return err
				}
			} else if _, err := c.Recv(buf, peer, 0); err != nil {
				return err
			}
			if i%100 == 0 {
				if err := c.Barrier(); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestRunArguments(t *testing.T) {
	if err := local.Run(0, func(mpi.Comm) error { return nil }); err == nil {
		t.Error("Run(0, ...) succeeded")
	}
	if err := local.Run(1, nil); err == nil {
		t.Error("Run(1, nil) succeeded")
	}
}

func TestDescribesItselfAndHasNoKernels(t *testing.T) {
	err := local.Run(1, func(c mpi.Comm) error {
		if _, ok := c.(mpi.Kernels); ok {
			return errors.New("implements mpi.Kernels: patterns would time it as a native library")
		}
		d, ok := c.(mpi.Describer)
		if !ok {
			return errors.New("does not implement mpi.Describer")
		}
		if inf := d.Info(); inf.Implementation != "local" || inf.Library != "commcost mpi/local" {
			return fmt.Errorf("Info() = %+v", inf)
		}
		if c.Backend() != "local" {
			return fmt.Errorf("Backend() = %q", c.Backend())
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// class returns err's MPI class and Op; class -1 if err is not an *mpi.Error.
func class(err error) (int, string) {
	var e *mpi.Error
	if !errors.As(err, &e) {
		return -1, ""
	}
	return e.Class, e.Op
}

func TestErrorOps(t *testing.T) {
	err := local.Run(2, func(c mpi.Comm) error {
		for _, tc := range []struct {
			err   error
			op    string
			class int
		}{
			{c.Send(nil, 2, 0), "MPI_Send", mpi.ErrRank},
			{c.Ssend(nil, 0, -3), "MPI_Ssend", mpi.ErrTag},
			{second(c.Recv(nil, 0, -7)), "MPI_Recv", mpi.ErrTag},
			{second(c.Isend(nil, -1, 0)), "MPI_Isend", mpi.ErrRank},
			{second(c.Probe(5, 0)), "MPI_Probe", mpi.ErrRank},
			{c.Bcast(nil, 3), "MPI_Bcast", mpi.ErrRoot},
			{c.AllreduceInt64s(nil, nil, mpi.Op(3)), "MPI_Allreduce", mpi.ErrOp},
			{c.Gatherv(nil, nil, []int{1}, []int{0, 0}, 0), "MPI_Gatherv", mpi.ErrArg},
		} {
			if tc.err == nil {
				return fmt.Errorf("%s: no error", tc.op)
			}
			cl, op := class(tc.err)
			if cl != tc.class || op != tc.op {
				return fmt.Errorf("got %v, want op %s class %d", tc.err, tc.op, tc.class)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func second[T any](_ T, err error) error { return err }

// TestCollectiveDisagreement: ranks that disagree about a collective, or
// whose arguments are wrong on one rank only, all fail instead of hanging.
func TestCollectiveDisagreement(t *testing.T) {
	for _, tc := range []struct {
		name  string
		fn    func(c mpi.Comm) error
		class int
	}{
		{"DifferentCollectives", func(c mpi.Comm) error {
			if c.Rank() == 0 {
				return c.Barrier()
			}
			return c.Bcast(nil, 0)
		}, mpi.ErrOther},
		{"DifferentRoots", func(c mpi.Comm) error { return c.Bcast(nil, c.Rank()%2) }, mpi.ErrRoot},
		{"BcastLengths", func(c mpi.Comm) error { return c.Bcast(make([]byte, 4+c.Rank()), 0) }, mpi.ErrTruncate},
		{"BadCountsAtRootOnly", func(c mpi.Comm) error {
			return c.Gatherv([]byte{1}, make([]byte, 3), []int{1, 1}, []int{0, 1}, 0)
		}, mpi.ErrArg},
		{"GathervCountMismatch", func(c mpi.Comm) error {
			return c.Gatherv([]byte{1, 2}, make([]byte, 6), []int{2, 2, 1}, []int{0, 2, 4}, 0)
		}, mpi.ErrTruncate},
		{"ReduceLengths", func(c mpi.Comm) error {
			return c.AllreduceFloat64s(make([]float64, c.Rank()), make([]float64, 8), mpi.OpSum)
		}, mpi.ErrTruncate},
		{"DifferentOps", func(c mpi.Comm) error {
			return c.AllreduceInt64s([]int64{1}, []int64{0}, mpi.Op(c.Rank()%2))
		}, mpi.ErrOp},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := finishes(t, 10*time.Second, func() error {
				return runTest(3, func(c mpi.Comm) error {
					err := tc.fn(c)
					if err == nil {
						return errors.New("no error")
					}
					if cl, _ := class(err); cl != tc.class {
						return fmt.Errorf("class %d, want %d: %v", cl, tc.class, err)
					}
					return c.Barrier() // the communicator still works
				})
			})
			if err != nil {
				t.Fatal(err)
			}
		})
	}
}

func TestFree(t *testing.T) {
	err := runTest(2, func(c mpi.Comm) error {
		if cl, _ := class(c.Free()); cl != mpi.ErrComm {
			return fmt.Errorf("Free of the world: class %d", cl)
		}
		d, err := c.Dup()
		if err != nil {
			return err
		}
		if err := d.Free(); err != nil {
			return err
		}
		if cl, op := class(d.Send(nil, 0, 0)); cl != mpi.ErrComm || op != "MPI_Send" {
			return fmt.Errorf("Send on a freed comm: class %d op %s", cl, op)
		}
		if cl, _ := class(d.Free()); cl != mpi.ErrComm {
			return fmt.Errorf("second Free: class %d", cl)
		}
		return c.Barrier()
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestAllreduceBitwiseIdentical: float sums that depend on the order are
// the same bits on every rank and across runs.
func TestAllreduceBitwiseIdentical(t *testing.T) {
	const n = 13
	var results [2][n]float64
	for run := range results {
		err := runTest(n, func(c mpi.Comm) error {
			x := []float64{0.1 * float64(c.Rank()+1) / 3}
			got := []float64{0}
			if err := c.AllreduceFloat64s(x, got, mpi.OpSum); err != nil {
				return err
			}
			results[run][c.Rank()] = got[0]
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	for r := range n {
		if results[0][r] != results[0][0] || results[1][r] != results[0][0] {
			t.Fatalf("results differ: %v", results)
		}
	}
}

func TestAllreduce1024(t *testing.T) {
	const n, iters = 1024, 20
	start := time.Now()
	err := runTest(n, func(c mpi.Comm) error {
		for i := range iters {
			got := []int64{0, 0}
			if err := c.AllreduceInt64s([]int64{int64(c.Rank()), int64(i)}, got, mpi.OpSum); err != nil {
				return err
			}
			if got[0] != n*(n-1)/2 || got[1] != int64(n*i) {
				return fmt.Errorf("iteration %d: sum %v", i, got)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d ranks, %d allreduces: %v", n, iters, time.Since(start))
}

// TestRandomExchange1024: every rank sends messages to random ranks with
// random tags; receivers learn how many to expect through an Alltoall and
// receive them with wildcards, checking each sender's stream stays in order.
func TestRandomExchange1024(t *testing.T) {
	const n = 1024
	perRank := 200
	if testing.Short() || raceEnabled {
		perRank = 50
	}
	start := time.Now()
	err := runTest(n, func(c mpi.Comm) error {
		me := c.Rank()
		rng := rand.New(rand.NewPCG(1, uint64(me)))
		dests := make([]int, perRank)
		counts := make([]int64, n)
		for i := range dests {
			dests[i] = rng.IntN(n)
			counts[dests[i]]++
		}
		incoming := make([]int64, n)
		if err := mpi.AlltoallInt64s(c, counts, incoming); err != nil {
			return err
		}
		// Message k of this rank to d carries (me, k); receivers check order per source.
		seq := make([]int64, n)
		for _, d := range dests {
			msg := []int64{int64(me), seq[d]}
			seq[d]++
			if err := mpi.SendInt64s(c, msg, d, rng.IntN(4)); err != nil {
				return err
			}
		}
		var total int64
		for _, k := range incoming {
			total += k
		}
		next := make([]int64, n)
		buf := make([]int64, 2)
		for range total {
			st, err := mpi.RecvInt64s(c, buf, mpi.AnySource, mpi.AnyTag)
			if err != nil {
				return err
			}
			if buf[0] != int64(st.Source) || buf[1] != next[st.Source] {
				return fmt.Errorf("from %d: got message %v, want (%d, %d)", st.Source, buf, st.Source, next[st.Source])
			}
			next[st.Source]++
		}
		for s := range n {
			if next[s] != incoming[s] {
				return fmt.Errorf("from %d: received %d, announced %d", s, next[s], incoming[s])
			}
		}
		return c.Barrier()
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d ranks x %d messages: %v", n, perRank, time.Since(start))
}

func BenchmarkPingPong(b *testing.B) {
	for _, size := range []int{8, 64 << 10} {
		b.Run(fmt.Sprintf("bytes=%d", size), func(b *testing.B) {
			err := local.Run(2, func(c mpi.Comm) error {
				buf := make([]byte, size)
				peer := 1 - c.Rank()
				// Rank 0 owns the benchmark loop and tells rank 1 when to stop.
				if c.Rank() == 1 {
					for {
						st, err := c.Recv(buf, 0, mpi.AnyTag)
						if err != nil || st.Tag == 1 {
							return err
						}
						if err := c.Send(buf, 0, 0); err != nil {
							return err
						}
					}
				}
				for b.Loop() {
					if err := c.Send(buf, peer, 0); err != nil {
						return err
					}
					if _, err := c.Recv(buf, peer, 0); err != nil {
						return err
					}
				}
				return c.Send(nil, peer, 1)
			})
			if err != nil {
				b.Fatal(err)
			}
		})
	}
}

func BenchmarkAllreduce(b *testing.B) {
	for _, n := range []int{8, 256} {
		b.Run(fmt.Sprintf("ranks=%d", n), func(b *testing.B) {
			iters := b.N
			err := local.Run(n, func(c mpi.Comm) error {
				in, out := []float64{1}, []float64{0}
				for range iters {
					if err := c.AllreduceFloat64s(in, out, mpi.OpSum); err != nil {
						return err
					}
				}
				return nil
			})
			if err != nil {
				b.Fatal(err)
			}
		})
	}
}

// TestMatchingAgainstModel drives random sends, receives and probes, with
// and without wildcards, and compares every outcome with a direct reading of
// MPI's matching rules: a message goes to the earliest-posted matching
// receive; a receive or probe takes the earliest-arrived matching message.
// One goroutine drives all ranks' handles (each is still used by one
// goroutine at a time), so the order of events is exact.
func TestMatchingAgainstModel(t *testing.T) {
	const ranks, tags, ops = 4, 4, 4000
	type message struct{ src, tag, id int }
	type posted struct {
		src, tag int
		req      mpi.Request
		buf      []byte
		got      int // id of the matched message, -1 while pending
	}
	matches := func(src, tag int, m message) bool {
		return (src == mpi.AnySource || src == m.src) && (tag == mpi.AnyTag || tag == m.tag)
	}
	// The ranks other than 0 lend their handles to rank 0 and wait.
	lend := make(chan mpi.Comm, ranks)
	done := make(chan struct{})
	err := runTest(ranks, func(c mpi.Comm) error {
		if c.Rank() != 0 {
			lend <- c
			<-done
			return nil
		}
		defer close(done)
		comms := make([]mpi.Comm, ranks)
		comms[0] = c
		for range ranks - 1 {
			o := <-lend
			comms[o.Rank()] = o
		}
		rng := rand.New(rand.NewPCG(7, 7))
		var unexpected []message
		var pending []*posted
		nextID := 0
		// No wildcards at first, so that the wildcard indexes are built
		// over a backlog of messages.
		const backlog = 300
		op := 0
		wild := func(n, wildcard int) int {
			if op >= backlog && rng.IntN(3) == 0 {
				return wildcard
			}
			return rng.IntN(n)
		}
		check := func(p *posted) error {
			done, st, err := p.req.Test()
			if err != nil {
				return err
			}
			if done != (p.got >= 0) {
				return fmt.Errorf("receive (%d, %d): done = %v, model says matched message %d", p.src, p.tag, done, p.got)
			}
			if done {
				if id := int(p.buf[0]) | int(p.buf[1])<<8; id != p.got || st.Count != 2 {
					return fmt.Errorf("receive (%d, %d) got message %d (status %+v), want %d", p.src, p.tag, id, st, p.got)
				}
			}
			return nil
		}
		for ; op < ops; op++ {
			kind := rng.IntN(3)
			if op < backlog && kind == 1 && rng.IntN(2) == 0 {
				kind = 0
			}
			switch kind {
			case 0: // send
				m := message{rng.IntN(ranks), rng.IntN(tags), nextID}
				nextID++
				if err := comms[m.src].Send([]byte{byte(m.id), byte(m.id >> 8)}, 0, m.tag); err != nil {
					return err
				}
				matched := false
				for i, p := range pending {
					if matches(p.src, p.tag, m) {
						p.got = m.id
						if err := check(p); err != nil {
							return fmt.Errorf("op %d: %w", op, err)
						}
						pending = append(pending[:i], pending[i+1:]...)
						matched = true
						break
					}
				}
				if !matched {
					unexpected = append(unexpected, m)
				}
			case 1: // Irecv
				p := &posted{src: wild(ranks, mpi.AnySource), tag: wild(tags, mpi.AnyTag), buf: make([]byte, 2), got: -1}
				req, err := c.Irecv(p.buf, p.src, p.tag)
				if err != nil {
					return err
				}
				p.req = req
				for i, m := range unexpected {
					if matches(p.src, p.tag, m) {
						p.got = m.id
						unexpected = append(unexpected[:i], unexpected[i+1:]...)
						break
					}
				}
				if err := check(p); err != nil {
					return fmt.Errorf("op %d: %w", op, err)
				}
				if p.got < 0 {
					pending = append(pending, p)
				}
			case 2: // Iprobe
				src, tag := wild(ranks, mpi.AnySource), wild(tags, mpi.AnyTag)
				found, st, err := c.Iprobe(src, tag)
				if err != nil {
					return err
				}
				want := -1
				for _, m := range unexpected {
					if matches(src, tag, m) {
						want = m.id
						if !found || st.Source != m.src || st.Tag != m.tag {
							return fmt.Errorf("op %d: Iprobe(%d, %d) = %v %+v, want message %+v", op, src, tag, found, st, m)
						}
						break
					}
				}
				if want < 0 && found {
					return fmt.Errorf("op %d: Iprobe(%d, %d) found %+v, model has none", op, src, tag, st)
				}
			}
		}
		for _, p := range pending {
			if err := check(p); err != nil {
				return err
			}
		}
		t.Logf("%d ops, %d messages, %d left unexpected, %d receives left pending", ops, nextID, len(unexpected), len(pending))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
