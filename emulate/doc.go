// Package emulate runs the service network of paper 000 (Fischer, Rethmann,
// Wachsmann, sections 3, 4, 5, 7) on MPI ranks:
// the world is split into application ranks, which run the program, and
// service ranks, which emulate the routing hardware and the shared-memory
// modules and never run application code. The application side is a
// globalvar.Store (docs/ARCHITECTURE.md, contract 2), so the same application text runs
// over this package and over divalib.
//
// # Networks
//
// A Topology is a value: nodes, undirected links, where application ranks
// attach and where memory modules sit, and a shortest-path routing table
// (next hop per destination, ties to the lowest port) computed once by
// breadth-first search before the run, as the paper's preprocessing phase
// does. Direct networks put one module and one application rank at every
// node: shuffle-exchange SE(d), cube-connected cycles CCC(d), hypercube
// HC(d), 2-D mesh and torus. The indirect butterfly BF(d) has d+1 levels of
// 2^d switches; application rank i attaches to (0, i), module m sits at
// (d, m), and every request crosses d links on the unique monotone path.
// A network of p application ranks and n service nodes needs p + n ranks
// (BF(3): 8 + 32 = 40); world ranks 0..p-1 are the application ranks, rank
// p+u runs node u.
//
// # Service processes
//
// A service rank is a store-and-forward router: it takes in whole packets,
// looks up the outgoing link, and appends the packet to that link's FIFO
// queue; a node with a module also runs the service manager, which answers
// a read with the data and a write with an acknowledgement, keeps the
// variables' locks, and counts barrier packets. Barrier packets bound for
// the same link are combined in the queue (paper 000, section 3.2); the
// root, the module node nearest to all entry nodes, releases the barrier by
// a broadcast down the tree of its shortest paths. Variables are placed on
// modules by universal hashing or directly (Placement). Packets on the wire
// carry a 40-byte header and one credit byte per buffer class.
//
// # Bounded buffers and the deadlock-avoidance rule
//
// The paper's router "is not free of deadlocks"; its queues were merely
// large. Here every node has a fixed number of buffers and the network
// cannot deadlock, by the hop-count buffer classes of Merlin and Schweitzer
// (IEEE Trans. Commun. 28(3), 1980) with credit flow control:
//
//  1. A packet's class is the number of hops it has made in its phase:
//     requests and barrier packets enter at class 0 in their entry node and
//     take class c+1 at each next node; replies, releases and other
//     broadcasts start at class r0 = (longest request path) + 1 in the node
//     that generates them and also rise by one per hop. So the class of a
//     packet strictly increases over its whole life (request, then reply),
//     and there are r0 + (longest reply path) + 1 classes.
//  2. Each node keeps Config.LinkSlots buffers per incoming link and class,
//     and Config.LocalSlots buffers for what its service manager generates.
//     A node sends a packet of class c to a neighbour only while it holds a
//     credit for the neighbour's class c+1 buffer of that link; the credit
//     comes back (piggybacked on traffic or in a credit message) when the
//     neighbour has passed the packet on. Packets are therefore never
//     buffered beyond these bounds, in the emulation or in MPI.
//  3. The queue of a link is FIFO per class: a packet waiting for a credit
//     does not hold back packets of other classes behind it.
//  4. The service manager serves requests in arrival order, and a request
//     leaves its buffer only once a local buffer for its reply is free;
//     replies never wait for requests.
//  5. Application ranks are sinks: a rank keeps at most Config.Window
//     requests unanswered and waits for every answer inside the call that
//     sent the request, so a packet for an application rank is always
//     taken; the entry node holds Window buffers for its rank's requests.
//
// A packet of the highest class is at its destination and is consumed; by
// induction down the classes, every packet waits only for packets of higher
// classes, which eventually move, so the buffer dependency graph is acyclic
// and no set of packets can wait on each other in a cycle. The tests run
// hot spots and heavy random traffic through networks with cycles with one
// buffer per link and class, and show that the same traffic with a single
// class deadlocks.
//
// As a second line of defence the emulation never hangs silently: a service
// node that holds packets and sees no progress for Config.StallTimeout, or
// an application rank that waits that long for a reply, reports the stall
// (with the node's queues) and tells every rank to stop; an application
// error on one rank does the same.
//
// # Waiting without burning the cores
//
// Service ranks poll with Iprobe so that they can notice finished sends and
// enforce the stall timeout; IdlePolicy decides how an idle rank waits:
// back-to-back polls, then polls with a yield of the processor between
// them (sched_yield, so the rank with work runs at once when 16 ranks share
// 2 cores), then, after YieldFor of idleness, sleeps of up to MaxSleep.
//
// # Packet splitting
//
// An access of D bytes is sent as k packets of l bytes (paper 000,
// section 7, Fig. 14): version 1 one packet, version 2 packets of
// Config.PacketBytes (4 KiB), version 3 the k0, l0 that minimise the fitted
// trilinear model at r = 1 (model.OptimalSplit via ModelSplit). A split
// access is atomic per packet only: the globalvar promise of no torn reads
// holds for version 1 and for accesses of one packet.
//
// # Measurements
//
// KKAccess, KAccess and SplitAccess measure k-k-accesses (k, l, r),
// k-accesses (k, l, h, a, es) and the splitting versions through the running
// network and return results.Record values (bench "kkaccess", "kaccess",
// "packetsplit", the network in params), with the counters of every link
// and node (packets, wire bytes, queue high-water marks, credit stalls) in
// Record.Counters. KKSweep and KASweep measure a grid of them
// (patterns.KKGrid, KAGrid) in the order 'commcost emulate kk' and
// 'emulate kaccess' write them; RunSelfTest is 'commcost emulate selftest'.
// Times are seconds; sizes are bytes; the paper's "integer" is 4 bytes
// (IntBytes).
//
// # Configurations
//
// The subcommands of 'commcost emulate' are configurations here (KKJob,
// KAJob, SelfTestJob, InfoJob; optsplit.SplitJob for Figure 14): tagged
// fields are their flags (package opts), the network's settings shared as
// NetFlags and the measurements' as Measuring, each with a Validate that
// names fields and a Run on a world of the network's ranks. The networks
// are a registry (RegisterNetwork): Parse, --net's help and every message
// that lists them come from it (NetworkForms).
package emulate
