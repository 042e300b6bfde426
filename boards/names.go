package boards

import (
	"net/url"
	"os"
	"strings"

	"github.com/clawedge/clawedge/policy/vocab"
)

var osHostname = os.Hostname

func validName(n string) bool { return vocab.Board(n) }

func validURL(s string) bool {
	u, err := url.Parse(s)
	return err == nil && u.Scheme == "https" && u.Host != "" && u.User == nil && u.RawQuery == "" && len(s) <= 256
}

func cutNS(tool string) (ns, name string, ok bool) { return strings.Cut(tool, "/") }

func containsDot(s string) bool { return strings.Contains(s, ".") }
