package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/clawedge/clawedge/update"
)

// The dashboard's first pairing code on the boot partition (docs/image.md):
// the daemon issues it while no browser is paired and hands it over on the
// notify socket (update.PairingKey); init, which alone may write the boot
// partition, puts it in clawedge-pairing.txt for whoever holds the card, and
// removes the file once a browser is paired. The partition is remounted
// read-write only for the write. The line is checked first: the socket is
// writable by all, and nothing but a code and a time reaches the card.

// pairingLine writes or removes the pairing file in boot for value, the text
// after update.PairingKey: "CODE RFC3339", or "" to remove it.
func pairingLine(boot, value string) error {
	path := filepath.Join(boot, update.PairingFile)
	if value == "" {
		if _, err := os.Lstat(path); errors.Is(err, os.ErrNotExist) {
			return nil // nothing to remove: no remount
		}
		return update.WithWritable(boot, func() error { return os.Remove(path) })
	}
	code, when, _ := strings.Cut(value, " ")
	expires, err := time.Parse(time.RFC3339, when)
	if err != nil || len(code) != 8 || strings.Trim(code, "0123456789") != "" {
		return fmt.Errorf("a pairing line that is not a code and its expiry: %q", value)
	}
	text := fmt.Sprintf(`clawedge: the first pairing code of this board's dashboard

    %s

On your phone or laptop, in the same network as the board, open
http://<the board's address>:8080/ and type the code on the pairing page
before %s UTC. That browser becomes the board's owner's (web:phone):
it may finish the setup (Setup page) and pair others.

The board wrote this file and removes it once a browser is paired. If the
code expires first, boot the board with this card: it writes a new one here.
Anyone holding this card can read it: keep the card to yourself until then.
`, code, expires.UTC().Format("2006-01-02 15:04"))
	return update.WithWritable(boot, func() error { return writeAtomic(path, []byte(text), 0o600) })
}
