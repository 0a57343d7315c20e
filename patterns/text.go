package patterns

import "fmt"

// The enumerations of the patterns read themselves from text, so that a
// sweep's flag of one (--op, --ops, --impl, --sync) or a list of them is
// bound without a parser of the command line's own.

// UnmarshalText parses "read" or "write".
func (o *AccessOp) UnmarshalText(b []byte) error {
	v, err := ParseAccessOp(string(b))
	if err != nil {
		return fmt.Errorf("%q is not read or write", b)
	}
	*o = v
	return nil
}

// UnmarshalText parses an operation name as records spell it.
func (k *AggKind) UnmarshalText(b []byte) error {
	v, err := ParseAggKind(string(b))
	if err != nil {
		return fmt.Errorf("%q is not an operation (%s)", b, joinNames(aggNames))
	}
	*k = v
	return nil
}

// UnmarshalText parses an implementation name as records spell it.
func (i *AggImpl) UnmarshalText(b []byte) error {
	v, err := ParseAggImpl(string(b))
	if err != nil {
		return fmt.Errorf("%q is not an implementation (%s)", b, joinNames(implNames))
	}
	*i = v
	return nil
}

// UnmarshalText parses "barrier" or "window".
func (s *Sync) UnmarshalText(b []byte) error {
	if len(b) == 0 {
		return fmt.Errorf("accepted values are barrier and window")
	}
	v, err := ParseSync(string(b))
	if err != nil {
		return fmt.Errorf("accepted values are barrier and window")
	}
	*s = v
	return nil
}

func joinNames(names []string) string {
	out := ""
	for i, n := range names {
		if i > 0 {
			out += ", "
		}
		out += n
	}
	return out
}
