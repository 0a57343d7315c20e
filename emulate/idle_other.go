//go:build !linux

package emulate

import (
	"runtime"
	"time"
)

func osYield() { runtime.Gosched() }

func osSleep(d time.Duration) { time.Sleep(d) }
