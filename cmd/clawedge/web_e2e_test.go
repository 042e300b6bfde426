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

	"github.com/clawedge/clawedge/llm/openai/openaitest"
)

// TestWebDashboardDaemon pairs a browser with the running daemon's code
// (`clawedge web pair`, over the control socket), switches the led through
// the API as a script does, finds the call in `clawedge audit` as
// web:phone, reads the models, doctor's findings and a streamed chat answer
// the daemon wires in, and revokes the browser, whose next call is refused.
func TestWebDashboardDaemon(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	model := openaitest.New(t)
	cfgPath, _ := writeConfig(t, fmt.Sprintf("console: {stdin: false}\nweb: {listen: %q}\n"+
		"models:\n  remote:\n    - {name: lan, kind: openai, base_url: %q, model: m}\n", addr, model.URL))
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
	webFactsOfTheDaemon(t, base, cookie, s.CSRF, model)
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
	if out := runCLI(t, 1, "", "web", "pair", "--config", cfgPath, "--role", "king"); !strings.Contains(out, "must be one of viewer, operator, owner") {
		t.Errorf("a bad role: %q", out)
	}

	// /web at a console (here `clawedge chat`, the daemon's control socket;
	// on the SD image the serial console, which has no shell) gives a code
	// too; typed in the dashboard's own chat it gives none.
	out = runCLI(t, 0, "/web tablet operator\n", "chat", "--config", cfgPath)
	code = regexp.MustCompile(`code (\d{8})`).FindStringSubmatch(out)
	if code == nil || !strings.Contains(out, "web:tablet (operator)") {
		t.Fatalf("/web in chat printed %q", out)
	}
	resp, body = post("/api/session", "", "", `{"code":"`+code[1]+`"}`)
	if resp.StatusCode != 200 || json.Unmarshal([]byte(body), &s) != nil || len(resp.Cookies()) != 1 {
		t.Fatalf("the tablet's session: %d %s", resp.StatusCode, body)
	}
	cookie = resp.Cookies()[0].Value
	resp, body = post("/api/chat", cookie, s.CSRF, `{"text":"/web evil owner"}`)
	if resp.StatusCode != http.StatusUnprocessableEntity || !strings.Contains(body, "paired as operator: only an owner's may ask for it") || regexp.MustCompile(`code \d{8}`).MatchString(body) {
		t.Errorf("/web in the dashboard's chat: %d %s", resp.StatusCode, body)
	}
}

// webFactsOfTheDaemon checks what the composition root wires in: the
// models page names the configured remote by its host, doctor's findings
// come (in the background), and the chat streams the daemon's agent.
func webFactsOfTheDaemon(t *testing.T, base, cookie, csrf string, model *openaitest.Server) {
	t.Helper()
	get := func(path string) string {
		req, _ := http.NewRequest("GET", base+path, nil)
		req.AddCookie(&http.Cookie{Name: "clawedge_session", Value: cookie})
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		raw, _ := io.ReadAll(resp.Body)
		return string(raw)
	}
	var models []struct{ Name, Where, Route string }
	if body := get("/api/models"); json.Unmarshal([]byte(body), &models) != nil || len(models) != 1 || models[0].Name != "lan" || !strings.HasPrefix(models[0].Where, "127.0.0.1:") {
		t.Errorf("/api/models: %s", body)
	}
	get("/") // starts doctor's checks
	for deadline := time.Now().Add(30 * time.Second); !strings.Contains(get("/api/doctor"), `"what":"data_dir","status":"ok"`); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("no doctor's findings: %s", get("/api/doctor"))
		}
	}

	model.Push(openaitest.Text("All ", "quiet."))
	req, _ := http.NewRequest("POST", base+"/api/chat", strings.NewReader(`{"text":"anything new?"}`))
	req.AddCookie(&http.Cookie{Name: "clawedge_session", Value: cookie})
	req.Header.Set("X-CSRF-Token", csrf)
	req.Header.Set("Accept", "text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if strings.Count(string(raw), "event: text\n") < 2 || !strings.Contains(string(raw), `"reply":"All quiet.","failed":false,"streamed":true`) {
		t.Errorf("the daemon's chat, streamed:\n%s", raw)
	}
}
