package atomicfile

import "sync"

// A fault-injection point for tests: a writer that is killed between two
// steps of a write leaves the files as an error returned at that step does
// (what the process had not done, it does not do), so a test can stop a
// whole command's writes at each step in turn and look at what is left.

var (
	faultMu sync.Mutex
	fault   func(path, step string) error
)

// InjectFault makes every write call f after each of its steps ("created",
// "written", "synced", "renamed"); an error from f ends the write there, as
// a kill would. It returns the function that removes f. For tests only.
func InjectFault(f func(path, step string) error) (restore func()) {
	faultMu.Lock()
	fault = f
	faultMu.Unlock()
	return func() {
		faultMu.Lock()
		fault = nil
		faultMu.Unlock()
	}
}

func step(path, name string) error {
	faultMu.Lock()
	f := fault
	faultMu.Unlock()
	if f == nil {
		return nil
	}
	return f(path, name)
}
