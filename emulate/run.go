package emulate

import (
	"errors"
	"fmt"
	"time"

	"github.com/commcost/commcost/mpi"
)

// Role is what a world rank does in the emulation.
type Role struct {
	App  int // application rank index, or -1
	Node int // service node, or -1
}

// RoleOf maps a world rank to its role: world ranks 0..Apps()-1 are the
// application ranks (rank i is application i), world rank Apps()+u runs
// service node u. Keeping the application ranks first means rank 0, which
// writes the results, is an application rank.
func (t *Topology) RoleOf(rank int) Role {
	if rank < t.apps {
		return Role{App: rank, Node: -1}
	}
	return Role{App: -1, Node: rank - t.apps}
}

// Run partitions world into application and service ranks and runs the
// emulation: fn runs on every application rank with a Store, the service
// loop on every service rank. Collective over world, whose size must be
// cfg.Topology.Ranks(). The store is closed after fn returns (fn may close
// it itself). If fn fails on any application rank, that rank tells every
// rank to stop, so the others return ErrAborted instead of waiting forever;
// but an error fn returns after closing the store itself is one every
// application rank reached (Close is collective and the service ranks have
// shut down), so nothing is aborted and the service ranks return nil.
//
// The network traffic uses a duplicate of world, so it never matches the
// caller's own messages; Store.AppComm is the Split of world to the
// application ranks.
func Run(world mpi.Comm, cfg Config, fn func(s *Store) error) (err error) {
	if world.Backend() == "local" {
		// Goroutine ranks measure nothing, and their polls already yield to
		// the Go scheduler: fall asleep soon rather than keep the cores
		// busy, but briefly, as tests wait on their progress.
		if cfg.Idle.YieldFor == 0 {
			cfg.Idle.YieldFor = time.Millisecond
		}
		if cfg.Idle.MaxSleep == 0 {
			cfg.Idle.MaxSleep = 50 * time.Microsecond
		}
	}
	cfg, err = cfg.withDefaults()
	if err != nil {
		return err
	}
	t := cfg.Topology
	if err := t.CheckRanks(world.Size()); err != nil {
		return err
	}
	net, err := world.Dup()
	if err != nil {
		return fmt.Errorf("emulate: dup world: %w", err)
	}
	role := t.RoleOf(world.Rank())
	color := 0
	if role.App < 0 {
		color = 1
	}
	sub, err := world.Split(color, world.Rank())
	if err != nil {
		_ = net.Free()
		return fmt.Errorf("emulate: split world: %w", err)
	}
	if role.App >= 0 {
		s := newStore(net, sub, cfg)
		err = fn(s)
		if err != nil && !s.closed && !errors.Is(err, ErrAborted) && !errors.Is(err, ErrStalled) {
			s.abort()
		} else if err == nil {
			err = s.Close()
		}
	} else {
		err = newNode(net, cfg, role.Node).serve()
	}
	if err == nil {
		err = errors.Join(sub.Free(), net.Free())
	}
	return err
}
