package opts

import (
	"errors"
	"math"
	"strconv"
)

// OptInt is an integer that may be left unset: Given tells a value typed
// on the command line (or set by a caller) from the zero of "not asked
// for", where 0 itself means something (--warmup 0: none; unset: the
// pattern's default). *OptInt is a flag.Value.
type OptInt struct {
	V     int
	Given bool
}

// OptFloat is OptInt for a number.
type OptFloat struct {
	V     float64
	Given bool
}

// Int returns an OptInt set to v.
func Int(v int) OptInt { return OptInt{V: v, Given: true} }

// Float returns an OptFloat set to v.
func Float(v float64) OptFloat { return OptFloat{V: v, Given: true} }

func (o *OptInt) Set(s string) error {
	n, err := strconv.ParseInt(s, 0, strconv.IntSize)
	if err != nil {
		var ne *strconv.NumError
		if errors.As(err, &ne) && ne.Err == strconv.ErrRange {
			return errors.New("out of range; want an integer")
		}
		return errors.New("want an integer")
	}
	*o = OptInt{V: int(n), Given: true}
	return nil
}

func (o *OptInt) String() string {
	if o == nil || !o.Given {
		return ""
	}
	return strconv.Itoa(o.V)
}

// Or is the value when given, else def.
func (o OptInt) Or(def int) int {
	if o.Given {
		return o.V
	}
	return def
}

func (o *OptFloat) Set(s string) error {
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(f) {
		return errors.New("want a number")
	}
	*o = OptFloat{V: f, Given: true}
	return nil
}

func (o *OptFloat) String() string {
	if o == nil || !o.Given {
		return ""
	}
	return strconv.FormatFloat(o.V, 'g', -1, 64)
}

// Or is the value when given, else def.
func (o OptFloat) Or(def float64) float64 {
	if o.Given {
		return o.V
	}
	return def
}

// TypeName is the name of the value in usage texts ("-iters int").
func (*OptInt) TypeName() string { return "int" }

// TypeName is the name of the value in usage texts ("-resync float").
func (*OptFloat) TypeName() string { return "float" }
