package boards_test

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/clawedge/clawedge/boards"
)

// hasMulticast reports whether an up interface other than loopback can
// carry multicast DNS on this host (a container may have none).
func hasMulticast() bool {
	ifs, _ := net.Interfaces()
	for _, i := range ifs {
		if i.Flags&net.FlagUp != 0 && i.Flags&net.FlagMulticast != 0 && i.Flags&net.FlagLoopback == 0 {
			return true
		}
	}
	return false
}

// TestDiscoveryFindsAndPairsByName: two boards on one host find each other
// by DNS-SD and pair by the name found, the code read on the other.
func TestDiscoveryFindsAndPairsByName(t *testing.T) {
	if !hasMulticast() {
		t.Skip("no multicast interface on this host")
	}
	hall := newBoard(t, "hall", hallPolicy)
	garage := newBoard(t, "garage", garagePolicy)
	for _, b := range []*board{hall, garage} {
		b.svc.Stop(context.Background())
		b.svc.Discover, b.svc.DiscoverEvery = true, 200*time.Millisecond
		addr := b.svc.Addr().String()
		b.restart(t, addr)
	}
	eventually(t, "hall finds garage on the LAN", func() bool { _, ok := hall.svc.Found()["garage"]; return ok })
	if f := hall.svc.Found()["garage"]; f.URL != garage.svc.CardURL() || f.Pin != garage.svc.Identity().Pin {
		t.Fatalf("garage as found: %+v, want %s", f, garage.svc.CardURL())
	}
	var listed bool
	for _, s := range hall.svc.List() {
		listed = listed || s.Name == "garage" && s.State == "found"
	}
	if !listed {
		t.Errorf("board/list does not show garage as found: %+v", hall.svc.List())
	}
	code := garage.mustDo(t, `@board/pair{}`).Stages[0].Calls[0].Result.Fields["code"].Str
	hall.mustDo(t, `@board/add{name="garage";code="`+code+`"}`)
	eventually(t, "hall lists garage.gpio/write", func() bool { return hasTool(hall, "garage.gpio/write") })
	_ = boards.ServiceType
}
