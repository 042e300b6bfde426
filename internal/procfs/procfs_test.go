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
