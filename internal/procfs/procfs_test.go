package procfs

import (
	"os"
	"path/filepath"
	"testing"
)

func TestParse(t *testing.T) {
	st := Parse("Name:\tclawedge\nUmask:\t0022\nVmRSS:\t   12920 kB\nRssAnon:\t    1720 kB\nThreads:\t9\nSigQ:\t0/63407\nVmBad:\t1 MB\nVmHuge:\t99999999999999999999 kB\n")
	want := map[string]Field{"Umask": {22, false}, "VmRSS": {12920 << 10, true}, "RssAnon": {1720 << 10, true}, "Threads": {9, false}}
	if len(st) != len(want) {
		t.Errorf("got %v, want %v", st, want)
	}
	for k, v := range want {
		if st[k] != v {
			t.Errorf("%s = %v, want %v", k, st[k], v)
		}
	}
}

func TestKB(t *testing.T) {
	p := filepath.Join(t.TempDir(), "status")
	os.WriteFile(p, []byte("VmRSS:\t 18432 kB\nThreads:\t9\n"), 0o600)
	if n, err := KB(p, "VmRSS"); err != nil || n != 18432<<10 {
		t.Errorf("VmRSS = %d, %v", n, err)
	}
	for _, key := range []string{"Threads", "RssAnon"} { // a count, and no line
		if _, err := KB(p, key); err == nil {
			t.Errorf("%s accepted", key)
		}
	}
}

// TestOpenFDs checks both ways of counting (the size stat gives, on Linux
// 6.2 and later, and the batched listing) against descriptors this test
// opens: 300, more than one batch.
func TestOpenFDs(t *testing.T) {
	for _, stat := range []bool{true, false} {
		before, err := countFDs("/proc/self/fd", stat)
		if err != nil {
			t.Fatal(err)
		}
		var files []*os.File
		for range 300 {
			f, err := os.Open(os.DevNull)
			if err != nil {
				t.Fatal(err)
			}
			files = append(files, f)
		}
		after, err := countFDs("/proc/self/fd", stat)
		for _, f := range files {
			f.Close()
		}
		if err != nil {
			t.Fatal(err)
		}
		// Other goroutines of the test binary may open or close a
		// descriptor meanwhile; 300 must show.
		if d := after - before; d < 295 || d > 305 {
			t.Errorf("stat=%v: %d open descriptors, then %d after opening 300", stat, before, after)
		}
	}
	n, err := OpenFDs()
	if err != nil || n < 3 {
		t.Errorf("OpenFDs() = %d, %v; stdin, stdout and stderr at least", n, err)
	}
}
