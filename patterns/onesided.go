package patterns

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"

	"github.com/commcost/commcost/mpi"
	"github.com/commcost/commcost/opts"
	"github.com/commcost/commcost/results"
)

// BenchOneSided is the bench name of one-sided records: params op (put,
// get, acc, get_acc, fop, cas), mode (lat, bw, bibw), sync, bytes,
// window, type and iters; unit s (lat) or B/s (bw, bibw).
const BenchOneSided = "onesided"

// OneSided configures one of OSU 6.1's one-sided benchmarks
// (osu_put_latency.c, osu_put_bw.c, osu_put_bibw.c, osu_get_latency.c,
// osu_get_bw.c, osu_acc_latency.c, osu_get_acc_latency.c,
// osu_fop_latency.c, osu_cas_latency.c) on an MPI_Win_allocate window
// between ranks 0 and 1, with its synchronisation (mpi.RMASync):
//
//	lat, passive (flush, lock, lock_all): rank 0 makes one call and
//	    synchronises per iteration (flush: one shared lock around the
//	    loop and MPI_Win_flush after each call); latency = time / iters
//	lat, fence or pscw: each rank in turn makes one call per iteration;
//	    latency = time / (2 iters)
//	bw: rank 0 makes Window calls to consecutive blocks per iteration,
//	    then synchronises; bandwidth = Bytes Window iters / time
//	bibw (put; fence or pscw): both ranks do so at once;
//	    bandwidth = 2 Bytes Window iters / time
//
// A repetition is Iters iterations timed on rank 0, as OSU times it (the
// lock of the flush loop is taken and released outside the timer, as
// OSU's is). OSU runs OSU's own loop once: its iterations after its skip
// ones, the figure osu_*_latency and osu_*_bw print.
type OneSided struct {
	Op       mpi.RMAOp
	Mode     mpi.RMAMode
	Sync     mpi.RMASync
	Bytes    int          // data per call; fop and cas move one element of Type
	Window   int          // calls per iteration (bw, bibw); 0 = OSUWindow
	Type     mpi.Datatype // acc, get_acc, fop, cas
	Iters    int          // iterations per repetition; 0 = OSU counts / 10
	Warmup   int          // untimed iterations; 0 = OSU's skip counts, negative none
	OSU      bool
	Validate bool
	Reps     Reps
}

// OSUHas reports whether OSU 6.1 has a benchmark of op in mode with sync:
// put in every mode, get in lat and bw, the others in lat; bibw only with
// fence or pscw.
func OSUHas(op mpi.RMAOp, mode mpi.RMAMode, sync mpi.RMASync) bool {
	switch {
	case mode == mpi.RMABibw:
		return op == mpi.RMAPut && sync.Active()
	case mode == mpi.RMABandwidth:
		return op == mpi.RMAPut || op == mpi.RMAGet
	}
	return true
}

// OSUSync is OSU's default synchronisation of a mode: flush, or pscw for
// bibw.
func OSUSync(mode mpi.RMAMode) mpi.RMASync {
	if mode == mpi.RMABibw {
		return mpi.SyncPSCW
	}
	return mpi.SyncFlush
}

// OSUType is OSU's element type of op: MPI_CHAR for the accumulates (char
// here: a signed byte), MPI_LONG_LONG for fetch-and-op and compare-and-swap.
func OSUType(op mpi.RMAOp) mpi.Datatype {
	if op.Atomic() {
		return mpi.Int64
	}
	return mpi.Int8
}

func (k OneSided) window() int {
	if k.Mode == mpi.RMALatency {
		return 1
	}
	if k.Window <= 0 {
		return OSUWindow
	}
	return k.Window
}

// bytes is one call's data.
func (k OneSided) bytes() int {
	if k.Op.Atomic() {
		return k.Type.Size()
	}
	return k.Bytes
}

func (k OneSided) counts() osuCounts {
	if k.Mode == mpi.RMALatency {
		return osuLatency
	}
	return osuBandwidth
}

// iterations are the timed and untimed iterations of a repetition.
func (k OneSided) iterations() (iters, warmup int) {
	if k.OSU {
		c := k.counts()
		return c.full(k.bytes()), c.skip(k.bytes())
	}
	return k.counts().resolve(k.bytes(), k.Iters, k.Warmup)
}

// spec is this rank's side of the loop.
func (k OneSided) spec(me int) mpi.RMASpec {
	count := k.Bytes
	if k.Op.Typed() {
		count = k.bytes() / k.Type.Size()
	}
	return mpi.RMASpec{Op: k.Op, Sync: k.Sync, Mode: k.Mode, Count: count, Type: k.Type,
		Window: k.window(), Peer: 1 - me, First: me == 0}
}

// Check reports an instance no run could measure on p ranks.
func (k OneSided) Check(p int) error {
	switch {
	case p != 2:
		return fmt.Errorf("onesided needs exactly 2 ranks, got %d", p)
	case !OSUHas(k.Op, k.Mode, k.Sync):
		return fmt.Errorf("onesided: no %v %v loop with %v synchronisation (OSU has put in lat, bw and bibw, get in lat and bw, the others in lat; bibw with fence or pscw)", k.Op, k.Mode, k.Sync)
	case k.Op.Typed() && k.bytes()%k.Type.Size() != 0:
		return fmt.Errorf("onesided %v of %v: %d bytes is not a whole number of %d-byte elements", k.Op, k.Type, k.bytes(), k.Type.Size())
	}
	return k.checkExact()
}

// exactLimit is the largest integer every element of dt holds exactly.
func exactLimit(dt mpi.Datatype) float64 {
	switch dt {
	case mpi.Int8:
		return 127
	case mpi.Int32:
		return 1<<31 - 1
	case mpi.Float32:
		return 1 << 24
	}
	return 1 << 53
}

// checkExact refuses validating accumulates whose sum over a repetition's
// iterations (up to 3 per call) leaves the element type: MPI leaves an
// overflow undefined (Open MPI's char sum saturates).
func (k OneSided) checkExact() error {
	if !k.Validate || !k.Op.Typed() || k.Op == mpi.RMACompareAndSwap {
		return nil
	}
	iters, _ := k.iterations()
	if lim := exactLimit(k.Type); float64(iters)*3 > lim {
		return fmt.Errorf("validating %v of %v needs at most %d iterations per repetition (the sum of 3 per call must stay within %v), got %d: lower --iters or use --type int",
			k.Op, k.Type, int(lim/3), k.Type, iters)
	}
	return nil
}

// rmaSide is one rank's loop: the backend's kernel, or the Go loop over an
// mpi.Window.
type rmaSide struct {
	k      OneSided
	spec   mpi.RMASpec
	bufs   mpi.RMABuffers
	runner mpi.RMARunner // the backend's kernel, or nil
	w      mpi.Window    // the Go loop's window
	c      mpi.Comm
}

func newRMASide(c mpi.Comm, k OneSided) (*rmaSide, error) {
	s := &rmaSide{k: k, spec: k.spec(c.Rank()), c: c}
	if rk, ok := c.(mpi.RMAKernels); ok {
		r, err := rk.NewRMA(s.spec)
		if err != nil {
			return nil, err
		}
		s.runner, s.bufs = r, r.Buffers()
		return s, nil
	}
	n := s.spec.Bytes() * s.spec.Calls()
	w, err := c.(mpi.WindowAllocator).AllocateWindow(n)
	if err != nil {
		return nil, err
	}
	s.w = w
	s.bufs = mpi.RMABuffers{Origin: make([]byte, n), Result: make([]byte, n), Compare: make([]byte, n), Mem: w.Mem()}
	return s, nil
}

func (s *rmaSide) close() error {
	if s.runner != nil {
		return s.runner.Close()
	}
	return s.w.Free()
}

// batch is the repetitions' batch.
func (s *rmaSide) batch(iters int) BatchRep {
	if s.runner != nil {
		return func(b mpi.Batch) error { return s.runner.Batch(b, iters) }
	}
	return SerialBatch(s.c, func() (float64, error) { return s.goLoop(iters) })
}

// call makes call j of an iteration to the peer.
func (s *rmaSide) call(j int) error {
	b, sp, w, peer := s.spec.Bytes(), s.spec, s.w, s.spec.Peer
	blk := func(buf []byte) []byte { return buf[j*b : (j+1)*b] }
	switch sp.Op {
	case mpi.RMAPut:
		return w.Put(blk(s.bufs.Origin), peer, j*b)
	case mpi.RMAGet:
		return w.Get(blk(s.bufs.Result), peer, j*b)
	case mpi.RMAAccumulate:
		return w.Accumulate(blk(s.bufs.Origin), peer, j*b, sp.Type, mpi.OpSum)
	case mpi.RMAGetAccumulate:
		return w.GetAccumulate(blk(s.bufs.Origin), blk(s.bufs.Result), peer, j*b, sp.Type, mpi.OpSum)
	case mpi.RMAFetchAndOp:
		return w.FetchAndOp(blk(s.bufs.Origin), blk(s.bufs.Result), peer, j*b, sp.Type, mpi.OpSum)
	}
	return w.CompareAndSwap(blk(s.bufs.Origin), blk(s.bufs.Compare), blk(s.bufs.Result), peer, j*b, sp.Type)
}

func (s *rmaSide) calls() error {
	for j := range s.spec.Calls() {
		if err := s.call(j); err != nil {
			return err
		}
	}
	return nil
}

// goLoop is OSU's loop over the Go window (the C kernel's, rma.c, for
// backends without it).
func (s *rmaSide) goLoop(iters int) (float64, error) {
	sp, w, peer, c := s.spec, s.w, s.spec.Peer, s.c
	g := []int{peer}
	if !sp.Sync.Active() {
		if !sp.First {
			return 0, nil
		}
		if sp.Sync == mpi.SyncFlush {
			if err := w.Lock(peer, false); err != nil {
				return 0, err
			}
		}
	}
	try := func(errs ...func() error) error {
		for _, f := range errs {
			if err := f(); err != nil {
				return err
			}
		}
		return nil
	}
	lock := func() error { return w.Lock(peer, false) }
	unlock := func() error { return w.Unlock(peer) }
	flush := func() error { return w.Flush(peer) }
	start := func() error { return w.Start(g) }
	post := func() error { return w.Post(g) }
	none := func() error { return nil }
	first := func(f func() error) func() error {
		if sp.First {
			return f
		}
		return none
	}
	second := func(f func() error) func() error {
		if !sp.First {
			return f
		}
		return none
	}
	t0 := c.Wtime()
	for range iters {
		var err error
		switch {
		case sp.Sync == mpi.SyncFlush:
			err = try(s.calls, flush)
		case sp.Sync == mpi.SyncLock:
			err = try(lock, s.calls, unlock)
		case sp.Sync == mpi.SyncLockAll:
			err = try(w.LockAll, s.calls, w.UnlockAll)
		case sp.Mode == mpi.RMABibw && sp.Sync == mpi.SyncFence:
			err = try(w.Fence, s.calls, w.Fence)
		case sp.Mode == mpi.RMABibw:
			err = try(post, start, s.calls, w.Complete, w.Wait)
		case sp.Mode == mpi.RMABandwidth && sp.Sync == mpi.SyncFence:
			err = try(w.Fence, first(s.calls), w.Fence)
		case sp.Mode == mpi.RMABandwidth && sp.First:
			err = try(start, s.calls, w.Complete)
		case sp.Mode == mpi.RMABandwidth:
			err = try(post, w.Wait)
		case sp.Sync == mpi.SyncFence:
			err = try(w.Fence, first(s.calls), w.Fence, second(s.calls), w.Fence)
		case sp.First:
			err = try(start, s.calls, w.Complete, post, w.Wait)
		default:
			err = try(post, w.Wait, start, s.calls, w.Complete)
		}
		if err != nil {
			return 0, err
		}
	}
	t := c.Wtime() - t0
	if !sp.Sync.Active() && sp.Sync == mpi.SyncFlush {
		if err := w.Unlock(peer); err != nil {
			return 0, err
		}
	}
	return t, nil
}

// Validation data: the origin's blocks carry a pattern, small integers
// for the typed calls so that iters accumulations are exact; cas swaps 0
// for casValue.
const casValue = 7

// receives reports whether calls write this rank's window: the target's
// in every loop, the origin's too where both ranks call (lat with fence
// or pscw, bibw); gets read it.
func (s *rmaSide) receives() bool {
	sp := s.spec
	return sp.Op != mpi.RMAGet && (!sp.First || sp.Sync.Active() && sp.Mode != mpi.RMABandwidth)
}

// gets reports whether this rank's gets bring data back.
func (s *rmaSide) gets() bool {
	sp := s.spec
	return sp.Op == mpi.RMAGet && (sp.First || sp.Sync.Active() && sp.Mode == mpi.RMALatency)
}

// prepare fills the buffers before a validated repetition: the origin's
// data, the window that gets read (get), and the window that receives
// cleared.
func (s *rmaSide) prepare() {
	sp, b := s.spec, s.bufs
	me := 1 - sp.Peer
	clear(b.Result)
	clear(b.Compare)
	clear(b.Mem)
	switch {
	case sp.Op == mpi.RMAGet:
		fillBlock(b.Mem, me, sp.Peer)
	case sp.Op == mpi.RMACompareAndSwap:
		for j := range sp.Calls() {
			mpi.PutElement(b.Origin[j*sp.Bytes():], sp.Type, 0, casValue)
		}
	case sp.Op.Typed():
		for i := range len(b.Origin) / sp.Type.Size() {
			mpi.PutElement(b.Origin, sp.Type, i, float64(i%3+1))
		}
	default:
		fillBlock(b.Origin, me, sp.Peer)
	}
}

// check compares what a validated repetition of iters iterations left
// with what it must have.
func (s *rmaSide) check(iters int) error {
	sp, b := s.spec, s.bufs
	me := 1 - sp.Peer
	what := fmt.Sprintf("onesided %v %v %v", sp.Op, sp.Mode, sp.Sync)
	if s.gets() {
		want := make([]byte, len(b.Result))
		fillBlock(want, sp.Peer, me)
		if !bytes.Equal(b.Result, want) {
			return fmt.Errorf("%s: %w: the data got differs from the target's window", what, ErrValidation)
		}
	}
	if !s.receives() {
		return nil
	}
	switch {
	case sp.Op == mpi.RMAPut:
		return checkBlock(b.Mem, sp.Peer, me, what)
	case sp.Op == mpi.RMACompareAndSwap:
		for j := range sp.Calls() {
			if v := mpi.Element(b.Mem[j*sp.Bytes():], sp.Type, 0); v != casValue {
				return fmt.Errorf("%s: %w: element %d is %v after the swaps, want %d", what, ErrValidation, j, v, casValue)
			}
		}
	default: // every iteration adds the origin's values once
		for i := range len(b.Mem) / sp.Type.Size() {
			want := float64(iters * (i%3 + 1))
			if sp.Type == mpi.Int8 {
				want = float64(int8(iters * (i%3 + 1)))
			}
			if v := mpi.Element(b.Mem, sp.Type, i); v != want {
				return fmt.Errorf("%s: %w: element %d is %v after %d iterations, want %v", what, ErrValidation, i, v, iters, want)
			}
		}
	}
	return nil
}

// Run measures the loop (collective over exactly two ranks).
func (k OneSided) Run(c mpi.Comm) (m Measurement, err error) {
	if err := k.Check(c.Size()); err != nil {
		return Measurement{}, err
	}
	if err := mpi.Supports(c, mpi.FeatureWindows); err != nil {
		return Measurement{}, err
	}
	s, err := newRMASide(c, k)
	if err != nil {
		return Measurement{}, err
	}
	defer func() {
		if cerr := s.close(); err == nil {
			err = cerr
		}
	}()
	iters, warmup := k.iterations()
	if warmup > 0 {
		if err := collectiveFailure(c, s.batch(warmup)(mpi.Batch{Own: make([]float64, 1)})); err != nil {
			return Measurement{}, err
		}
	}
	batch := s.batch(iters)
	if k.Validate {
		batch = checked(batch, s.prepare, func() error { return s.check(iters) })
	}
	reps := k.Reps
	if k.OSU {
		reps = osuReps
	}
	reps.Reduction = ReduceRank0
	m, err = MeasureBatch(c, reps, k.Validate, batch)
	if err != nil {
		return Measurement{}, err
	}
	if k.Mode == mpi.RMALatency {
		per := float64(iters)
		if k.Sync.Active() {
			per *= 2
		}
		m = m.Scaled(1 / per)
	}
	return m, nil
}

// Volume is the bytes one repetition of a bandwidth loop moves.
func (k OneSided) Volume() float64 {
	iters, _ := k.iterations()
	v := float64(k.bytes()) * float64(k.window()) * float64(iters)
	if k.Mode == mpi.RMABibw {
		v *= 2
	}
	return v
}

func (k OneSided) typeParam() string {
	if k.Op.Typed() {
		return k.Type.String()
	}
	return collTypeByte
}

// Params are the record parameters.
func (k OneSided) Params(int) results.Params {
	iters, _ := k.iterations()
	return results.Params{"op": k.Op.String(), "mode": k.Mode.String(), "sync": k.Sync.String(), "bytes": k.bytes(),
		"window": k.window(), "type": k.typeParam(), "iters": iters}
}

// Bench is the bench name of the records.
func (OneSided) Bench() string { return BenchOneSided }

// Record is the latency record (s per call) or the bandwidth record (B/s);
// both carry derived rep_time_s, the median repetition time, so a run's
// records share one set of columns.
func (k OneSided) Record(m Measurement, meta results.Meta) results.Record {
	if k.Mode == mpi.RMALatency {
		rec := m.Record(BenchOneSided, k.Params(m.CommSize), m.CommSize, meta)
		iters, _ := k.iterations()
		per := float64(iters)
		if k.Sync.Active() {
			per *= 2
		}
		rec.Derived = map[string]float64{"rep_time_s": m.Summary.Median * per}
		return rec
	}
	return bandwidthRecord(m, BenchOneSided, k.Params(m.CommSize), k.Volume(), meta)
}

// Demand of a one-sided loop: the window and three buffers of Window
// blocks, the calls of iters iterations per repetition.
func (k OneSided) Demand(int) Demand {
	iters, warmup := k.iterations()
	n := int64(k.bytes()) * int64(k.window())
	calls := float64(k.window())
	if k.Mode == mpi.RMABibw {
		calls *= 2
	}
	return Demand{
		BufferBytes: 4 * n, MemParam: "bytes", InFlightBytes: n,
		RepMessages: float64(iters) * calls, RepBytes: float64(iters) * calls * float64(k.bytes()), RepParam: "--iters or --window",
		WarmupMessages: float64(warmup) * calls, WarmupBytes: float64(warmup) * calls * float64(k.bytes()), WarmupParam: "--warmup or --window",
	}
}

// rmaOpNames and the others are the parameters' values.
func rmaOpNames() []string {
	var out []string
	for _, o := range mpi.RMAOps() {
		out = append(out, o.String())
	}
	return out
}

var (
	rmaModeNames = []string{mpi.RMALatency.String(), mpi.RMABandwidth.String(), mpi.RMABibw.String()}
	rmaSyncNames = []string{mpi.SyncFlush.String(), mpi.SyncLock.String(), mpi.SyncLockAll.String(), mpi.SyncFence.String(), mpi.SyncPSCW.String()}
)

// OneSidedSweep is the sweep of 'commcost onesided': OSU 6.1's one-sided
// benchmarks, op x mode x size, with OSU's synchronisation or another.
type OneSidedSweep struct {
	RepFlags
	Loop
	Ops    []mpi.RMAOp   `flag:"ops" default:"put,get,acc,get_acc,fop,cas" usage:"calls: a list of put, get, acc (MPI_Accumulate), get_acc (MPI_Get_accumulate), fop (MPI_Fetch_and_op), cas (MPI_Compare_and_swap)"`
	Modes  []mpi.RMAMode `flag:"modes" default:"lat,bw,bibw" usage:"loops: lat (latency), bw (bandwidth, a window of calls from rank 0), bibw (both ranks); each call runs in the loops OSU has of it (put: all, get: lat and bw, the others: lat)"`
	Sync   mpi.RMASync   `flag:"sync" usage:"synchronisation: flush (a shared lock around the loop, MPI_Win_flush per iteration), lock (lock and unlock per iteration), lock_all, fence or pscw (default: OSU's, flush; pscw for bibw, which runs with fence or pscw only)"`
	Sizes  opts.Sizes    `flag:"sizes" default:"1:4M" param:"bytes" usage:"bytes per call (fop and cas move one element: one point): LO:HI doubling or a list; K = 1024"`
	Window int           `flag:"window" default:"64" usage:"calls per iteration of bw and bibw"`
	Type   mpi.Datatype  `flag:"type" usage:"element type of acc, get_acc, fop and cas: char, int, long, float, double (default: OSU's, char for the accumulates, long for fop and cas; 8-byte cas crashes Open MPI 4's osc/rdma, as osu_cas_latency does, so there it is refused, or left out of the default --ops: use --type int, or mpirun --mca osc pt2pt)"`
	OSU    bool          `flag:"osu" usage:"OSU 6.1's methodology, for a figure to put next to OSU's: one pass of its loop (lat: 10000 iterations after 100 up to 8K, 1000 after 10 above; bw: 100 after 10, 20 after 2) per point instead of repetitions and their median"`
	Set    opts.Given
	// left are the calls CheckWorld leaves out of the default --ops: the
	// MPI library crashes in them on this world. Atomic: goroutine ranks
	// share the sweep, and each stores the same list.
	left atomic.Pointer[[]mpi.RMAOp]
}

func init() {
	Register(Def{Name: "onesided", Summary: "OSU-style one-sided: put, get, accumulate, fetch-and-op, compare-and-swap latency and bandwidth (2 ranks)",
		New: func() Sweep { return new(OneSidedSweep) }})
}

// oneSidedReads are the flags of 'commcost onesided' that only some calls
// read, and oneSidedModeReads those only some loops read: given with none
// of them in --ops (--modes), they are refused.
var (
	oneSidedReads = OpReads[mpi.RMAOp]{
		"Type": mpi.RMAOp.Typed,
	}
	oneSidedModeReads = OpReads[mpi.RMAMode]{
		"Window": func(m mpi.RMAMode) bool { return m != mpi.RMALatency },
	}
)

// syncOf is the synchronisation of mode: --sync, or OSU's default.
func (s *OneSidedSweep) syncOf(mode mpi.RMAMode) mpi.RMASync {
	if s.Sync == 0 {
		return OSUSync(mode)
	}
	return s.Sync
}

// typeOf is the element type of op: --type, or OSU's.
func (s *OneSidedSweep) typeOf(op mpi.RMAOp) mpi.Datatype {
	if !s.Set.Has("Type") {
		return OSUType(op)
	}
	return s.Type
}

// Validate checks the sweep's settings.
func (s *OneSidedSweep) Validate() error {
	return Checks(s.RepFlags.Check, s.Loop.Check, func() error { return checkOSUAs(s.OSU, s.Set, "OSU 6.1") },
		func() error { return oneSidedReads.Check(s.Set, "Ops", "ops", s.Ops, mpi.RMAOps()) },
		func() error {
			return oneSidedModeReads.Check(s.Set, "Modes", "modes", s.Modes, []mpi.RMAMode{mpi.RMALatency, mpi.RMABandwidth, mpi.RMABibw})
		},
		func() error { return CheckValues("Sizes", BenchOneSided, "bytes", s.Sizes) },
		func() error {
			// A bandwidth loop of put or get at 0 bytes has no rate (the
			// atomic calls move one element whatever the sizes).
			rate := slices.ContainsFunc(s.Modes, func(m mpi.RMAMode) bool { return m != mpi.RMALatency })
			moves := slices.ContainsFunc(s.Ops, func(op mpi.RMAOp) bool { return !op.Atomic() })
			if rate && moves && slices.Contains([]int(s.Sizes), 0) {
				return opts.Item("Sizes", 0, "a bandwidth loop (--modes bw, bibw) moves at least 1 byte per call: 0 bytes is no rate; run --modes lat at 0")
			}
			return nil
		},
		func() error { return CheckValues("Window", BenchOneSided, "window", []int{s.Window}) })
}

// CheckWorld asks a window of the world's MPI library whether it crashes in
// any of the calls (mpi.RMAFault): a call named in --ops is refused, one
// of the default --ops is left out with a note.
func (s *OneSidedSweep) CheckWorld(c mpi.Comm) (string, error) {
	wa, ok := c.(mpi.WindowAllocator)
	if !ok || mpi.Supports(c, mpi.FeatureWindows) != nil {
		return "", nil // Run says what is missing
	}
	w, err := wa.AllocateWindow(8)
	if err != nil {
		return "", err
	}
	faults := make([]error, len(s.Ops))
	for i, op := range s.Ops {
		faults[i] = mpi.RMAFault(w, op, s.typeOf(op))
	}
	if err := w.Free(); err != nil {
		return "", err
	}
	var notes []string
	var left []mpi.RMAOp
	for i, op := range s.Ops {
		switch {
		case faults[i] == nil:
		case s.Set.Has("Ops"):
			return "", opts.Item("Ops", op, "%v (--type int)", faults[i])
		default:
			left = append(left, op)
			notes = append(notes, fmt.Sprintf("%v is left out of the default --ops: %v (--type int)", op, faults[i]))
		}
	}
	s.left.Store(&left)
	return strings.Join(notes, "; "), nil
}

// Plan lists the loops OSU has, op by op, mode by mode, size by size.
func (s *OneSidedSweep) Plan(p int) ([]Pattern, error) {
	if p != 2 {
		return nil, opts.Badf("onesided needs exactly 2 ranks, got %d", p)
	}
	var out []Pattern
	var left []mpi.RMAOp
	if l := s.left.Load(); l != nil {
		left = *l
	}
	for _, op := range s.Ops {
		if slices.Contains(left, op) {
			continue
		}
		dt := s.typeOf(op)
		for _, mode := range s.Modes {
			sync := s.syncOf(mode)
			if !OSUHas(op, mode, mpi.SyncPSCW) {
				continue // OSU has no such loop
			}
			if !OSUHas(op, mode, sync) {
				return nil, opts.Field("Sync", sync, "%v %v runs with fence or pscw only (as osu_put_bibw)", op, mode)
			}
			sizes := []int(s.Sizes)
			if op.Atomic() {
				sizes = []int{dt.Size()}
			}
			for _, m := range sizes {
				if op.Typed() && m%dt.Size() != 0 {
					return nil, opts.Item("Sizes", m, "%v moves whole %d-byte %v elements; use multiples of %d (or --type)", op, dt.Size(), dt, dt.Size())
				}
				k := OneSided{Op: op, Mode: mode, Sync: sync, Bytes: m, Window: s.Window, Type: dt,
					Iters: s.IterCount(), Warmup: s.WarmupIters(), OSU: s.OSU, Validate: s.Verify, Reps: s.Reps()}
				if err := k.checkExact(); err != nil {
					return nil, opts.Badf("{Verify}: %v", err)
				}
				out = append(out, k)
			}
		}
	}
	if len(out) == 0 {
		return nil, opts.Badf("{Ops} and {Modes} name no loop OSU has (put: lat, bw, bibw; get: lat, bw; acc, get_acc, fop, cas: lat)")
	}
	return out, nil
}
