//go:build !linux

package fskind

// KernelFD: other systems' kernel interfaces are not told apart.
func KernelFD(uintptr) string { return "" }

// KernelPath: other systems' kernel interfaces are not told apart.
func KernelPath(string) string { return "" }
