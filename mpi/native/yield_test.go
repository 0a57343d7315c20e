package native

import (
	"strings"
	"testing"
)

func TestYieldWhenIdle(t *testing.T) {
	tests := []struct {
		name   string
		impl   string
		env    map[string]string
		cores  int
		want   bool
		errHas string
	}{
		{"mpich oversubscribed", "mpich", map[string]string{hydraLocalRanks: "4"}, 2, true, ""},
		{"mpich a core each", "mpich", map[string]string{hydraLocalRanks: "2"}, 2, false, ""},
		{"mpich not started by hydra", "mpich", nil, 2, false, ""},
		{"open mpi: mpirun's mpi_yield_when_idle does it", "openmpi", map[string]string{hydraLocalRanks: "4"}, 2, false, ""},
		{"forced on", "openmpi", map[string]string{YieldEnv: "1"}, 2, true, ""},
		{"forced off", "mpich", map[string]string{YieldEnv: "0", hydraLocalRanks: "16"}, 2, false, ""},
		{"bad value", "mpich", map[string]string{YieldEnv: "yes"}, 2, false, YieldEnv + `="yes": want 1`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := yieldWhenIdle(tc.impl, func(k string) string { return tc.env[k] }, tc.cores)
			if tc.errHas != "" {
				if err == nil || !strings.Contains(err.Error(), tc.errHas) {
					t.Fatalf("err = %v; want one saying %q", err, tc.errHas)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Errorf("yieldWhenIdle = %v, %v; want %v", got, err, tc.want)
			}
		})
	}
}
