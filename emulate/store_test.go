package emulate

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/commcost/commcost/globalvar"
	"github.com/commcost/commcost/mpi"
	"github.com/commcost/commcost/mpi/local"
)

// runLocal runs fn on the application ranks of an emulation of spec under
// mpi/local, failing the test instead of hanging: the world has a time
// limit and the emulation a stall timeout.
func runLocal(t *testing.T, spec string, cfg Config, fn func(s *Store) error) {
	t.Helper()
	if err := tryLocal(spec, cfg, fn); err != nil {
		t.Fatal(err)
	}
}

func tryLocal(spec string, cfg Config, fn func(s *Store) error) error {
	top, err := Parse(spec)
	if err != nil {
		return err
	}
	cfg.Topology = top
	if cfg.StallTimeout == 0 {
		cfg.StallTimeout = 20 * time.Second
	}
	return local.RunWith(local.Options{Timeout: 60 * time.Second}, top.Ranks(), func(c mpi.Comm) error {
		return Run(c, cfg, fn)
	})
}

// TestReadWrite: every rank writes its own region of every module's
// variable in one Access, then after a barrier reads random regions back.
func TestReadWrite(t *testing.T) {
	tests := []struct {
		spec      string
		placement Placement
	}{
		{"BF(2)", PlaceDirect},
		{"BF(2)", PlaceHash},
		{"SE(2)", PlaceDirect},
		{"SE(3)", PlaceHash},
		{"CCC(2)", PlaceDirect},
		{"HC(2)", PlaceDirect},
		{"mesh(2x3)", PlaceHash},
		{"torus(3x3)", PlaceDirect},
	}
	for _, tc := range tests {
		t.Run(tc.spec+"/"+tc.placement.String(), func(t *testing.T) {
			runLocal(t, tc.spec, Config{Placement: tc.placement, Seed: 11}, func(s *Store) error {
				p := s.Apps()
				const region = 10
				var ops []Op
				for m := range p {
					v, err := s.Create(fmt.Sprintf("v%d", m), region*p)
					if err != nil {
						return err
					}
					data := bytes.Repeat([]byte{byte(s.Rank()*16 + m)}, region)
					ops = append(ops, Op{Write: true, Var: v, Off: s.Rank() * region, Buf: data})
				}
				if err := s.Access(ops); err != nil {
					return err
				}
				if err := s.Barrier(); err != nil {
					return err
				}
				rng := rand.New(rand.NewPCG(1, uint64(s.Rank())))
				for range 30 {
					m, w := rng.IntN(p), rng.IntN(p)
					got := make([]byte, region)
					if err := s.Read(ops[m].Var, w*region, got); err != nil {
						return err
					}
					if want := bytes.Repeat([]byte{byte(w*16 + m)}, region); !bytes.Equal(got, want) {
						return fmt.Errorf("rank %d read var %d at %d: got %v want %v", s.Rank(), m, w*region, got, want)
					}
				}
				return nil
			})
		})
	}
}

// TestPlacement: hash placement spreads variables over the modules and is
// the same on every rank; direct placement is round robin.
func TestPlacement(t *testing.T) {
	runLocal(t, "SE(3)", Config{Placement: PlaceHash, Seed: 5}, func(s *Store) error {
		count := make([]int, s.Apps())
		mods := make([]int64, 64)
		for i := range mods {
			v, err := s.Create(fmt.Sprint(i), 8)
			if err != nil {
				return err
			}
			m, _ := s.Module(v)
			count[m]++
			mods[i] = int64(m)
		}
		for m, c := range count {
			if c == 0 || c > 20 {
				return fmt.Errorf("module %d holds %d of 64 hashed variables: %v", m, c, count)
			}
		}
		all := make([]int64, 64)
		if err := s.AppComm().AllreduceInt64s(mods, all, mpi.OpMax); err != nil {
			return err
		}
		for i := range all {
			if all[i] != mods[i] {
				return fmt.Errorf("variable %d placed differently on different ranks", i)
			}
		}
		return nil
	})
	runLocal(t, "SE(2)", Config{}, func(s *Store) error {
		for i := range 8 {
			v, err := s.Create(fmt.Sprint(i), 8)
			if err != nil {
				return err
			}
			if m, _ := s.Module(v); m != i%4 {
				return fmt.Errorf("direct placement: variable %d on module %d", i, m)
			}
		}
		return nil
	})
}

// TestErrors checks the error contract on the application side.
func TestErrors(t *testing.T) {
	runLocal(t, "SE(2)", Config{ModuleBytes: 1000}, func(s *Store) error {
		v, err := s.Create("a", 100)
		if err != nil {
			return err
		}
		if err := s.Read(v, 90, make([]byte, 11)); !errors.Is(err, globalvar.ErrRange) {
			return fmt.Errorf("read past the end: %v", err)
		}
		if err := s.Write(v, -1, []byte{1}); !errors.Is(err, globalvar.ErrRange) {
			return fmt.Errorf("write at -1: %v", err)
		}
		if err := s.Read(globalvar.Var{ID: 9, Name: "x", Size: 4}, 0, make([]byte, 1)); !errors.Is(err, globalvar.ErrUnknownVar) {
			return fmt.Errorf("unknown variable: %v", err)
		}
		if _, err := s.CreateAt("big", 901, 0); !errors.Is(err, ErrModuleFull) {
			return fmt.Errorf("variable larger than the module's memory left: %v", err)
		}
		if _, err := s.CreateAt("fits", 900, 0); err != nil {
			return fmt.Errorf("variable that fits: %v", err)
		}
		if s.Rank() == 0 {
			if err := s.Unlock(v); !errors.Is(err, globalvar.ErrNotLocked) {
				return fmt.Errorf("unlock of a lock not held: %v", err)
			}
			if err := s.Lock(v); err != nil {
				return err
			}
			if err := s.Lock(v); err == nil || !strings.Contains(err.Error(), "reentrant") {
				return fmt.Errorf("second Lock: %v", err)
			}
			if err := s.Unlock(v); err != nil {
				return err
			}
		}
		// Create is collective: different sizes on different ranks fail
		// on every rank.
		if _, err := s.Create("mismatch", 10+s.Rank()); err == nil || !strings.Contains(err.Error(), "collective") {
			return fmt.Errorf("mismatched Create: %v", err)
		}
		return nil
	})
}

// TestDeadlockFreedom drives random, heavy, hot-spotted traffic through
// networks with cycles and the smallest buffers the rule allows (one buffer
// per link and class, one local buffer, one send per link), with large
// packets, splitting and barriers mixed in. Bounded buffering with shortest
// paths deadlocks such networks without the buffer-class rule; here every
// run must finish, and every read must see the last write.
func TestDeadlockFreedom(t *testing.T) {
	for _, spec := range []string{"SE(3)", "CCC(2)", "torus(3x3)", "mesh(2x4)", "BF(2)", "HC(3)"} {
		t.Run(spec, func(t *testing.T) {
			cfg := Config{LinkSlots: 1, LocalSlots: 1, GuardedSends: 1, Window: 32, Split: SplitFixed, PacketBytes: 700}
			runLocal(t, spec, cfg, func(s *Store) error {
				p := s.Apps()
				vars := make([]globalvar.Var, p)
				for m := range p {
					v, err := s.Create(fmt.Sprint(m), 4096*p)
					if err != nil {
						return err
					}
					vars[m] = v
				}
				rng := rand.New(rand.NewPCG(42, uint64(s.Rank())))
				mine := func(round, m int) []byte {
					b := make([]byte, 4096)
					for i := range b {
						b[i] = byte(round*7 + m*3 + s.Rank() + i)
					}
					return b
				}
				for round := range 6 {
					var ops []Op
					for range 24 {
						m := rng.IntN(p)
						if rng.IntN(3) == 0 {
							m = 0 // a hot spot on module 0
						}
						n := 1 + rng.IntN(4096)
						if rng.IntN(2) == 0 {
							ops = append(ops, Op{Write: true, Var: vars[m], Off: s.Rank() * 4096, Buf: mine(round, m)[:n]})
						} else {
							ops = append(ops, Op{Var: vars[m], Off: rng.IntN(p) * 4096, Buf: make([]byte, n)})
						}
					}
					if err := s.Access(ops); err != nil {
						return err
					}
					if err := s.Barrier(); err != nil {
						return err
					}
					// Each rank's region of every module now holds this
					// round's bytes where written; write all of it and check.
					for m := range p {
						if err := s.Write(vars[m], s.Rank()*4096, mine(round, m)); err != nil {
							return err
						}
					}
					if err := s.Barrier(); err != nil {
						return err
					}
					got := make([]byte, 4096)
					m := rng.IntN(p)
					if err := s.Read(vars[m], s.Rank()*4096, got); err != nil {
						return err
					}
					if !bytes.Equal(got, mine(round, m)) {
						return fmt.Errorf("round %d: rank %d's region of module %d not what it wrote", round, s.Rank(), m)
					}
					if err := s.Barrier(); err != nil {
						return err
					}
				}
				return nil
			})
		})
	}
}

// TestAbort: an application error on one rank stops every rank instead of
// leaving them waiting for a barrier that never completes.
func TestAbort(t *testing.T) {
	boom := errors.New("boom")
	start := time.Now()
	err := tryLocal("SE(2)", Config{}, func(s *Store) error {
		if s.Rank() == 1 {
			return boom
		}
		return s.Barrier()
	})
	if !errors.Is(err, boom) {
		t.Fatalf("Run = %v, want the application's error", err)
	}
	if d := time.Since(start); d > 15*time.Second {
		t.Fatalf("abort took %v", d)
	}
}

// TestClosedThenFailed: an error every application rank returns after
// closing the store itself (a verdict they all reached) aborts nothing:
// every application rank returns it, and every service rank returns nil.
func TestClosedThenFailed(t *testing.T) {
	verdict := errors.New("verdict")
	top, err := Parse("SE(2)")
	if err != nil {
		t.Fatal(err)
	}
	errs := make([]error, top.Ranks())
	err = local.RunWith(local.Options{Timeout: 60 * time.Second}, top.Ranks(), func(c mpi.Comm) error {
		errs[c.Rank()] = Run(c, Config{Topology: top, StallTimeout: 20 * time.Second}, func(s *Store) error {
			if err := s.Close(); err != nil {
				return err
			}
			return verdict
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for r, e := range errs {
		role := top.RoleOf(r)
		if role.App >= 0 && e != verdict {
			t.Errorf("application rank %d: %v, want the verdict itself", r, e)
		}
		if role.App < 0 && e != nil {
			t.Errorf("service rank %d: %v, want nil (shut down in order, not aborted)", r, e)
		}
	}
}

// TestStallDetected: an application rank whose entry node never answers
// reports ErrStalled after the stall timeout instead of waiting forever.
func TestStallDetected(t *testing.T) {
	top, _ := ShuffleExchange(1) // 2 application + 2 service ranks
	cfg, err := Config{Topology: top, StallTimeout: 300 * time.Millisecond}.withDefaults()
	if err != nil {
		t.Fatal(err)
	}
	err = local.RunWith(local.Options{Timeout: 30 * time.Second}, top.Ranks(), func(c mpi.Comm) error {
		if c.Rank() != 0 {
			// A dead network: take the abort that rank 0 sends, then stop.
			_, err := c.Recv(make([]byte, headerBytes), 0, tagAbort)
			return err
		}
		s := newStore(c, c, cfg)
		s.vars = []varInfo{{v: globalvar.Var{ID: 0, Name: "x", Size: 8}, module: 1}}
		err := s.Read(s.vars[0].v, 0, make([]byte, 8))
		if !errors.Is(err, ErrStalled) {
			return fmt.Errorf("Read on a dead network = %v, want ErrStalled", err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestHeaderRoundTrip(t *testing.T) {
	h := header{kind: kReadData, class: 7, status: stRange, src: 3, dst: -1, v: 12, vsize: 1 << 30, off: 77, n: 1 << 20, id: 99, aux: 5, aux2: 6}
	b := make([]byte, headerBytes)
	h.encode(b)
	var g header
	g.decode(b)
	if g != h {
		t.Fatalf("decode(encode(%+v)) = %+v", h, g)
	}
	if packetAux2(b) != 6 {
		t.Fatal("packetAux2")
	}
	setPacketAux2(b, 9)
	setClass(b, 2)
	g.decode(b)
	if g.aux2 != 9 || g.class != 2 {
		t.Fatalf("in-place rewrite: %+v", g)
	}
}

func TestBufPool(t *testing.T) {
	var p bufPool
	b := p.get(100)
	if len(b) != 100 || cap(b) != 128 {
		t.Fatalf("get(100): len %d cap %d", len(b), cap(b))
	}
	p.put(b)
	if c := p.get(65); &c[:1][0] != &b[:1][0] {
		t.Fatal("buffer not reused")
	}
}

// TestDeadlockWithoutBufferClasses switches the buffer-class rule off (one
// buffer per link for all packets) and drives every rank's window full of
// large reads and writes around a network with cycles: the buffers fill in a
// cycle and the network deadlocks, as the paper's router could. The
// emulation must detect it and report it rather than hang.
func TestDeadlockWithoutBufferClasses(t *testing.T) {
	cfg := Config{LinkSlots: 1, LocalSlots: 1, Window: 64, StallTimeout: time.Second, noBufferClasses: true}
	start := time.Now()
	err := tryLocal("torus(3x3)", cfg, func(s *Store) error {
		p := s.Apps()
		vars := make([]globalvar.Var, p)
		for m := range p {
			v, err := s.Create(fmt.Sprint(m), 1<<16)
			if err != nil {
				return err
			}
			vars[m] = v
		}
		rng := rand.New(rand.NewPCG(3, uint64(s.Rank())))
		for range 50 {
			var ops []Op
			for range 64 {
				ops = append(ops, Op{Write: rng.IntN(2) == 0, Var: vars[rng.IntN(p)], Buf: make([]byte, 2048)})
			}
			if err := s.Access(ops); err != nil {
				return err
			}
		}
		return nil
	})
	if err == nil {
		t.Skip("this run did not deadlock without buffer classes (the traffic is random); nothing to detect")
	}
	if !strings.Contains(err.Error(), "stalled") && !errors.Is(err, ErrStalled) {
		t.Fatalf("Run = %v, want a reported stall", err)
	}
	if d := time.Since(start); d > 20*time.Second {
		t.Fatalf("detection took %v", d)
	}
	t.Logf("detected: %.300s", err)
}
