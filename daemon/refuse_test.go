package daemon

import (
	"os"
	"strings"
	"testing"
)

// The control socket serves the daemon's user and root, in the daemon's own
// namespaces: another uid is refused whatever the socket file's mode says.
func TestRefuseConfinedPeers(t *testing.T) {
	me := uint32(os.Geteuid())
	if err := refuseConfined(int32(os.Getpid()), me); err != nil {
		t.Fatalf("the daemon's own user refused: %v", err)
	}
	if err := refuseConfined(int32(os.Getpid()), 0); err != nil {
		t.Fatalf("root refused: %v", err)
	}
	other := me + 4242
	if err := refuseConfined(int32(os.Getpid()), other); err == nil || !strings.Contains(err.Error(), "neither the daemon's user") {
		t.Fatalf("uid %d: got %v", other, err)
	}
	if err := refuseConfined(0, me); err == nil {
		t.Fatal("a peer the kernel shows no pid for (another namespace) was let in")
	}
}
