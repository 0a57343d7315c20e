package native

import (
	"bytes"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"
	"unsafe"
	"weak"

	"github.com/commcost/commcost/mpi"
)

// These tests cover what is specific to the binding (errors from the
// library, pinning, counts, threads, kernels); the semantics every backend
// shares are mpi/mpitest's. Every test is collective: all ranks run it and
// make the same MPI calls, so an assertion that fails on one rank uses
// t.Errorf and lets the communication pattern finish.

// partner pairs rank 2k with 2k+1; with an odd size the last rank has none.
func partner(c mpi.Comm) (peer int, ok bool) {
	r := c.Rank()
	if r%2 == 0 {
		return r + 1, r+1 < c.Size()
	}
	return r - 1, true
}

// wantClass checks that err is an *mpi.Error of class want for operation op.
func wantClass(t *testing.T, err error, op string, want int) {
	t.Helper()
	var e *mpi.Error
	if !errors.As(err, &e) {
		t.Errorf("%s: got error %v (%T), want *mpi.Error of class %d", op, err, err, want)
		return
	}
	if !errors.Is(err, &mpi.Error{Class: want}) {
		t.Errorf("%s: class %d, want %d (%v)", op, e.Class, want, err)
	}
	if !strings.HasPrefix(e.Op, op) {
		t.Errorf("error names operation %q, want %q", e.Op, op)
	}
	if e.Msg == "" || e.Code == 0 {
		t.Errorf("%s: empty message or zero code: %+v", op, e)
	}
}

func TestInfo(t *testing.T) {
	needMPI(t)
	c := world()
	info := c.Info()
	if info.Implementation != Implementation() || info.Implementation == "unknown" {
		t.Errorf("Implementation = %q, want %q", info.Implementation, Implementation())
	}
	if info.ThreadLevel != ThreadSerialized.String() || Provided() != ThreadSerialized {
		t.Errorf("thread level %q (%v), want %v", info.ThreadLevel, Provided(), ThreadSerialized)
	}
	want := map[string]string{"openmpi": "Open MPI", "mpich": "MPICH"}[Implementation()]
	if !strings.Contains(info.Library, want) || strings.Contains(info.Library, "\n") {
		t.Errorf("Library = %q, want one line mentioning %q", info.Library, want)
	}
	if info.Version == "" || info.Processor == "" {
		t.Errorf("empty Version or Processor: %+v", info)
	}
	if WorldRank() != c.Rank() || WorldSize() != c.Size() || c.Backend() != "native" {
		t.Errorf("WorldRank/WorldSize/Backend = %d/%d/%q, comm says %d/%d", WorldRank(), WorldSize(), c.Backend(), c.Rank(), c.Size())
	}
	if tick := c.Wtick(); tick <= 0 || tick > 1e-3 {
		t.Errorf("Wtick = %g s, want a positive resolution of at most 1 ms", tick)
	}
	if t0, t1 := c.Wtime(), c.Wtime(); t1 < t0 {
		t.Errorf("Wtime went backwards: %g then %g", t0, t1)
	}
	if c.Rank() == 0 {
		t.Logf("%s | MPI %s | %s | %s | %d ranks", info.Library, info.Version, info.ThreadLevel, info.Processor, c.Size())
	}
}

// TestErrorsReturn checks that MPI_ERRORS_RETURN is in force: invalid
// arguments, whether the library or the binding detects them, come back as
// *mpi.Error on every rank and the job goes on.
func TestErrorsReturn(t *testing.T) {
	needMPI(t)
	c := world()
	n := c.Size()
	buf := make([]byte, 8)
	freed, err := c.Dup()
	if err != nil {
		t.Fatal(err)
	}
	if err := freed.Free(); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name  string
		op    string
		class int
		call  func() error
	}{
		{"send rank too large (library)", "MPI_Send", mpi.ErrRank, func() error { return c.Send(buf, n, 0) }},
		{"send negative rank (binding)", "MPI_Send", mpi.ErrRank, func() error { return c.Send(buf, -2, 0) }},
		{"send negative tag (library)", "MPI_Send", mpi.ErrTag, func() error { return c.Send(buf, 0, -5) }},
		{"ssend rank too large", "MPI_Ssend", mpi.ErrRank, func() error { return c.Ssend(buf, n+3, 0) }},
		{"recv rank too large", "MPI_Recv", mpi.ErrRank, func() error { _, err := c.Recv(buf, n, 0); return err }},
		{"recv negative rank", "MPI_Recv", mpi.ErrRank, func() error { _, err := c.Recv(buf, -3, 0); return err }},
		{"recv negative tag", "MPI_Recv", mpi.ErrTag, func() error { _, err := c.Recv(buf, 0, -7); return err }},
		{"isend rank too large", "MPI_Isend", mpi.ErrRank, func() error {
			r, err := c.Isend(buf, n, 0)
			if r != nil {
				return errors.New("non-nil request with an error")
			}
			return err
		}},
		{"irecv negative tag", "MPI_Irecv", mpi.ErrTag, func() error { _, err := c.Irecv(buf, 0, -9); return err }},
		{"sendrecv rank too large", "MPI_Sendrecv", mpi.ErrRank, func() error { _, err := c.Sendrecv(buf, n, 0, buf, 0, 0); return err }},
		{"probe rank too large", "MPI_Probe", mpi.ErrRank, func() error { _, err := c.Probe(n, 0); return err }},
		{"iprobe negative rank", "MPI_Iprobe", mpi.ErrRank, func() error { _, _, err := c.Iprobe(-4, 0); return err }},
		{"bcast root too large (library)", "MPI_Bcast", mpi.ErrRoot, func() error { return c.Bcast(buf, n) }},
		{"gather negative root (binding)", "MPI_Gather", mpi.ErrRoot, func() error { return c.Gather(buf, nil, -1) }},
		{"reduce unknown op", "MPI_Reduce", mpi.ErrOp, func() error {
			return c.ReduceInt64s([]int64{1}, []int64{0}, mpi.Op(7), 0)
		}},
		{"free world", "MPI_Comm_free", mpi.ErrComm, func() error { return c.Free() }},
		{"use after free", "MPI_Barrier", mpi.ErrComm, func() error { return freed.Barrier() }},
		{"free twice", "MPI_Comm_free", mpi.ErrComm, func() error { return freed.Free() }},
		{"split after free", "MPI_Comm_split", mpi.ErrComm, func() error { _, err := freed.Split(0, 0); return err }},
	}
	for _, tc := range cases {
		wantClass(t, tc.call(), tc.op, tc.class)
	}

	// Truncation is detected on the receiving side, after matching.
	if peer, ok := partner(c); ok {
		if c.Rank()%2 == 0 {
			if err := c.Send(make([]byte, 16), peer, 3); err != nil {
				t.Error(err)
			}
			if err := c.Send(make([]byte, 16), peer, 4); err != nil {
				t.Error(err)
			}
		} else {
			_, err := c.Recv(make([]byte, 8), peer, 3)
			wantClass(t, err, "MPI_Recv", mpi.ErrTruncate)
			r, err := c.Irecv(make([]byte, 8), peer, 4)
			if err != nil {
				t.Fatal(err)
			}
			_, err = r.Wait()
			wantClass(t, err, "MPI_Wait(MPI_Irecv)", mpi.ErrTruncate)
		}
	}
	// The job survived all of that.
	if err := c.Barrier(); err != nil {
		t.Fatal(err)
	}
}

// TestClassTable checks the translation of error classes both ways for
// every standard class: the library's text for it must come back with the
// same class.
func TestClassTable(t *testing.T) {
	needMPI(t)
	for class := mpi.ErrSuccess + 1; class <= mpi.ErrIntern; class++ {
		err := classError("op", class, "")
		var e *mpi.Error
		if !errors.As(err, &e) || e.Class != class {
			t.Errorf("class %d: %v", class, err)
			continue
		}
		if back := errorFromCode("op", e.Code).(*mpi.Error); back.Class != class || back.Msg != e.Msg {
			t.Errorf("class %d: code %d maps back to %+v", class, e.Code, back)
		}
		// Under either library the message names the class (MPICH's
		// MPI_Error_string does not by itself).
		if name := mpi.ClassName(class); !strings.HasPrefix(e.Msg, name+":") {
			t.Errorf("class %d: message %q does not start with %s", class, e.Msg, name)
		}
	}
}

func TestZeroLength(t *testing.T) {
	needMPI(t)
	c := world()
	if peer, ok := partner(c); ok {
		for i, b := range [][]byte{nil, {}, make([]byte, 4)[:0]} {
			tag := 10 + i
			if c.Rank()%2 == 0 {
				if err := c.Send(b, peer, tag); err != nil {
					t.Error(err)
				}
				r, err := c.Isend(b, peer, tag)
				if err != nil {
					t.Fatal(err)
				}
				if _, err := r.Wait(); err != nil {
					t.Error(err)
				}
			} else {
				st, err := c.Recv(b, mpi.AnySource, mpi.AnyTag)
				if err != nil || st != (mpi.Status{Source: peer, Tag: tag, Count: 0}) {
					t.Errorf("Recv of an empty message: %+v, %v", st, err)
				}
				r, err := c.Irecv(b, peer, tag)
				if err != nil {
					t.Fatal(err)
				}
				if st, err := r.Wait(); err != nil || st.Count != 0 || st.Source != peer {
					t.Errorf("Irecv of an empty message: %+v, %v", st, err)
				}
			}
		}
		if _, err := c.Sendrecv(nil, peer, 20, nil, peer, 20); err != nil {
			t.Error(err)
		}
	}
	n := c.Size()
	checks := []struct {
		name string
		call func() error
	}{
		{"Bcast", func() error { return c.Bcast(nil, 0) }},
		{"Gather", func() error { return c.Gather(nil, nil, 0) }},
		{"Allgather", func() error { return c.Allgather([]byte{}, nil) }},
		{"Scatter", func() error { return c.Scatter(nil, nil, n-1) }},
		{"Alltoall", func() error { return c.Alltoall(nil, nil) }},
		{"Gatherv", func() error { return c.Gatherv(nil, nil, make([]int, n), make([]int, n), 0) }},
		{"Allgatherv", func() error { return c.Allgatherv(nil, nil, make([]int, n), make([]int, n)) }},
		{"Scatterv", func() error { return c.Scatterv(nil, make([]int, n), make([]int, n), nil, 0) }},
		{"Alltoallv", func() error {
			z := make([]int, n)
			return c.Alltoallv(nil, z, z, nil, z, z)
		}},
		{"AllreduceFloat64s", func() error { return c.AllreduceFloat64s(nil, nil, mpi.OpSum) }},
		{"ReduceInt64s", func() error { return c.ReduceInt64s([]int64{}, nil, mpi.OpMax, 0) }},
	}
	for _, ck := range checks {
		if err := ck.call(); err != nil {
			t.Errorf("%s with empty buffers: %v", ck.name, err)
		}
	}
}

// reserve maps n bytes of address space that may not be touched
// (PROT_NONE, no memory behind it): a buffer longer than mpi.MaxCount for
// the price of a page table entry. A binding that touched it would crash.
func reserve(t *testing.T, n int) []byte {
	t.Helper()
	b, err := syscall.Mmap(-1, 0, n, syscall.PROT_NONE, syscall.MAP_PRIVATE|syscall.MAP_ANON|syscall.MAP_NORESERVE)
	if err != nil {
		t.Skipf("cannot reserve %d bytes of address space: %v", n, err)
	}
	t.Cleanup(func() { syscall.Munmap(b) })
	return b
}

func TestCountLimit(t *testing.T) {
	for _, tc := range []struct {
		n  int
		ok bool
	}{{0, true}, {1, true}, {mpi.MaxCount, true}, {mpi.MaxCount + 1, false}, {1 << 40, false}, {-1, false}} {
		err := checkCount("MPI_Send", "buffer", tc.n)
		if (err == nil) != tc.ok {
			t.Errorf("checkCount(%d) = %v, want ok=%v", tc.n, err, tc.ok)
		}
		if err != nil && Initialized() {
			wantClass(t, err, "MPI_Send", mpi.ErrCount)
		}
	}
	needMPI(t)
	c := world()
	big := reserve(t, mpi.MaxCount+1)
	small := make([]byte, 8)
	n := c.Size()
	peer := (c.Rank() + 1) % n
	if n == 1 {
		t.Skip("needs a peer rank")
	}
	calls := []struct {
		op   string
		call func() error
	}{
		{"MPI_Send", func() error { return c.Send(big, peer, 0) }},
		{"MPI_Ssend", func() error { return c.Ssend(big, peer, 0) }},
		{"MPI_Recv", func() error { _, err := c.Recv(big, peer, 0); return err }},
		{"MPI_Sendrecv", func() error { _, err := c.Sendrecv(small, peer, 0, big, peer, 0); return err }},
		{"MPI_Isend", func() error { _, err := c.Isend(big, peer, 0); return err }},
		{"MPI_Irecv", func() error { _, err := c.Irecv(big, peer, 0); return err }},
		{"MPI_Bcast", func() error { return c.Bcast(big, 0) }},
		{"MPI_Gather", func() error { return c.Gather(big, nil, 0) }},
		{"MPI_Allgather", func() error { return c.Allgather(big, nil) }},
		{"MPI_Scatter", func() error { return c.Scatter(nil, big, 0) }},
		{"MPI_Alltoall", func() error { return c.Alltoall(big, nil) }},
		{"MPI_Allgatherv", func() error {
			counts := make([]int, n)
			counts[c.Rank()] = mpi.MaxCount + 1
			return c.Allgatherv(small, big, counts, make([]int, n))
		}},
		{"PingPong", func() error { _, err := c.PingPong(big, big, peer, 0, 1, true); return err }},
		{"Bandwidth", func() error { _, err := c.Bandwidth(big, peer, 0, 1, 1, true); return err }},
	}
	for _, cl := range calls {
		err := cl.call()
		wantClass(t, err, cl.op, mpi.ErrCount)
		if err != nil && cl.op != "MPI_Allgatherv" && !strings.Contains(err.Error(), "MaxCount") {
			t.Errorf("%s: message does not explain the limit: %v", cl.op, err)
		}
	}
	// Element counts of the typed reductions: 2^31 float64s of address space.
	fbig := reserve(t, (mpi.MaxCount+1)*8)
	fv := unsafe.Slice((*float64)(unsafe.Pointer(&fbig[0])), mpi.MaxCount+1)
	wantClass(t, c.AllreduceFloat64s(fv, fv, mpi.OpSum), "MPI_Allreduce", mpi.ErrCount)
	iv := unsafe.Slice((*int64)(unsafe.Pointer(&fbig[0])), mpi.MaxCount+1)
	wantClass(t, c.ReduceInt64s(iv, nil, mpi.OpSum, 0), "MPI_Reduce", mpi.ErrCount)
	if outstanding() != 0 {
		t.Errorf("%d requests outstanding after rejected calls", outstanding())
	}
}

// TestVArgs checks the binding's own argument checks of the v-collectives
// and rooted collectives. Each failing call fails locally on every rank
// that makes it, before any communication, so ranks stay in step.
func TestVArgs(t *testing.T) {
	needMPI(t)
	c := world()
	n, me := c.Size(), c.Rank()
	if n < 2 {
		t.Skip("the bound checks below assume at least 2 ranks")
	}
	ones := func(v int) []int {
		s := make([]int, n)
		for i := range s {
			s[i] = v
		}
		return s
	}
	seq := func(step int) []int {
		s := make([]int, n)
		for i := range s {
			s[i] = i * step
		}
		return s
	}
	send := make([]byte, 4)
	recv := make([]byte, 4*n)
	all := []struct {
		op    string
		class int
		call  func() error
	}{
		{"MPI_Gatherv", mpi.ErrArg, func() error { return c.Gatherv(send, recv, ones(4)[:n-1], seq(4), 0) }},
		{"MPI_Gatherv", mpi.ErrArg, func() error { return c.Gatherv(send, recv, append(ones(4), 4), seq(4), 0) }},
		{"MPI_Allgatherv", mpi.ErrArg, func() error { return c.Allgatherv(send, recv, ones(4), nil) }},
		{"MPI_Allgatherv", mpi.ErrCount, func() error { return c.Allgatherv(send, recv, ones(4), seq(5)) }},
		{"MPI_Allgatherv", mpi.ErrCount, func() error { return c.Allgatherv(send, recv, ones(3), seq(3)) }},
		{"MPI_Allgatherv", mpi.ErrCount, func() error { return c.Allgatherv(send, recv, ones(-1), seq(4)) }},
		{"MPI_Alltoallv", mpi.ErrArg, func() error { return c.Alltoallv(recv, ones(4), ones(-1), recv, ones(4), seq(4)) }},
		{"MPI_Alltoallv", mpi.ErrCount, func() error { return c.Alltoallv(recv, ones(4), seq(4), recv, ones(5), seq(4)) }},
		{"MPI_Alltoallv", mpi.ErrArg, func() error { return c.Alltoallv(recv, ones(4), seq(4), recv, ones(4), seq(4)[1:]) }},
		{"MPI_Allgather", mpi.ErrCount, func() error { return c.Allgather(send, recv[:len(recv)-1]) }},
		{"MPI_Allreduce", mpi.ErrBuffer, func() error {
			v := make([]float64, 4)
			return c.AllreduceFloat64s(v[:3], v[1:], mpi.OpSum)
		}},
		{"MPI_Allreduce", mpi.ErrCount, func() error { return c.AllreduceInt64s(make([]int64, 3), make([]int64, 2), mpi.OpMin) }},
		{"MPI_Alltoall", mpi.ErrCount, func() error { return c.Alltoall(make([]byte, n+1), make([]byte, 2*n)) }},
	}
	for _, cl := range all {
		wantClass(t, cl.call(), cl.op, cl.class)
	}
	// Checks that only the root can make (no other rank calls: the
	// call fails before communicating).
	if me == 0 {
		root := []struct {
			op    string
			class int
			call  func() error
		}{
			{"MPI_Gather", mpi.ErrCount, func() error { return c.Gather(send, recv[:len(recv)-1], 0) }},
			{"MPI_Gatherv", mpi.ErrCount, func() error { return c.Gatherv(send, recv, ones(4), seq(5), 0) }},
			{"MPI_Gatherv", mpi.ErrCount, func() error { return c.Gatherv(send, recv, ones(3), seq(3), 0) }},
			{"MPI_Gatherv", mpi.ErrArg, func() error { return c.Gatherv(send, recv, nil, nil, 0) }},
			{"MPI_Scatter", mpi.ErrCount, func() error { return c.Scatter(recv[:len(recv)-1], send, 0) }},
			{"MPI_Scatterv", mpi.ErrCount, func() error { return c.Scatterv(recv, ones(4), seq(4+1), send, 0) }},
			{"MPI_Scatterv", mpi.ErrArg, func() error { return c.Scatterv(recv, ones(4), nil, send, 0) }},
		}
		for _, cl := range root {
			wantClass(t, cl.call(), cl.op, cl.class)
		}
	}

	// Valid uneven blocks: rank i contributes i+1 bytes of value i+1.
	counts := make([]int, n)
	displs := make([]int, n)
	total := 0
	for i := range counts {
		counts[i], displs[i] = i+1, total
		total += i + 1
	}
	mine := bytes.Repeat([]byte{byte(me + 1)}, me+1)
	want := make([]byte, 0, total)
	for i := range n {
		want = append(want, bytes.Repeat([]byte{byte(i + 1)}, i+1)...)
	}
	got := make([]byte, total)
	if err := c.Allgatherv(mine, got, counts, displs); err != nil || !bytes.Equal(got, want) {
		t.Errorf("Allgatherv: %v, %v, want %v", got, err, want)
	}
	got = make([]byte, total)
	var cs, ds []int
	if me == n-1 {
		cs, ds = counts, displs
	}
	if err := c.Gatherv(mine, got, cs, ds, n-1); err != nil || (me == n-1 && !bytes.Equal(got, want)) {
		t.Errorf("Gatherv at root %d: %v, %v", n-1, got, err)
	}
	back := make([]byte, me+1)
	if err := c.Scatterv(want, cs, ds, back, n-1); err != nil || !bytes.Equal(back, mine) {
		t.Errorf("Scatterv: %v, %v, want %v", back, err, mine)
	}

	// In place: the same slice as send and recv means MPI_IN_PLACE.
	v := []float64{float64(me + 1), float64(-me)}
	if err := c.AllreduceFloat64s(v, v, mpi.OpSum); err != nil || v[0] != float64(n*(n+1)/2) || v[1] != -float64(n*(n-1)/2) {
		t.Errorf("in-place Allreduce: %v, %v", v, err)
	}
	iv := []int64{int64(me)}
	if err := c.ReduceInt64s(iv, iv, mpi.OpMax, 0); err != nil || (me == 0 && iv[0] != int64(n-1)) {
		t.Errorf("in-place Reduce at root: %v, %v", iv, err)
	}
}

// churn allocates and discards memory and forces collections, so that a
// buffer kept alive by nothing but an outstanding request would be freed
// and reused.
func churn() {
	var keep [][]byte
	for round := range 4 {
		for i := range 256 {
			keep = append(keep, make([]byte, 16<<10+i))
		}
		if round%2 == 1 {
			keep = nil
		}
		runtime.GC()
	}
	runtime.KeepAlive(keep)
}

func pattern(seed, i int) byte { return byte(seed*31 + i*7 + i>>8) }

// TestPinningGC posts large non-blocking sends and receives, drops every
// reference to their buffers except the requests, and forces garbage
// collections while the transfers are outstanding (MPI only progresses
// inside MPI calls, so the rendezvous transfers of 1 MiB messages wait).
// Weak pointers show the buffers stayed alive; the received data shows
// they stayed in place.
func TestPinningGC(t *testing.T) {
	needMPI(t)
	c := world()
	peer, ok := partner(c)
	if !ok {
		if err := c.Barrier(); err != nil {
			t.Fatal(err)
		}
		return
	}
	const nreq, size = 4, 1 << 20
	type block = [size]byte
	sender := c.Rank()%2 == 0
	weaks := make([]weak.Pointer[block], nreq)
	reqs := make([]mpi.Request, nreq)
	for i := range nreq {
		b := new(block)
		if sender {
			for j := range b {
				b[j] = pattern(i, j)
			}
		}
		weaks[i] = weak.Make(b)
		var err error
		if sender {
			reqs[i], err = c.Isend(b[:], peer, 200+i)
		} else {
			reqs[i], err = c.Irecv(b[:], peer, 200+i)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if got := outstanding(); got < nreq {
		t.Errorf("outstanding() = %d after posting %d requests", got, nreq)
	}
	churn()
	blocks := make([]*block, nreq)
	for i, w := range weaks {
		if blocks[i] = w.Value(); blocks[i] == nil {
			t.Fatalf("buffer %d was collected while its request was outstanding", i)
		}
	}
	// Half the requests complete through Test, half through Wait, with
	// more collections in between.
	for i, r := range reqs {
		if i%2 == 0 {
			for {
				done, _, err := r.Test()
				if err != nil {
					t.Fatal(err)
				}
				if done {
					break
				}
				runtime.GC()
			}
		}
	}
	churn()
	sts, err := mpi.Waitall(reqs)
	if err != nil {
		t.Fatal(err)
	}
	for i, st := range sts {
		if sender {
			continue
		}
		if st.Count != size || st.Source != peer || st.Tag != 200+i {
			t.Errorf("request %d: status %+v", i, st)
		}
		for j := range size {
			if blocks[i][j] != pattern(i, j) {
				t.Errorf("request %d: byte %d = %d, want %d", i, j, blocks[i][j], pattern(i, j))
				break
			}
		}
	}
	if got := outstanding(); got != 0 {
		t.Errorf("outstanding() = %d after Waitall", got)
	}
	if err := c.Barrier(); err != nil {
		t.Fatal(err)
	}
}

// TestTestAndProbe: a receive posted before the sender can have sent is
// not complete, Iprobe finds nothing, and after the sender's Send the
// request completes through Test with the right status.
func TestTestAndProbe(t *testing.T) {
	needMPI(t)
	c := world()
	peer, ok := partner(c)
	if !ok {
		c.Barrier()
		return
	}
	const tag = 31
	msg := []byte("hello, serialized world")
	if c.Rank()%2 == 0 {
		if err := c.Barrier(); err != nil {
			t.Fatal(err)
		}
		if err := c.Send(msg, peer, tag); err != nil {
			t.Fatal(err)
		}
		return
	}
	buf := make([]byte, 64)
	r, err := c.Irecv(buf, peer, tag)
	if err != nil {
		t.Fatal(err)
	}
	if done, _, err := r.Test(); done || err != nil {
		t.Errorf("Test before the peer sent: done=%v err=%v", done, err)
	}
	if found, _, err := c.Iprobe(peer, tag+1); found || err != nil {
		t.Errorf("Iprobe before the peer sent: found=%v err=%v", found, err)
	}
	if err := c.Barrier(); err != nil {
		t.Fatal(err)
	}
	var st mpi.Status
	for {
		var done bool
		if done, st, err = r.Test(); err != nil {
			t.Fatal(err)
		}
		if done {
			break
		}
	}
	want := mpi.Status{Source: peer, Tag: tag, Count: len(msg)}
	if st != want || !bytes.Equal(buf[:st.Count], msg) {
		t.Errorf("status %+v data %q, want %+v %q", st, buf[:st.Count], want, msg)
	}
	if st2, err := r.Wait(); st2 != st || err != nil {
		t.Errorf("Wait after completion: %+v, %v", st2, err)
	}
}

// TestOtherThreads makes MPI calls from goroutines on fresh OS threads
// (each locks its thread and exits without unlocking, which destroys the
// thread), none of them the thread that called MPI_Init_thread: what
// MPI_THREAD_SERIALIZED allows and FUNNELED would not.
func TestOtherThreads(t *testing.T) {
	needMPI(t)
	c := world()
	if syscall.Gettid() == state.initTID {
		t.Errorf("the test goroutine runs on the MPI init thread %d; expected another", state.initTID)
	}
	peer, hasPeer := partner(c)
	seen := map[int]bool{}
	for round := range 3 {
		type result struct {
			tid int
			err error
		}
		ch := make(chan result)
		go func() {
			runtime.LockOSThread() // never unlocked: the thread dies with the goroutine
			res := result{tid: syscall.Gettid()}
			defer func() { ch <- res }()
			if hasPeer {
				out := []byte{byte(c.Rank()), byte(round)}
				in := make([]byte, 2)
				if _, err := c.Sendrecv(out, peer, 40+round, in, peer, 40+round); err != nil {
					res.err = err
					return
				}
				if in[0] != byte(peer) || in[1] != byte(round) {
					res.err = fmt.Errorf("round %d: got %v from %d", round, in, peer)
					return
				}
			}
			v := []int64{1}
			if err := c.AllreduceInt64s(v, v, mpi.OpSum); err != nil || v[0] != int64(c.Size()) {
				res.err = fmt.Errorf("round %d: Allreduce = %v, %v", round, v, err)
			}
		}()
		res := <-ch
		if res.err != nil {
			t.Error(res.err)
		}
		if res.tid == state.initTID || seen[res.tid] {
			t.Errorf("round %d ran on thread %d (init thread %d, seen %v)", round, res.tid, state.initTID, seen)
		}
		seen[res.tid] = true
	}
}

// TestConcurrencyGuard: while one call is in progress, another is refused
// with an error rather than entering the library.
func TestConcurrencyGuard(t *testing.T) {
	needMPI(t)
	c := world()
	if err := enter("test"); err != nil {
		t.Fatal(err)
	}
	err := c.Barrier()
	_, _, err2 := c.Iprobe(mpi.AnySource, mpi.AnyTag)
	leave()
	wantClass(t, err, "MPI_Barrier", mpi.ErrOther)
	wantClass(t, err2, "MPI_Iprobe", mpi.ErrOther)
	if err != nil && !strings.Contains(err.Error(), "SERIALIZED") {
		t.Errorf("guard error does not explain itself: %v", err)
	}
	if err := c.Barrier(); err != nil {
		t.Fatal(err)
	}
}

func TestSplitDup(t *testing.T) {
	needMPI(t)
	c := world()
	me, n := c.Rank(), c.Size()
	color := me % 2
	if me == 0 && n > 2 {
		color = mpi.Undefined
	}
	sub, err := c.Split(color, -me) // reversed order within each color
	if err != nil {
		t.Fatal(err)
	}
	if color == mpi.Undefined {
		if sub != nil {
			t.Errorf("Split with Undefined returned %v, want nil", sub)
		}
	} else {
		members := 0
		for r := range n {
			if r%2 == color && (r != 0 || n <= 2) {
				members++
			}
		}
		higher := 0
		for r := me + 1; r < n; r++ {
			if r%2 == color {
				higher++
			}
		}
		if sub.Size() != members || sub.Rank() != higher {
			t.Errorf("rank %d color %d: sub rank/size %d/%d, want %d/%d", me, color, sub.Rank(), sub.Size(), higher, members)
		}
		v := []int64{int64(me)}
		if err := sub.AllreduceInt64s(v, v, mpi.OpMin); err != nil || v[0]%2 != int64(color) {
			t.Errorf("Allreduce on the split comm: %v, %v", v, err)
		}
		if err := sub.Free(); err != nil {
			t.Error(err)
		}
	}
	d, err := c.Dup()
	if err != nil {
		t.Fatal(err)
	}
	if d.Rank() != me || d.Size() != n || d.Backend() != "native" {
		t.Errorf("Dup: %d/%d", d.Rank(), d.Size())
	}
	// A wrong rank on the duplicate returns an error too (its error
	// handler is MPI_ERRORS_RETURN).
	wantClass(t, d.Send(nil, n, 0), "MPI_Send", mpi.ErrRank)
	if err := d.Free(); err != nil {
		t.Error(err)
	}
}

func TestKernels(t *testing.T) {
	needMPI(t)
	c := world()
	wantClass(t, func() error { _, err := c.PingPong(nil, nil, c.Rank(), 0, 1, true); return err }(), "PingPong", mpi.ErrRank)
	wantClass(t, func() error { _, err := c.PingPong(nil, nil, c.Size(), 0, 1, true); return err }(), "PingPong", mpi.ErrRank)
	wantClass(t, func() error { _, err := c.PingPong(nil, nil, (c.Rank()+1)%c.Size(), 0, -1, true); return err }(), "PingPong", mpi.ErrArg)
	wantClass(t, func() error { _, err := c.Bandwidth(nil, (c.Rank()+1)%c.Size(), 0, 0, 1, true); return err }(), "Bandwidth", mpi.ErrArg)
	peer, ok := partner(c)
	if !ok {
		return
	}
	first := c.Rank()%2 == 0
	for _, size := range []int{0, 8, 65536, 1 << 20} {
		buf := bytes.Repeat([]byte{0}, size)
		if first {
			buf = bytes.Repeat([]byte{0xA5}, size)
		}
		if !first {
			buf = bytes.Repeat([]byte{0x3C}, size)
		}
		sent := bytes.Clone(buf)
		got := make([]byte, size)
		sec, err := c.PingPong(buf, got, peer, 50, 5, first)
		if err != nil || sec <= 0 {
			t.Errorf("PingPong %d B: %g s, %v", size, sec, err)
		}
		if !bytes.Equal(buf, sent) {
			t.Errorf("PingPong %d B: the send buffer was modified", size)
		}
		want := bytes.Repeat([]byte{0x3C}, size) // what the peer sent
		if !first {
			want = bytes.Repeat([]byte{0xA5}, size)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("PingPong %d B: received data differs from the peer's buffer", size)
		}
		buf = bytes.Repeat([]byte{1}, size)
		if first {
			buf = bytes.Repeat([]byte{0x5A}, size)
		}
		sec, err = c.Bandwidth(buf, peer, 51, 8, 3, first)
		if err != nil || sec <= 0 {
			t.Errorf("Bandwidth %d B: %g s, %v", size, sec, err)
		}
		if !bytes.Equal(buf, bytes.Repeat([]byte{0x5A}, size)) {
			t.Errorf("Bandwidth %d B: the receiver's buffer did not receive the sender's data", size)
		}
	}
}

// TestGoPanicsSurvive: MPI libraries install signal handlers at init (Open
// MPI's opal_signal covers SIGSEGV); Go's own handling of a nil
// dereference must still turn it into a recoverable panic.
func TestGoPanicsSurvive(t *testing.T) {
	needMPI(t)
	var p *struct{ x int }
	err := func() (err error) {
		defer func() {
			if r := recover(); r != nil {
				err = fmt.Errorf("%v", r)
			}
		}()
		_ = p.x
		return nil
	}()
	if err == nil || !strings.Contains(err.Error(), "nil pointer") {
		t.Errorf("nil dereference after MPI_Init: recovered %v, want a nil pointer panic", err)
	}
}

// TestBlocked: while a rank waits in a receive, another goroutine reads
// from Blocked which call and which peer it waits for (what the CLI's
// watchdog prints for a hung peer); outside MPI it reports nothing.
func TestBlocked(t *testing.T) {
	needMPI(t)
	c := world()
	if c.Size() < 2 {
		t.Skip("needs 2 ranks")
	}
	me := c.Rank()
	type seen struct {
		op     string
		peer   int
		inside bool
	}
	got := make(chan seen, 1)
	if me == 0 {
		go func() {
			for {
				if op, peer, in := Blocked(); in && op == "MPI_Recv" {
					got <- seen{op, peer, in}
					return
				}
				time.Sleep(time.Millisecond)
			}
		}()
		buf := make([]byte, 1)
		if _, err := c.Recv(buf, 1, 7); err != nil {
			t.Fatal(err)
		}
		s := <-got
		if s.peer != 1 {
			t.Errorf("Blocked() = %+v, want MPI_Recv waiting for rank 1", s)
		}
		if _, _, in := Blocked(); in {
			t.Errorf("Blocked() reports a call after Recv returned")
		}
	} else if me == 1 {
		// Rank 0 must be seen inside the receive before this send ends it.
		time.Sleep(200 * time.Millisecond)
		if err := c.Send([]byte{1}, 0, 7); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.Barrier(); err != nil {
		t.Fatal(err)
	}
}

// TestCompareAndSwapFault: 8-byte compare-and-swap is refused before the
// call on an Open MPI before 5 window served by osc/rdma (the call would
// crash the process), in the Go call and in the C loop alike; 4-byte
// elements and the other components run it.
func TestCompareAndSwapFault(t *testing.T) {
	needMPI(t)
	c := world()
	w, err := c.AllocateWindow(16)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := w.Free(); err != nil {
			t.Error(err)
		}
	}()
	nw := w.(*window)
	var major int
	_, verr := fmt.Sscanf(firstLine(LibraryVersion()), "Open MPI v%d", &major)
	crashes := verr == nil && major < 5 && nw.component == "rdma"
	t.Logf("library %q, component %q: crashes %v", firstLine(LibraryVersion()), nw.component, crashes)
	if err := mpi.RMAFault(w, mpi.RMACompareAndSwap, mpi.Int64); (err != nil) != crashes {
		t.Errorf("8-byte cas fault = %v, want one: %v", err, crashes)
	}
	for _, dt := range []mpi.Datatype{mpi.Int32, mpi.Int8} {
		if err := mpi.RMAFault(w, mpi.RMACompareAndSwap, dt); err != nil {
			t.Errorf("%v cas: %v", dt, err)
		}
	}
	if err := mpi.RMAFault(w, mpi.RMAFetchAndOp, mpi.Int64); err != nil {
		t.Errorf("8-byte fop: %v", err)
	}
	if !crashes || c.Size() < 2 {
		return
	}
	b := make([]byte, 8)
	if err := w.CompareAndSwap(b, b, make([]byte, 8), (c.Rank()+1)%c.Size(), 0, mpi.Int64); err == nil || !strings.Contains(err.Error(), "osc/rdma") {
		t.Errorf("MPI_Compare_and_swap on long: %v, want the refusal", err)
	}
	if _, err := c.NewRMA(mpi.RMASpec{Op: mpi.RMACompareAndSwap, Mode: mpi.RMALatency, Sync: mpi.SyncFlush, Type: mpi.Int64, Count: 1, Peer: (c.Rank() + 1) % c.Size()}); err == nil || !strings.Contains(err.Error(), "osc/rdma") {
		t.Errorf("NewRMA cas on long: %v, want the refusal", err)
	}
}
