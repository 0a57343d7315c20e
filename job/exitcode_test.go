package job

import (
	"strings"
	"testing"
	"time"

	"github.com/commcost/commcost/opts"
)

// TestUsageErrorOnOtherRanks: bad input found before MPI starts is said
// at once by the launcher's rank 0; another rank says it only after
// UsageGrace (rank 0's exit would have ended it by then), so the message
// is never lost to a rank that exits first.
func TestUsageErrorOnOtherRanks(t *testing.T) {
	saved := UsageGrace
	t.Cleanup(func() { UsageGrace = saved })
	UsageGrace = 200 * time.Millisecond
	bad := opts.Badf("--sizes abc: not a size")
	for _, tc := range []struct {
		rank     string
		minDelay time.Duration
	}{{"0", 0}, {"1", UsageGrace}, {"", 0}} {
		t.Run("rank "+tc.rank, func(t *testing.T) {
			for _, v := range launcherRanks {
				t.Setenv(v[0], "")
			}
			t.Setenv("OMPI_COMM_WORLD_RANK", tc.rank)
			var stderr strings.Builder
			start := time.Now()
			code := ExitCode(bad, &stderr, func(s string) string { return s })
			took := time.Since(start)
			if code != 2 || stderr.String() != "commcost: --sizes abc: not a size\n" {
				t.Errorf("exit %d, stderr %q; want 2 and the message once", code, stderr.String())
			}
			if took < tc.minDelay || (tc.minDelay == 0 && took > UsageGrace/2) {
				t.Errorf("took %v; want at least %v and no wait on rank 0", took, tc.minDelay)
			}
		})
	}
}
