package divalib_test

import (
	"testing"

	"github.com/commcost/commcost/divalib"
	"github.com/commcost/commcost/mpi"
	"github.com/commcost/commcost/mpi/local"
)

// BenchmarkCachedRead is the library's overhead for a read served from the
// rank's own copy (one goroutine rank of mpi/local; under mpirun the same
// figure comes from `commcost dsm overhead`).
func BenchmarkCachedRead(b *testing.B) {
	for _, cfg := range []divalib.Config{{Strategy: divalib.FixedHome}, {Variant: divalib.Tree4}} {
		b.Run(cfg.Name(), func(b *testing.B) {
			err := local.Run(1, func(c mpi.Comm) error {
				s, err := divalib.New(c, cfg)
				if err != nil {
					return err
				}
				v, err := s.Create("x", 64)
				if err != nil {
					return err
				}
				buf := make([]byte, 64)
				if err := s.Write(v, 0, buf); err != nil {
					return err
				}
				b.ReportAllocs()
				for b.Loop() {
					if err := s.Read(v, 0, buf); err != nil {
						return err
					}
				}
				b.ReportMetric(float64(s.Stats().ReadHits)/float64(s.Stats().Reads), "hit-ratio")
				return s.Close()
			})
			if err != nil {
				b.Fatal(err)
			}
		})
	}
}
