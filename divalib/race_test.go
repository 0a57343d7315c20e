//go:build race

package divalib_test

const raceEnabled = true
