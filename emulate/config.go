package emulate

import (
	"errors"
	"fmt"
	"time"

	"github.com/commcost/commcost/opts"
	"github.com/commcost/commcost/patterns"
)

// Placement selects how variables are spread over the memory modules
// (paper 000, section 3.2: "distributed over the service network either via
// universal hashing or via direct placement").
type Placement int

const (
	// PlaceDirect puts the variable with ID i on module i mod p, in creation
	// order, unless CreateAt names the module.
	PlaceDirect Placement = iota
	// PlaceHash puts it on module h(i) of a universal hash family seeded by
	// Config.Seed (see hashModule).
	PlaceHash
)

func (p Placement) String() string {
	if p == PlaceHash {
		return "hash"
	}
	return "direct"
}

// ParsePlacement reads "direct" or "hash".
func ParsePlacement(s string) (Placement, error) {
	switch s {
	case "direct":
		return PlaceDirect, nil
	case "hash":
		return PlaceHash, nil
	}
	return 0, fmt.Errorf("placement %q: accepted values are direct and hash", s)
}

// UnmarshalText reads "direct" or "hash" (a --placement value).
func (p *Placement) UnmarshalText(b []byte) error {
	v, err := ParsePlacement(string(b))
	if err != nil {
		return errors.New("accepted values are direct and hash")
	}
	*p = v
	return nil
}

// SplitVersion selects how an access of D bytes is cut into packets
// (paper 000, section 7 and Fig. 14).
type SplitVersion int

const (
	// SplitOne sends one packet of D bytes (version 1, k = 1, l = D).
	SplitOne SplitVersion = 1
	// SplitFixed sends packets of Config.PacketBytes (4 KiB by default),
	// one after the other (version 2).
	SplitFixed SplitVersion = 2
	// SplitModel sends k0 packets of l0 bytes as chosen by
	// Config.SplitFunc, the optimum of the fitted trilinear model at r = 1
	// (version 3).
	SplitModel SplitVersion = 3
)

// UnmarshalText reads a version number 1, 2 or 3.
func (v *SplitVersion) UnmarshalText(b []byte) error {
	switch string(b) {
	case "1", "2", "3":
		*v = SplitVersion(b[0] - '0')
		return nil
	}
	return fmt.Errorf("%s is not 1, 2 or 3", opts.Echo(string(b)))
}

// SplitFunc returns the number of packets k and the packet length l (bytes)
// for an access of d bytes.
type SplitFunc func(d int) (k, l int)

// Config configures an emulated service network. The zero value of every
// field but Topology means its documented default.
type Config struct {
	// Topology is the service network (required).
	Topology *Topology

	// Placement of variables on modules; default PlaceDirect.
	Placement Placement
	// Seed seeds the universal hash function.
	Seed int64
	// ModuleBytes is the memory of one module; default DefaultModuleBytes.
	// Creating a variable that does not fit in its module fails.
	ModuleBytes int

	// Split is the packet-splitting version used by Read, Write and
	// Access; default SplitOne.
	Split SplitVersion
	// PacketBytes is the packet length of SplitFixed; default 4096.
	PacketBytes int
	// SplitFunc chooses k0, l0 for SplitModel (required with it).
	SplitFunc SplitFunc

	// Window is the number of requests an application rank keeps in flight
	// (its send hot spot can use at most this many); default 64.
	Window int
	// LinkSlots is the number of packet buffers a node keeps per incoming
	// link and per buffer class (the bounded buffering of the
	// deadlock-avoidance rule, see the package comment); default 2.
	LinkSlots int
	// LocalSlots is the number of packets a node's service manager may hold
	// in generated replies and broadcasts; default 4.
	LocalSlots int
	// GuardedSends is the number of sends in progress per outgoing link
	// (the paper's "guarded output" buffers one packet); default 1.
	GuardedSends int

	// Idle tunes how waiting ranks poll; see IdlePolicy.
	Idle IdlePolicy
	// StallTimeout is how long a service node may hold packets without any
	// progress, or an application rank wait for a reply, before the
	// emulation reports a stalled network and aborts; default 60 s.
	StallTimeout time.Duration

	// noBufferClasses puts every packet in one buffer class, switching the
	// deadlock-avoidance rule off; tests use it to show the stall detector
	// at work.
	noBufferClasses bool
}

// Defaults of Config.
const (
	DefaultModuleBytes  = 64 << 20
	DefaultPacketBytes  = 4096
	DefaultWindow       = 64
	DefaultLinkSlots    = 2
	DefaultLocalSlots   = 4
	DefaultGuardedSends = 1
	DefaultStallTimeout = 60 * time.Second
)

// MaxWindow bounds Config.Window as every count flag is bounded
// (patterns.MaxCount): no k-access keeps more requests in flight, and the
// flow control's sums on the window (Window + 2 buffers on an
// application link) stay far from overflow.
const MaxWindow = patterns.MaxCount

// maxVarBytes bounds a variable: one MPI message carries at most
// mpi.MaxCount bytes, and a read reply of a whole variable needs a header.
const maxVarBytes = 1<<31 - 1 - 4096

// withDefaults returns c with zero fields replaced by defaults, or an error
// for settings no default can fix.
func (c Config) withDefaults() (Config, error) {
	if c.Topology == nil {
		return c, errors.New("emulate: Config.Topology is required")
	}
	if c.ModuleBytes == 0 {
		c.ModuleBytes = DefaultModuleBytes
	}
	if c.ModuleBytes < 0 || c.ModuleBytes > maxVarBytes {
		return c, fmt.Errorf("emulate: ModuleBytes %d outside 1..%d", c.ModuleBytes, maxVarBytes)
	}
	if c.Split == 0 {
		c.Split = SplitOne
	}
	if c.Split < SplitOne || c.Split > SplitModel {
		return c, fmt.Errorf("emulate: Split version %d; accepted 1, 2, 3", c.Split)
	}
	if c.Split == SplitModel && c.SplitFunc == nil {
		return c, errors.New("emulate: Split version 3 needs Config.SplitFunc (k0, l0 from the fitted model)")
	}
	if c.PacketBytes == 0 {
		c.PacketBytes = DefaultPacketBytes
	}
	if c.PacketBytes < 0 {
		return c, fmt.Errorf("emulate: PacketBytes %d must be positive", c.PacketBytes)
	}
	if c.Window == 0 {
		c.Window = DefaultWindow
	}
	if c.LinkSlots == 0 {
		c.LinkSlots = DefaultLinkSlots
	}
	if c.LocalSlots == 0 {
		c.LocalSlots = DefaultLocalSlots
	}
	if c.GuardedSends == 0 {
		c.GuardedSends = DefaultGuardedSends
	}
	if c.Window > MaxWindow {
		return c, fmt.Errorf("emulate: Window %d: at most %d requests in flight", c.Window, MaxWindow)
	}
	if c.Window < 0 || c.LinkSlots < 0 || c.LinkSlots > 255 || c.LocalSlots < 0 || c.GuardedSends < 0 {
		return c, errors.New("emulate: Window, LinkSlots (<= 255), LocalSlots and GuardedSends must be positive")
	}
	if c.StallTimeout == 0 {
		c.StallTimeout = DefaultStallTimeout
	}
	c.Idle = c.Idle.withDefaults()
	return c, nil
}
