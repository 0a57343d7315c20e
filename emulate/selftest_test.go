package emulate

import (
	"bytes"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/commcost/commcost/mpi"
	"github.com/commcost/commcost/mpi/local"
)

// TestRunSelfTest: the self-test passes on two networks under the local
// backend, and application rank 0 alone writes the header and PASS.
func TestRunSelfTest(t *testing.T) {
	for _, spec := range []string{"BF(2)", "mesh(2x2)"} {
		t.Run(spec, func(t *testing.T) {
			top, err := Parse(spec)
			if err != nil {
				t.Fatal(err)
			}
			var mu sync.Mutex
			var out bytes.Buffer
			w := writerFunc(func(p []byte) (int, error) { mu.Lock(); defer mu.Unlock(); return out.Write(p) })
			cfg := Config{Topology: top, StallTimeout: 20 * time.Second}
			err = local.RunWith(local.Options{Timeout: 60 * time.Second}, top.Ranks(), func(c mpi.Comm) error {
				return RunSelfTest(c, cfg, w)
			})
			if err != nil {
				t.Fatal(err)
			}
			got := out.String()
			header := "selftest of " + top.Name() + " on "
			if !strings.HasPrefix(got, header) || !strings.Contains(got, "(local backend)\n") || !strings.HasSuffix(got, "\nPASS\n") ||
				strings.Count(got, "PASS\n") != 1 || strings.Count(got, "selftest of") != 1 {
				t.Errorf("output:\n%s", got)
			}
		})
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }
