// Package directstore is the plain direct store: global variables
// (globalvar.Store, docs/ARCHITECTURE.md, contract 2) kept on MPI ranks with no cache
// and no replication, each variable whole on one home rank, every read and
// write sent to the home. It is the store of paper 000 (Fischer, Rethmann,
// Wachsmann) with the p memory
// modules on the p application ranks themselves: "if an application
// processor wants to read a global variable a read request is sent to the
// service processor that stores the global variable. The service processor
// writes the contents of the variable into a packet and sends it back ...
// [a write] sends an acknowledgement back" (section 3.2).
//
// # Why this store: the k-k-access, exactly
//
// A batched access (globalvar.Batcher) sends its packets with the messages
// of the k-k-access pattern (patterns.KKAccess, package patterns,
// access.go), packet for packet: a read is a request of
// mpi.AccessHeaderBytes (16) answered with the l data bytes; a write is a
// request of 16 + l bytes answered with a 16-byte acknowledgement (the
// request's header); the k packets of a group leave one after another with
// every answer's receive posted first, and the next group leaves when all k
// answers are in; a home serves requests one at a time in arrival order
// while it waits for its own answers. On the native backend the batch and
// the serving run in C in the same engine as the k-k-access kernel
// (mpi.StoreKernel, mpi/native/access.c), one cgo crossing per batch; on
// other backends (mpi/local) the same protocol runs in Go (engine.go). So a
// trilinear model fitted on kkaccess records describes this store's
// accesses without translation: a phase of a program that reads D bytes as
// ceil(D/(k l)) groups of k packets of l bytes is that many k-k-accesses.
// Only the header's meaning differs: (slot, sequence number) in the
// pattern, (byte offset in the home's memory, length and flags) here.
//
// # Placement
//
// A variable lives whole on one home rank, its memory module: the caller
// names it (CreateAt, globalvar.Placer; the paper's direct placement of the
// array A_i on module i) or Create places variables round robin in
// creation order (variable n on rank n mod p, as emulate's direct
// placement). A variable is never split across ranks, so every access to
// one packet is served by one home in one step and no read is torn (a
// plain Read larger than Config.MaxPacket is cut into packets and is atomic
// per packet only). A home keeps its variables in one contiguous memory,
// C memory on the native backend.
//
// # Progress and waiting
//
// As in divalib, there is no service thread: a rank serves requests
// whenever it is inside the store (a batch, a plain access, Barrier, Lock,
// Unlock, Create, Close), and a rank computing outside the store serves
// nobody; requests to it wait, as on a processor without interrupts. Every
// wait is one MPI_Waitany over the posted request receive and the call's
// own requests, so a rank waiting for anything also serves, and two ranks
// accessing each other at once cannot deadlock. The request receive stays
// posted from New to Close; Close ends it with a request a rank sends to
// itself after the closing barrier.
//
// Barrier is a dissemination barrier (ceil(log2 p) rounds of one message)
// whose waits serve: every access issued before it is answered before the
// rank enters it, so every write issued before a barrier has completed when
// it returns. Locks are kept by the variable's home, granted in arrival
// order; Unlock waits for the home's acknowledgement, so no lock message is
// left in flight across a barrier. Create is collective and starts with a
// barrier, so a home's memory only grows while no request can reach it.
//
// Units: bytes and seconds.
package directstore
