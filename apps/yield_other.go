//go:build !linux

package apps

import "runtime"

func osYield() { runtime.Gosched() }
