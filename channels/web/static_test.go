package web

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"io"
	"net/http"
	"os"
	"path"
	"strconv"
	"strings"
	"testing"

	"github.com/clawedge/clawedge/policy"
)

// sources are the plain assets, by name, as edited in assets/.
func sources(t *testing.T) map[string][]byte {
	t.Helper()
	des, err := os.ReadDir("assets")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]byte{}
	for _, de := range des {
		raw, err := os.ReadFile("assets/" + de.Name())
		if err != nil {
			t.Fatal(err)
		}
		out[de.Name()] = raw
	}
	if len(out) == 0 {
		t.Fatal("no assets")
	}
	return out
}

// Each embedded static/NAME.gz is assets/NAME, as gen_static.go writes it;
// an edit without `go generate ./channels/web` fails here.
func TestStaticMatchesAssets(t *testing.T) {
	src := sources(t)
	des, err := staticFS.ReadDir("static")
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, de := range des {
		name, ok := strings.CutSuffix(de.Name(), ".gz")
		raw, has := src[name]
		if !ok || !has {
			t.Errorf("static/%s: no assets/%s: run go generate ./channels/web", de.Name(), name)
			continue
		}
		seen[name] = true
		gz, _ := staticFS.ReadFile("static/" + de.Name())
		br := bytes.NewReader(gz)
		zr, err := gzip.NewReader(br)
		if err != nil {
			t.Errorf("static/%s: %v", de.Name(), err)
			continue
		}
		zr.Multistream(false)
		got, err := io.ReadAll(zr)
		if err != nil || !bytes.Equal(got, raw) {
			t.Errorf("static/%s is not assets/%s (%d bytes, err %v; the source has %d): run go generate ./channels/web", de.Name(), name, len(got), err, len(raw))
		}
		if zr.Name != "" || !zr.ModTime.IsZero() || zr.Comment != "" || zr.Extra != nil {
			t.Errorf("static/%s: a name, time, comment or extra in the header: not byte-stable", de.Name())
		}
		// One member, whose ISIZE the server sends as the plain length.
		if size := binary.LittleEndian.Uint32(gz[len(gz)-4:]); int(size) != len(raw) || br.Len() != 0 {
			t.Errorf("static/%s: ISIZE %d, %d bytes past the first member; the source has %d bytes", de.Name(), size, br.Len(), len(raw))
		}
		if assetTypes[path.Ext(name)] == "" {
			t.Errorf("assets/%s: no Content-Type for its extension (assetTypes)", name)
		}
	}
	for name := range src {
		if !seen[name] {
			t.Errorf("assets/%s: no static/%s.gz: run go generate ./channels/web", name, name)
		}
	}
}

// get asks for path with the given Accept-Encoding (none if empty), the
// body as sent: the client does not decompress.
func get(t *testing.T, d *dash, method, path, ae string) (*http.Response, []byte) {
	t.Helper()
	req, _ := http.NewRequest(method, d.http.URL+path, nil)
	if ae != "" {
		req.Header.Set("Accept-Encoding", ae)
	}
	c := &http.Client{Transport: &http.Transport{DisableCompression: true}}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp, body
}

// Every asset is served, gzipped to a request that takes gzip and plain
// to one that does not, and each is its source byte for byte; with the
// headers every answer carries.
func TestStaticServed(t *testing.T) {
	d := newDash(t, &policy.Policy{Default: policy.Allow})
	for name, raw := range sources(t) {
		for _, ae := range []string{"gzip, deflate, br", "", "identity", "gzip;q=0, deflate", "br;q=1.0, *;q=0.1"} {
			zipped := acceptsGzip(ae)
			for _, method := range []string{"GET", "HEAD"} {
				resp, body := get(t, d, method, "/static/"+name, ae)
				h := resp.Header
				if resp.StatusCode != 200 {
					t.Errorf("%s %s (%q): %d", method, name, ae, resp.StatusCode)
					continue
				}
				if h.Get("Content-Type") != assetTypes[path.Ext(name)] || h.Get("Vary") != "Accept-Encoding" ||
					h.Get("X-Content-Type-Options") != "nosniff" || !strings.Contains(h.Get("Content-Security-Policy"), "default-src 'self'") {
					t.Errorf("%s %s (%q): headers %v", method, name, ae, h)
				}
				if (h.Get("Content-Encoding") == "gzip") != zipped {
					t.Errorf("%s %s (%q): Content-Encoding %q", method, name, ae, h.Get("Content-Encoding"))
				}
				want := len(raw)
				if zipped {
					gz, _ := staticFS.ReadFile("static/" + name + ".gz")
					want = len(gz)
				}
				if h.Get("Content-Length") != strconv.Itoa(want) {
					t.Errorf("%s %s (%q): Content-Length %q, want %d", method, name, ae, h.Get("Content-Length"), want)
				}
				if method == "HEAD" {
					if len(body) != 0 {
						t.Errorf("HEAD %s: a body", name)
					}
					continue
				}
				if zipped {
					zr, err := gzip.NewReader(bytes.NewReader(body))
					if err != nil {
						t.Errorf("GET %s (%q): %v", name, ae, err)
						continue
					}
					body, _ = io.ReadAll(zr)
				}
				if !bytes.Equal(body, raw) {
					t.Errorf("GET %s (%q): %d bytes, not its source's %d", name, ae, len(body), len(raw))
				}
			}
		}
	}
}

// Only the flat names of the embedded set: no listing, no other file.
func TestStaticUnknown(t *testing.T) {
	d := newDash(t, &policy.Policy{Default: policy.Allow})
	for _, p := range []string{
		"/static/", "/static/nope.js", "/static/app.js.gz", "/static/static/app.js.gz", "/static/assets/app.js",
		"/static/app.js/", "/static/../pages.go", "/static/%2e%2e/pages.go",
		"/static/..%2fpages.go", "/static/..%5cstatic%5capp.js", "/static/app", "/static/.js", "/static/app.js%00",
		"/static/VENDORED.md", "/static/pages.go",
	} {
		resp, body := get(t, d, "GET", p, "gzip")
		if resp.StatusCode != 404 || resp.Header.Get("Content-Encoding") != "" {
			t.Errorf("%s: %d %q", p, resp.StatusCode, body)
		}
	}
}

func TestAcceptsGzip(t *testing.T) {
	yes := []string{"gzip", "GZIP", "gzip, deflate, br", "x-gzip", "*", "br, *;q=0.5", "gzip;q=0.001", "deflate ; q=1 , gzip ; Q=0.5", "gzip;q=1.000"}
	no := []string{"", "identity", "br", "gzip;q=0", "gzip;q=0.000", "gzip; q=0, *", "*;q=0", "gzip;q=x", "gzip;q=2", "gzip;q=-1", "gzip;q=NaN", "gzipx", "deflate, br"}
	for _, v := range yes {
		if !acceptsGzip(v) {
			t.Errorf("%q: refused", v)
		}
	}
	for _, v := range no {
		if acceptsGzip(v) {
			t.Errorf("%q: taken", v)
		}
	}
}
