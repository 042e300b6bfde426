package boards_test

import (
	"context"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/clawedge/clawedge/grammar"
	"github.com/clawedge/clawedge/hal"
	"github.com/clawedge/clawedge/tools"
)

// a2ajsDir is third_party/a2a-js, where scripts/fetch-a2a-js.sh installs
// the official JavaScript SDK.
func a2ajsDir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "third_party", "a2a-js")
}

// TestInteropJavaScriptClient: an A2A client nobody here wrote, the
// official JavaScript SDK, reads garage's card, sends it a command with
// hall's paired credentials (hall's certificate, garage's pinned) and reads
// the completed task; the command runs on garage as board:hall.
func TestInteropJavaScriptClient(t *testing.T) {
	_, errNode := exec.LookPath("node")
	_, errPkg := os.Stat(filepath.Join(a2ajsDir(), "node_modules", "@a2a-js", "sdk", "package.json"))
	if errNode != nil || errPkg != nil {
		if os.Getenv("CLAWEDGE_REQUIRE_A2AJS") != "" {
			t.Fatalf("node or @a2a-js/sdk is missing (run scripts/fetch-a2a-js.sh) and CLAWEDGE_REQUIRE_A2AJS is set: %v %v", errNode, errPkg)
		}
		t.Skip("node or @a2a-js/sdk is missing (run scripts/fetch-a2a-js.sh)")
	}
	hall := newBoard(t, "hall", hallPolicy)
	garage := newBoard(t, "garage", garagePolicy)
	pair(t, hall, garage, "garage")

	// hall's credentials, as the JavaScript client presents them.
	dir := t.TempDir()
	id := hall.svc.Identity()
	keyDER, err := x509.MarshalPKCS8PrivateKey(id.Cert.PrivateKey)
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile := filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: id.Cert.Certificate[0]}), 0o600)
	os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}), 0o600)
	pin, _ := hall.svc.Peers().Get("garage")

	out := runJS(t, garage.svc.CardURL(), certFile, keyFile, pin.Pin, `@gpio/write{pin="led";value=1}`)
	var got struct {
		Card struct {
			Name     string
			Skills   []string
			Security []string
		}
		Read struct {
			ID     string
			Status struct{ State any }
		}
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	t.Logf("%s", out)
	if got.Card.Name != "garage" || !contains(got.Card.Skills, "gpio/write") || !contains(got.Card.Security, "paired") {
		t.Errorf("the card as the JavaScript client read it: %+v", got.Card)
	}
	if s := strings.ToUpper(toString(got.Read.Status.State)); got.Read.ID == "" || !(strings.Contains(s, "COMPLETED") || s == "3") {
		t.Errorf("the task as the JavaScript client read it: %s", out)
	}
	if garage.rig.Level(t, "led") != hal.High {
		t.Fatal("garage's led is not on after the JavaScript client's command")
	}
	if _, ok := find(audit(t, garage.rig.Store), "board:hall", `@gpio/write{pin="led";value=1}`); !ok {
		t.Error("garage's audit has no call by board:hall")
	}

	// Free text is a turn of garage's assistant, acting for board:hall: here
	// a stand-in for the agent that makes one call, as the model would.
	var turn turnFunc = func(ctx context.Context, who string, a tools.Auditor, text string) (string, error) {
		cmd, _ := grammar.Parse(`@gpio/read{pin="button"}`, grammar.ParseOptions{})
		rep, err := garage.rig.Runner.Run(ctx, tools.Caller{Channel: "board", User: who, Actor: tools.Model, Audit: a}, cmd)
		if err != nil {
			return "", err
		}
		return "asked " + strconv.Quote(text) + ": " + rep.Text(), nil
	}
	garage.turn.Store(&turn)
	out = runJS(t, garage.svc.CardURL(), certFile, keyFile, pin.Pin, "is the door open?")
	if !strings.Contains(string(out), `asked \"is the door open?\": button = 1`) {
		t.Errorf("the answer to free text: %s", out)
	}
	if e, ok := find(audit(t, garage.rig.Store), "board:hall", `@gpio/read{pin="button"} [call js-`); !ok || !e.OK {
		t.Errorf("garage's audit has no read by the model for board:hall under the message's call id: %+v", audit(t, garage.rig.Store))
	}
}

// runJS runs the JavaScript client once; it returns what it printed.
func runJS(t *testing.T, args ...string) []byte {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	cmd := exec.Command("node", append([]string{filepath.Join(filepath.Dir(file), "testdata", "a2aclient.mjs")}, args...)...)
	cmd.Env = append(os.Environ(), "CLAWEDGE_A2AJS_DIR="+a2ajsDir())
	out, err := cmd.Output()
	if err != nil {
		var stderr string
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = string(ee.Stderr)
		}
		t.Fatalf("the JavaScript client: %v\n%s\n%s", err, out, stderr)
	}
	return out
}

func contains(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}

func toString(v any) string {
	b, _ := json.Marshal(v)
	return strings.Trim(string(b), `"`)
}
