package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestWebDashboardDaemon pairs a browser with the running daemon's code
// (`clawedge web pair`, over the control socket), switches the led through
// the API as a script does, finds the call in `clawedge audit` as
// web:phone, and revokes the browser, whose next call is refused.
func TestWebDashboardDaemon(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	cfgPath, _ := writeConfig(t, fmt.Sprintf("console: {stdin: false}\nweb: {listen: %q}\n", addr))
	runInProcess(t, cfgPath, "warn")
	base := "http://" + addr
	for deadline := time.Now().Add(30 * time.Second); ; {
		resp, err := http.Get(base + "/pair")
		if err == nil {
			resp.Body.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no dashboard: %v", err)
		}
		time.Sleep(10 * time.Millisecond)
	}
	out := runCLI(t, 0, "", "web", "pair", "--config", cfgPath, "--name", "phone", "--role", "operator")
	code := regexp.MustCompile(`code (\d{8})`).FindStringSubmatch(out)
	if code == nil {
		t.Fatalf("web pair printed %q", out)
	}
	post := func(path, cookie, csrf, body string) (*http.Response, string) {
		req, _ := http.NewRequest("POST", base+path, strings.NewReader(body))
		if cookie != "" {
			req.AddCookie(&http.Cookie{Name: "clawedge_session", Value: cookie})
		}
		req.Header.Set("X-CSRF-Token", csrf)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		raw, _ := io.ReadAll(resp.Body)
		return resp, string(raw)
	}
	resp, body := post("/api/session", "", "", `{"code":"`+code[1]+`"}`)
	var s struct{ CSRF string }
	if resp.StatusCode != 200 || json.Unmarshal([]byte(body), &s) != nil || len(resp.Cookies()) != 1 {
		t.Fatalf("session: %d %s", resp.StatusCode, body)
	}
	cookie := resp.Cookies()[0].Value
	if resp, body := post("/api/call", cookie, s.CSRF, `{"tool":"gpio/write","args":{"pin":"led","value":1}}`); resp.StatusCode != 200 || !strings.Contains(body, "led = 1") {
		t.Fatalf("call: %d %s", resp.StatusCode, body)
	}
	if audit := runCLI(t, 0, "", "audit", "--config", cfgPath); !strings.Contains(audit, "web:phone") || !strings.Contains(audit, `@gpio/write{pin="led";value=1}`) {
		t.Errorf("audit:\n%s", audit)
	}
	if list := runCLI(t, 0, "", "web", "list", "--config", cfgPath); !strings.Contains(list, "web:phone") || !strings.Contains(list, "operator") {
		t.Errorf("web list:\n%s", list)
	}
	runCLI(t, 0, "", "web", "revoke", "--config", cfgPath, "phone")
	if resp, body := post("/api/call", cookie, s.CSRF, `{"tool":"gpio/write","args":{"pin":"led","value":0}}`); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("a revoked browser's call: %d %s", resp.StatusCode, body)
	}
	if out := runCLI(t, 1, "", "web", "pair", "--config", cfgPath, "--role", "king"); !strings.Contains(out, "viewer, operator or owner") {
		t.Errorf("a bad role: %q", out)
	}
}
