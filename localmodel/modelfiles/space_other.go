//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package modelfiles

// DiskFree is unknown here (-1): downloads then check no free space.
func DiskFree(string) (int64, error) { return -1, nil }

func isNoSpace(error) bool { return false }
