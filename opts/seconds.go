package opts

// MaxSeconds bounds a flag given in seconds (a timeout, a time budget):
// a time.Duration holds about 292 years, and a longer time converted to
// one overflows into a negative duration.
const MaxSeconds = 1e9

// CheckSeconds refuses, as field, a number of seconds that is not
// positive or is beyond MaxSeconds (NaN and infinities included), and
// names both bounds.
func CheckSeconds(field string, sec float64) error {
	if !(sec > 0) || !(sec <= MaxSeconds) {
		return Field(field, sec, "must be a positive number of seconds, at most %g (about 32 years)", float64(MaxSeconds))
	}
	return nil
}
