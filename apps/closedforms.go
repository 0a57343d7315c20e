package apps

import (
	"errors"
	"fmt"
	"math"
)

// ClosedForm is one of paper 003's closed-form communication costs of a
// whole program (slides "Dense Matrix Multiplication - Analysis" and
// "Gaussian Elimination (Dense Matrix Factorization): Performance"),
// evaluated with fitted t_s and t_w.
type ClosedForm struct {
	Model    string // "LogP", "A3" (the two-level model), "Accurate"
	Topology string // "hypercube" or "mesh"
	Formula  string // as on the slides, n in words (8-byte numbers)
	Sec      float64
	// Derived is set for forms the slides do not print (Cannon's), derived
	// the same way as the slides' matrix multiplication row.
	Derived bool
}

// ErrNoClosedForm is ClosedForms' answer for a program paper 003 gives no
// closed form of.
var ErrNoClosedForm = errors.New("no closed form")

// ClosedForms evaluates the slides' three models for app ("checkerboard",
// "cannon" or "gauss") with matrix order n on p ranks, with startup ts
// (seconds) and per-byte time tw (s/B; the slides count words, so a word
// costs 8 tw). log is base 2.
//
// Dense matrix multiplication (checkerboard), as printed:
//
//	          hypercube                        mesh
//	LogP      2 t_w n^2/sqrt p                 2 t_w n^2
//	A3        2 t_w n^2/sqrt p                 2 t_w n^2/sqrt p
//	Accurate  2(t_s log p + 2 t_w n^2/sqrt p)  2 t_s sqrt p + 2 t_w n^2/sqrt p
//
// (The hypercube "Accurate" entry is printed with the doubled t_w term
// the cost table does not give: two all-to-all broadcasts of n^2/p words
// among sqrt p ranks cost t_s log p + 2 t_w n^2/sqrt p on the table's
// hypercube column. It is evaluated as printed.)
//
// Gaussian elimination:
//
//	          hypercube                mesh
//	LogP      t_w n^2                  t_w n^2 sqrt p
//	A3        t_w n^2                  t_w n^2
//	Accurate  2 t_s n log p + t_w n^2  4 t_s n sqrt p + t_w n^2
//
// Cannon's algorithm is not on the slides; its forms are derived as the
// slides derive the checkerboard's: 2 sqrt p shifts (the alignment and
// sqrt p - 1 steps, each moving one A and one B block) of n^2/p words.
// A shift is a nearest-neighbour (NEWS) exchange, bisection-insensitive,
// so A3 charges t_w n^2/p per shift; LogP's permutation cost scales by
// the bisection factor p/c = sqrt p on a mesh, as in the slides' mesh
// column; the accurate form adds one startup per shift:
//
//	          hypercube                      mesh
//	LogP      2 t_w n^2/sqrt p               2 t_w n^2
//	A3        2 t_w n^2/sqrt p               2 t_w n^2/sqrt p
//	Accurate  2 sqrt p (t_s + t_w n^2/p)     2 sqrt p (t_s + t_w n^2/p)
func ClosedForms(app string, n, p int, ts, tw float64) ([]ClosedForm, error) {
	if n < 1 || p < 1 {
		return nil, fmt.Errorf("closed forms need n >= 1 and p >= 1, got n = %d, p = %d", n, p)
	}
	N, P := float64(n), float64(p)
	w := 8 * tw // per word
	sp, lg := math.Sqrt(P), math.Log2(P)
	n2 := N * N
	form := func(model, topo, formula string, v float64, derived bool) ClosedForm {
		return ClosedForm{Model: model, Topology: topo, Formula: formula, Sec: v, Derived: derived}
	}
	switch app {
	case "checkerboard":
		return []ClosedForm{
			form("LogP", "hypercube", "2 t_w n^2/sqrt p", 2*w*n2/sp, false),
			form("LogP", "mesh", "2 t_w n^2", 2*w*n2, false),
			form("A3", "hypercube", "2 t_w n^2/sqrt p", 2*w*n2/sp, false),
			form("A3", "mesh", "2 t_w n^2/sqrt p", 2*w*n2/sp, false),
			form("Accurate", "hypercube", "2(t_s log p + 2 t_w n^2/sqrt p)", 2*(ts*lg+2*w*n2/sp), false),
			form("Accurate", "mesh", "2 t_s sqrt p + 2 t_w n^2/sqrt p", 2*ts*sp+2*w*n2/sp, false),
		}, nil
	case "cannon":
		acc := 2 * sp * (ts + w*n2/P)
		return []ClosedForm{
			form("LogP", "hypercube", "2 t_w n^2/sqrt p", 2*w*n2/sp, true),
			form("LogP", "mesh", "2 t_w n^2", 2*w*n2, true),
			form("A3", "hypercube", "2 t_w n^2/sqrt p", 2*w*n2/sp, true),
			form("A3", "mesh", "2 t_w n^2/sqrt p", 2*w*n2/sp, true),
			form("Accurate", "hypercube", "2 sqrt p (t_s + t_w n^2/p)", acc, true),
			form("Accurate", "mesh", "2 sqrt p (t_s + t_w n^2/p)", acc, true),
		}, nil
	case "gauss":
		return []ClosedForm{
			form("LogP", "hypercube", "t_w n^2", w*n2, false),
			form("LogP", "mesh", "t_w n^2 sqrt p", w*n2*sp, false),
			form("A3", "hypercube", "t_w n^2", w*n2, false),
			form("A3", "mesh", "t_w n^2", w*n2, false),
			form("Accurate", "hypercube", "2 t_s n log p + t_w n^2", 2*ts*N*lg+w*n2, false),
			form("Accurate", "mesh", "4 t_s n sqrt p + t_w n^2", 4*ts*N*sp+w*n2, false),
		}, nil
	}
	return nil, fmt.Errorf("%w: paper 003 gives closed forms for checkerboard, cannon and gauss, not %q", ErrNoClosedForm, app)
}
