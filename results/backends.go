package results

import "fmt"

// MixedBackends finds records of two backends (meta backend: native MPI,
// the in-process local one): i is the first record that names a backend
// and j the first that names another, ok false when recs name at most
// one. A record that names none (a hand-made one) is not compared. Such
// records time different transports, so a fit, a table or a ratio that
// pools them describes neither.
func MixedBackends(recs []Record) (i, j int, ok bool) {
	i = -1
	for k, r := range recs {
		switch {
		case r.Meta.Backend == "":
		case i < 0:
			i = k
		case r.Meta.Backend != recs[i].Meta.Backend:
			return i, k, true
		}
	}
	return -1, -1, false
}

// BackendMix says which two records of recs mix backends (MixedBackends):
// `backends "native" (pingpong bytes=8) and "local" (pingpong bytes=8)`,
// "" when they do not.
func BackendMix(recs []Record) string {
	i, j, ok := MixedBackends(recs)
	if !ok {
		return ""
	}
	a, b := recs[i], recs[j]
	return fmt.Sprintf("backends %q (%s %s) and %q (%s %s)", Printable(a.Meta.Backend), a.Bench, ParamList(a.Params),
		Printable(b.Meta.Backend), b.Bench, ParamList(b.Params))
}
