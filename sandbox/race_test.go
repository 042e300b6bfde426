//go:build race

package sandbox

// raceEnabled: the race runtime needs far more address space than a memory
// limit a test can set.
const raceEnabled = true
