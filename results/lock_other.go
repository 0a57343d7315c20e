//go:build !unix

package results

import "os"

// lockFile is a no-op where flock does not exist: O_APPEND alone places
// each record's single write at the end.
func lockFile(*os.File) (func(), error) { return func() {}, nil }
