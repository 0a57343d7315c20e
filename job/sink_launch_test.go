package job

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/commcost/commcost/results"
)

// TestOpenOutRefusesBadLaunch: a launch identifier no record may carry is
// refused before the --out file is created.
func TestOpenOutRefusesBadLaunch(t *testing.T) {
	path := filepath.Join(t.TempDir(), "r.jsonl")
	t.Setenv(results.LaunchEnv, "a\x1b[2J")
	if jw, err := OpenOut(path); err == nil || !strings.Contains(err.Error(), "holds control characters") {
		if jw != nil {
			jw.Close()
		}
		t.Fatalf("err %v, want a refusal of the launch identifier", err)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("the --out file was created: %v", err)
	}
}
