package emulate

import (
	"encoding/binary"
	"fmt"
	"io"

	"github.com/commcost/commcost/globalvar"
	"github.com/commcost/commcost/mpi"
)

// SelfTest checks the emulation end to end on the running network, on any
// backend (it is what `commcost emulate selftest` runs under mpirun):
//
//   - reads return what was written: every rank writes a pattern of its own
//     into a region of every module's variable, with Access; after a
//     barrier every rank reads every region back;
//   - the barrier holds: in rounds rank i writes the round number into
//     slot i, passes a barrier, and must read the round number in every
//     slot;
//   - no hang under a hot spot: every rank reads a variable of one module
//     (h = 1) in a = 16 successive k-accesses of k = 4 packets, without
//     synchronisation, and checks the data;
//   - locks exclude: every rank increments a shared counter under its lock;
//   - splitting: a large variable written and read with versions 1 and 2;
//   - no message lost: the modules served exactly the reads and writes the
//     application ranks issued (service-node counters against the ranks'
//     own counts).
//
// Collective over the application ranks; progress lines go to w on rank 0
// (w may be nil). It returns the first failure.
func SelfTest(s *Store, w io.Writer) error {
	say := func(format string, args ...any) {
		if w != nil && s.me == 0 {
			fmt.Fprintf(w, format+"\n", args...)
		}
	}
	p := s.Apps()
	if err := s.Barrier(); err != nil {
		return err
	}
	if s.me == 0 {
		if _, err := s.Stats(true); err != nil {
			return err
		}
	}
	s.issuedReads, s.issuedWrites = 0, 0

	// Reads return what was written.
	const region = 37 // odd, so packets straddle nothing aligned by accident
	vars := make([]globalvar.Var, p)
	for m := range p {
		v, err := s.Create(fmt.Sprintf("selftest.data.%d", m), region*p)
		if err != nil {
			return err
		}
		vars[m] = v
	}
	pattern := func(writer, m, i int) byte { return byte(writer*31 + m*7 + i + 1) }
	ops := make([]Op, p)
	for m := range p {
		b := make([]byte, region)
		for i := range b {
			b[i] = pattern(s.me, m, i)
		}
		ops[m] = Op{Write: true, Var: vars[m], Off: s.me * region, Buf: b}
	}
	if err := s.Access(ops); err != nil {
		return fmt.Errorf("selftest: write: %w", err)
	}
	if err := s.Barrier(); err != nil {
		return err
	}
	for m := range p {
		for writer := range p {
			b := make([]byte, region)
			if err := s.Read(vars[m], writer*region, b); err != nil {
				return fmt.Errorf("selftest: read: %w", err)
			}
			for i, x := range b {
				if x != pattern(writer, m, i) {
					return fmt.Errorf("selftest: application %d read byte %d of rank %d's region of module %d: got %d, want %d",
						s.me, i, writer, m, x, pattern(writer, m, i))
				}
			}
		}
	}
	say("reads return what was written: ok (%d ranks x %d modules)", p, p)

	// The barrier holds.
	const rounds = 20
	slots, err := s.Create("selftest.barrier", 8*p)
	if err != nil {
		return err
	}
	for round := uint64(1); round <= rounds; round++ {
		var b [8]byte
		binary.LittleEndian.PutUint64(b[:], round)
		if err := s.Write(slots, 8*s.me, b[:]); err != nil {
			return err
		}
		if err := s.Barrier(); err != nil {
			return err
		}
		all := make([]byte, 8*p)
		if err := s.Read(slots, 0, all); err != nil {
			return err
		}
		for i := range p {
			if got := binary.LittleEndian.Uint64(all[8*i:]); got != round {
				return fmt.Errorf("selftest: barrier %d: application %d sees round %d in rank %d's slot", round, s.me, got, i)
			}
		}
		// A second barrier keeps a fast rank from overwriting its slot
		// before a slow one has read this round.
		if err := s.Barrier(); err != nil {
			return err
		}
	}
	say("barrier holds: ok (%d rounds)", rounds)

	// Hot spot: h = 1, a = 16, k = 4, every packet to module 0's variable.
	const hotK, hotA, hotL = 4, 16, 256
	hot, err := s.CreateAt("selftest.hot", hotK*hotL, 0)
	if err != nil {
		return err
	}
	if s.me == 0 {
		b := make([]byte, hotK*hotL)
		for i := range b {
			b[i] = byte(i * 13)
		}
		if err := s.Write(hot, 0, b); err != nil {
			return err
		}
	}
	if err := s.Barrier(); err != nil {
		return err
	}
	buf := make([]byte, hotK*hotL)
	for range hotA {
		clear(buf)
		hops := make([]Op, hotK)
		for j := range hotK {
			hops[j] = Op{Var: hot, Off: j * hotL, Buf: buf[j*hotL : (j+1)*hotL]}
		}
		if err := s.AccessSplit(hops, SplitOne); err != nil {
			return fmt.Errorf("selftest: hot spot: %w", err)
		}
		for i, x := range buf {
			if x != byte(i*13) {
				return fmt.Errorf("selftest: hot spot: application %d read byte %d = %d, want %d", s.me, i, x, byte(i*13))
			}
		}
	}
	say("hot spot h=1 a=%d k=%d: ok, no hang", hotA, hotK)

	// Locks exclude.
	const incs = 5
	counter, err := s.Create("selftest.counter", 8)
	if err != nil {
		return err
	}
	for range incs {
		if err := s.Lock(counter); err != nil {
			return err
		}
		var b [8]byte
		if err := s.Read(counter, 0, b[:]); err != nil {
			return err
		}
		binary.LittleEndian.PutUint64(b[:], binary.LittleEndian.Uint64(b[:])+1)
		if err := s.Write(counter, 0, b[:]); err != nil {
			return err
		}
		if err := s.Unlock(counter); err != nil {
			return err
		}
	}
	if err := s.Barrier(); err != nil {
		return err
	}
	var cb [8]byte
	if err := s.Read(counter, 0, cb[:]); err != nil {
		return err
	}
	if got := binary.LittleEndian.Uint64(cb[:]); got != uint64(incs*p) {
		return fmt.Errorf("selftest: locked counter is %d after %d increments", got, incs*p)
	}
	say("locks exclude: ok (%d increments)", incs*p)

	// Splitting: a variable of 40000 bytes per rank, versions 1 and 2.
	const big = 40000
	bigVar, err := s.Create("selftest.big", big*p)
	if err != nil {
		return err
	}
	for _, version := range []SplitVersion{SplitOne, SplitFixed} {
		b := make([]byte, big)
		for i := range b {
			b[i] = byte(i*7 + s.me + int(version))
		}
		if err := s.AccessSplit([]Op{{Write: true, Var: bigVar, Off: s.me * big, Buf: b}}, version); err != nil {
			return err
		}
		got := make([]byte, big)
		if err := s.AccessSplit([]Op{{Var: bigVar, Off: s.me * big, Buf: got}}, version); err != nil {
			return err
		}
		for i := range got {
			if got[i] != b[i] {
				return fmt.Errorf("selftest: split version %d: byte %d differs", version, i)
			}
		}
	}
	k2, l2 := splitAccess(big, SplitFixed, s.cfg)
	say("packet splitting: ok (version 1: 1 x %d B, version 2: %d x %d B)", big, k2, l2)

	// No message lost.
	if err := s.Barrier(); err != nil {
		return err
	}
	mine := []int64{s.issuedReads, s.issuedWrites}
	total := make([]int64, 2)
	if err := s.app.AllreduceInt64s(mine, total, mpi.OpSum); err != nil {
		return err
	}
	var bad error
	if s.me == 0 {
		st, err := s.Stats(false)
		if err != nil {
			return err
		}
		c := Counters(st)
		if int64(c["reads"]) != total[0] || int64(c["writes"]) != total[1] {
			bad = fmt.Errorf("selftest: modules served %v reads and %v writes, application ranks issued %d and %d",
				c["reads"], c["writes"], total[0], total[1])
		} else {
			say("no message lost: ok (%d reads, %d writes served; %v packets over the links)", total[0], total[1], c["packets"])
		}
	}
	flag := []int64{0}
	if bad != nil {
		flag[0] = 1
	}
	if err := mpi.BcastInt64s(s.app, flag, 0); err != nil {
		return err
	}
	if flag[0] != 0 {
		if bad == nil {
			bad = fmt.Errorf("selftest: counters check failed on application rank 0")
		}
		return bad
	}
	return nil
}

// RunSelfTest runs the network of cfg on the ranks of world (Run) and
// SelfTest on its application ranks, writing to w on application rank 0 a
// header naming the network, the world's size and its backend, SelfTest's
// lines, and PASS when every check held. Collective over world; the world
// must fit the network (Topology.CheckRanks).
func RunSelfTest(world mpi.Comm, cfg Config, w io.Writer) error {
	return Run(world, cfg, func(s *Store) error {
		if s.Rank() == 0 {
			fmt.Fprintf(w, "selftest of %s on %d ranks (%s backend)\n", s.Topology().Name(), world.Size(), world.Backend())
		}
		if err := SelfTest(s, w); err != nil {
			return err
		}
		if s.Rank() == 0 {
			fmt.Fprintln(w, "PASS")
		}
		return nil
	})
}
