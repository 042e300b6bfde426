package atomicfile_test

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/clawedge/clawedge/internal/atomicfile"
)

func Example() {
	dir, _ := os.MkdirTemp("", "example")
	defer os.RemoveAll(dir)
	p := filepath.Join(dir, "clawedge.yaml")
	atomicfile.WriteFile(p, []byte("data_dir: /var/lib/clawedge\n"), 0o644)
	atomicfile.Copy(p, p+".bak") // the backup is whole, or not there
	atomicfile.WriteFile(p, []byte("data_dir: /perm/clawedge\n"), 0o644)
	b, _ := os.ReadFile(p + ".bak")
	fmt.Print(string(b))
	// Output: data_dir: /var/lib/clawedge
}
