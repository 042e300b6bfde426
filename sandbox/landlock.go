package sandbox

import (
	"os"

	"github.com/landlock-lsm/go-landlock/landlock"
	llsys "github.com/landlock-lsm/go-landlock/landlock/syscall"
)

// LandlockABI is the kernel's Landlock ABI version, 0 when it has none (too
// old, not built in, or not in the lsm= list).
func LandlockABI() int {
	v, err := llsys.LandlockGetABIVersion()
	if err != nil || v < 0 {
		return 0
	}
	return v
}

// configs are go-landlock's configurations per ABI version; a kernel newer
// than the library gets the newest the library knows.
var configs = []landlock.Config{landlock.V1, landlock.V2, landlock.V3, landlock.V4, landlock.V5,
	landlock.V6, landlock.V7, landlock.V8, landlock.V9, landlock.V10, landlock.V11}

// restrictPaths confines the helper (and so the program it execs) to the
// spec's paths. From ABI 4 TCP bind and connect are denied too when the
// network is off (seccomp denies the sockets themselves); from ABI 6 the
// child may not signal processes or reach abstract sockets outside its
// domain, the daemon included.
func restrictPaths(s *Spec) error {
	abi := min(s.LandlockABI, len(configs))
	cfg := configs[abi-1]
	var rules []landlock.Rule
	add := func(paths []string, write bool) {
		for _, p := range paths {
			fi, err := os.Stat(p)
			if err != nil {
				continue // missing: nothing to grant
			}
			var r landlock.FSRule
			switch {
			case fi.IsDir() && write:
				r = landlock.RWDirs(p)
			case fi.IsDir():
				r = landlock.RODirs(p)
			case write:
				r = landlock.RWFiles(p)
			default:
				r = landlock.ROFiles(p)
			}
			if abi >= 5 && (write || fi.Mode()&os.ModeDevice != 0) {
				r = r.WithIoctlDev()
			}
			rules = append(rules, r.IgnoreIfMissing())
		}
	}
	add(baseRead, false)
	add([]string{s.Program}, false)
	add(s.Read, false)
	add(s.Write, true)
	add(baseWrite, true)
	if s.Network {
		if err := cfg.RestrictPaths(rules...); err != nil {
			return err
		}
		if abi >= 6 {
			return cfg.RestrictScoped()
		}
		return nil
	}
	return cfg.Restrict(rules...)
}
