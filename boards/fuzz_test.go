package boards

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/clawedge/clawedge/hal"
	"github.com/clawedge/clawedge/internal/rigtest"
)

// FuzzServer sends any request, with a stranger's certificate, to a
// board's A2A server as it is wired (the card, pairing, the SDK's JSON-RPC
// handler behind the pin check): it never panics, a stranger gets nothing
// but the card and pairing's refusals, and the led never moves.
func FuzzServer(f *testing.F) {
	for _, seed := range []struct{ method, path, body string }{
		{"GET", CardPath, ""},
		{"POST", RPCPath, `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"text":"@gpio/write{pin=\"led\";value=1}"}]}}}`},
		{"POST", RPCPath, `{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"x"}}`},
		{"POST", PairPath, `{"name":"evil","url":"https://x:1","proof":"` + strings.Repeat("ab", 32) + `"}`},
		{"POST", PairPath, `{"name":"","proof":"zz"}`},
		{"GET", ToolsPath, ""},
		{"POST", UnpairPath, ""},
	} {
		f.Add(seed.method, seed.path, []byte(seed.body))
	}
	rig := rigtest.New(f, rigtest.Options{})
	s, err := Open(rig.Store, &Service{Name: "garage", Runner: rig.Runner, Timeout: time.Second})
	if err != nil {
		f.Fatal(err)
	}
	srv := s.server()
	stranger := strangerCert(f)
	f.Fuzz(func(t *testing.T, method, path string, body []byte) {
		if method != "GET" && method != "POST" || !strings.HasPrefix(path, "/") || strings.ContainsAny(path, "#?% \t") {
			return
		}
		if _, err := url.ParseRequestURI("https://garage" + path); err != nil {
			return // not a request a client could send
		}
		req := httptest.NewRequest(method, "https://garage"+path, bytes.NewReader(body))
		req.TLS = &tls.ConnectionState{PeerCertificates: []*x509.Certificate{stranger}}
		rec := httptest.NewRecorder()
		srv.Handler.ServeHTTP(rec, req)
		switch {
		case path == CardPath && method == "GET", path == PairPath && method == "POST":
		case rec.Code == http.StatusOK || rec.Code == http.StatusNoContent:
			t.Fatalf("%s %s by a stranger: %d %s", method, path, rec.Code, rec.Body)
		}
		if rig.Level(t, "led") != hal.Low {
			t.Fatal("a stranger moved the led")
		}
		if len(s.peers.List()) != 0 {
			t.Fatal("a stranger paired without a code")
		}
	})
	s.Stop(context.Background())
}

// FuzzFound reads any TXT fields as an announcement: what it accepts is
// well formed.
func FuzzFound(f *testing.F) {
	f.Add("url=https://garage.local:8765", "name=garage", "pin="+strings.Repeat("0f", 32))
	f.Add("url=http://x", "name=Garage", "pin=")
	f.Fuzz(func(t *testing.T, a, b, c string) {
		got, ok := foundOf([]string{a, b, c})
		if ok && (!validName(got.Name) || !validURL(got.URL) || !isHexPin(got.Pin)) {
			t.Fatalf("accepted %+v", got)
		}
	})
}

func strangerCert(tb testing.TB) *x509.Certificate {
	id, err := LoadIdentity(memKV{})
	if err != nil {
		tb.Fatal(err)
	}
	return id.Cert.Leaf
}

type memKV map[string][]byte

func (m memKV) Get(b, k string) ([]byte, bool, error) { v, ok := m[b+"/"+k]; return v, ok, nil }
func (m memKV) Put(b, k string, v []byte) error {
	if m != nil {
		m[b+"/"+k] = v
	}
	return nil
}
