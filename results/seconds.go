package results

// FormatSeconds shows a time as the tables do: three significant digits
// in s, ms, us or ns, e.g. "1.52 ms".
func FormatSeconds(v float64) string {
	return scaleFor(UnitSeconds, v, &noteSet{}).format(v)
}
