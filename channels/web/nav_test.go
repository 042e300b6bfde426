package web

import (
	"regexp"
	"strings"
	"testing"
)

// Each page marks its own nav link, and only it, with aria-current="page"
// written as markup: before, the attribute went through the page's escaping
// and came out as aria-current=&#34;page&#34;, which no screen reader reads.
func TestNavMarksTheCurrentPage(t *testing.T) {
	d := newDash(t, nil)
	v := d.pair("phone", Viewer)
	link := regexp.MustCompile(`<a href="([^"]*)"([^>]*)>`)
	for _, n := range nav {
		resp, body := v.do("GET", n.path, "")
		if resp.StatusCode != 200 {
			t.Errorf("%s: %d", n.path, resp.StatusCode)
			continue
		}
		navHTML, _, _ := strings.Cut(body[strings.Index(body, "<nav>")+1:], "</nav>")
		var current []string
		for _, m := range link.FindAllStringSubmatch(navHTML, -1) {
			switch attrs := strings.TrimSpace(m[2]); attrs {
			case `aria-current="page"`:
				current = append(current, m[1])
			case "":
			default:
				t.Errorf("%s: nav link %s has %q", n.path, m[1], attrs)
			}
		}
		if len(current) != 1 || current[0] != n.path {
			t.Errorf("%s: links marked current %v, want just %s", n.path, current, n.path)
		}
	}
}
