//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package modelfiles

import "os"

// lockFile is a no-op where flock(2) is missing.
func lockFile(*os.File) error { return nil }
