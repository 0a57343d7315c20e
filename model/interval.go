package model

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"
)

// MarshalJSON writes p with the interval of a parameter without an
// uncertainty, [Value, Value], where p leaves both SE and CI95 at zero (a
// Param built without them): a file then never holds a ci95 of [0, 0]
// that leaves out its value, which the reader refuses (checkPresent).
func (p Param) MarshalJSON() ([]byte, error) {
	type plain Param // without this method
	if p.SE == 0 && p.CI95 == [2]float64{} {
		p.CI95 = [2]float64{p.Value, p.Value}
	}
	return json.Marshal(plain(p))
}

// Every fit writes a parameter's 95% interval as value ± t SE, t the
// Student t quantile 0.975 of its residual degrees of freedom: from
// MinTQuantile (the normal quantile, 1.959964 as the degrees of freedom
// grow) to MaxTQuantile (t at one degree of freedom, 12.706). A half
// width outside [MinTQuantile SE, MaxTQuantile SE] is an interval no fit
// writes for that SE: a zero width with a positive SE, a width with a
// zero SE. collalg's beta_x, an interval of the range over sizes, gives
// the SE that range implies as a 95% interval (MinTQuantile's).
const (
	MinTQuantile = 1.95
	MaxTQuantile = 12.71
)

// intervalTol is the relative rounding slack of the interval checks: an
// SE below intervalTol times the parameter's scale cannot move its
// interval's ends, which then coincide with the value.
const intervalTol = 1e-12

// checkInterval refuses a parameter at path whose 95% interval
// contradicts its SE (see MinTQuantile): se is finite and >= 0 (checkFinite
// and checkNumber refuse the others), ci95 = [value, value] when se is 0
// and value ± t se for a t in [MinTQuantile, MaxTQuantile] when it is not.
// A ci95 of [0, 0] with se 0 is an interval left out (checkPresent refuses
// one written so with another value).
func checkInterval(p Param, path string) error {
	lo, hi := p.CI95[0], p.CI95[1]
	if p.SE == 0 && lo == 0 && hi == 0 {
		return nil
	}
	scale := math.Max(math.Abs(p.Value), math.Max(math.Abs(lo), math.Abs(hi)))
	slack := intervalTol * scale
	half := (hi - lo) / 2
	if half > MaxTQuantile*p.SE*(1+1e-9)+slack {
		if p.SE == 0 {
			return fmt.Errorf("%s: ci95 = [%v, %v] has width %.3g, but se = 0: an interval of a parameter without a standard error is [value, value] (a corrupt or hand-edited file)", where(path), lo, hi, hi-lo)
		}
		return fmt.Errorf("%s: ci95 = [%v, %v] has half width %.3g, but se = %v: a 95%% interval is value ± t se with t <= %g, at most %.3g wide (a corrupt or hand-edited file)", where(path), lo, hi, half, p.SE, MaxTQuantile, 2*MaxTQuantile*p.SE)
	}
	if p.SE > slack && half < MinTQuantile*p.SE*(1-1e-9) {
		return fmt.Errorf("%s: ci95 = [%v, %v] has half width %.3g, but se = %v: a 95%% interval is value ± t se with t >= %g, at least %.3g wide (a corrupt or hand-edited file)", where(path), lo, hi, half, p.SE, MinTQuantile, 2*MinTQuantile*p.SE)
	}
	return nil
}

// Plausible bounds on a link's fitted costs. MinLinkSecondsPerByte is
// 1e-13 s/B, a bandwidth of 1e13 B/s = 10 TB/s: two orders above the
// fastest link or memory copy of any machine (a few hundred GB/s), so a
// per-byte time below it is no link's. MinLinkLatency is 1e-10 s, a tenth
// of a nanosecond: below one clock cycle, and three orders below any
// message's start-up. linkPerByte and linkLatency name the parameters
// that are a link's per-byte time (t_w, LogGP's G, collalg's beta and
// beta_x) and its latency (t_s, L, alpha) in every kind; commands use
// them as such (export simgrid writes 1 / t_w as a link's bandwidth). A
// regression coefficient of another name may be near 0 and is not bound.
const (
	MinLinkSecondsPerByte = 1e-13
	MinLinkLatency        = 1e-10
)

var (
	linkPerByte = map[string]bool{"t_w": true, "G": true, "beta": true, "beta_x": true}
	linkLatency = map[string]bool{"t_s": true, "L": true, "alpha": true}
)

// checkPlausible refuses a link's per-byte time or latency (linkPerByte,
// linkLatency) that is positive and below its bound together with its
// whole 95% interval: a fit that resolves a bandwidth above 10 TB/s or a
// latency below 0.1 ns. A value of 0 or below (a fit of noise, which
// predict refuses when it prices an instance so) and one whose interval
// reaches the bound (unresolved) are left to the commands that use them.
func checkPlausible(p Param, path string) error {
	name, _, _ := strings.Cut(p.Name, "[")
	upper := math.Max(p.Value, p.CI95[1])
	switch {
	case linkPerByte[name] && p.Value > 0 && upper < MinLinkSecondsPerByte:
		return fmt.Errorf("%s: %s = %v s/B (a bandwidth of %.3g B/s): a link's time per byte is at least %g s/B (10 TB/s, above any link); accepted: %g to %g s/B, or an interval reaching %g (a corrupt or hand-edited file)",
			where(path), p.Name, p.Value, 1/p.Value, MinLinkSecondsPerByte, MinLinkSecondsPerByte, MaxParamSecondsPerByte, MinLinkSecondsPerByte)
	case linkLatency[name] && p.Value > 0 && upper < MinLinkLatency:
		return fmt.Errorf("%s: %s = %v s: a link's latency is at least %g s (a tenth of a nanosecond); accepted: %g to %g s, or an interval reaching %g (a corrupt or hand-edited file)",
			where(path), p.Name, p.Value, MinLinkLatency, MinLinkLatency, MaxParamSeconds, MinLinkLatency)
	}
	return nil
}
