package main

import (
	"archive/tar"
	"bufio"
	"bytes"
	"compress/gzip"
	"fmt"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/clawedge/clawedge/grammar"
	"github.com/clawedge/clawedge/llm"
	"github.com/clawedge/clawedge/llm/openai/openaitest"
	"github.com/clawedge/clawedge/sandbox"
)

// skillBench is a board's folders for the skill tests, in a root every uid
// may enter (a root daemon's skill programs run as nobody): the data dir
// (0711, as a root board's must be for skills with programs), a signing key
// from `clawedge update keygen`, and the ds18b20 example skill copied with
// its devices folder pointed at a fake sysfs of two probes, then signed with
// `clawedge skill sign`.
type skillBench struct {
	dir, dataDir, pub, src string
}

func newSkillBench(t *testing.T) skillBench {
	t.Helper()
	if sandbox.LandlockABI() == 0 && os.Getenv("CLAWEDGE_REQUIRE_LANDLOCK") == "" {
		t.Skip("this kernel has no Landlock")
	}
	dir, err := os.MkdirTemp("", "skills-e2e")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	os.Chmod(dir, 0o755)
	b := skillBench{dir: dir, dataDir: filepath.Join(dir, "data")}
	os.Mkdir(b.dataDir, 0o711)
	os.Mkdir(filepath.Join(dir, "etc"), 0o755) // the config's folder, which no skill may touch
	fake := filepath.Join(dir, "w1")
	for id, temp := range map[string]string{"28-000000000001": "21437", "28-000000000002": "-1250"} {
		os.MkdirAll(filepath.Join(fake, id), 0o755)
		os.WriteFile(filepath.Join(fake, id, "w1_slave"), []byte("72 01 4b 46 7f ff 0e 10 57 : crc=57 YES\n72 01 4b 46 7f ff 0e 10 57 t="+temp+"\n"), 0o644)
	}
	os.MkdirAll(filepath.Join(fake, "w1_bus_master1"), 0o755) // not a probe: skipped
	b.src = filepath.Join(dir, "src", "ds18b20")
	copyTree(t, filepath.Join("..", "..", "docs", "skills", "ds18b20"), b.src)
	ty := filepath.Join(b.src, "tools.yaml")
	y, _ := os.ReadFile(ty)
	os.WriteFile(ty, []byte(strings.ReplaceAll(string(y), "/sys/bus/w1/devices", fake)), 0o644)
	runCLI(t, 0, "", "update", "keygen", "--out", filepath.Join(dir, "keys"))
	pub, _ := os.ReadFile(filepath.Join(dir, "keys", "clawedge-update.pub"))
	b.pub = strings.TrimSpace(string(pub))
	out := runCLI(t, 0, "", "skill", "sign", b.src, "--key", filepath.Join(dir, "keys", "clawedge-update.key"))
	if !strings.Contains(out, "signed "+b.src+" with "+b.pub) {
		t.Fatalf("skill sign: %s", out)
	}
	return b
}

// config writes the board's config with extra appended and returns its path.
func (b skillBench) config(t *testing.T, extra string) string {
	t.Helper()
	p := filepath.Join(b.dir, "etc", "clawedge.yaml")
	body := fmt.Sprintf("data_dir: %s\nconsole: {stdin: false}\nskills: {trust: [%q]}\n%s", b.dataDir, b.pub, extra)
	if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func copyTree(t *testing.T, from, to string) {
	t.Helper()
	err := filepath.WalkDir(from, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(from, p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(to, rel), 0o755)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		fi, _ := d.Info()
		return os.WriteFile(filepath.Join(to, rel), data, fi.Mode().Perm())
	})
	if err != nil {
		t.Fatal(err)
	}
}

// A signed skill with a script tool, from install to tampering: what it
// declares is shown before it installs; its tool is listed by `clawedge
// tools`, denied until a rule names it, then callable as @SKILL/NAME; a
// value outside its enum is refused by the call path and cannot be written
// under the constraint; one byte changed after install refuses the skill at
// the next load, the file named.
func TestSkillSignedScriptTool(t *testing.T) {
	b := newSkillBench(t)
	cfg := b.config(t, "")
	out := runCLI(t, 0, "y\nn\n", "skill", "install", b.src, "--config", cfg)
	for _, want := range []string{"skill ds18b20 from " + b.src, "signed by " + b.pub + " (trusted)", "tool ds18b20/read_temp: Read a DS18B20",
		"param sensor string, required, one of indoor | outdoor", "runs    scripts/read_temp.sh " + filepath.Join(b.dir, "w1") + " {sensor}",
		"reads   its own folder, " + filepath.Join(b.dir, "w1") + ", /sys/devices/w1_bus_master1", "writes  nothing", "network none (no sockets)",
		"install it? [y/N]", "installed ds18b20 in " + filepath.Join(b.dataDir, "skills", "ds18b20"),
		`its tools are denied until a rule names them, such as policy.tools "ds18b20/*": allow`} {
		if !strings.Contains(out, want) {
			t.Errorf("install did not say %q:\n%s", want, out)
		}
	}
	// A tool that would read the config's folder is refused, whoever signed it.
	greedy := filepath.Join(b.dir, "greedy", "ds18b20")
	copyTree(t, b.src, greedy)
	y, _ := os.ReadFile(filepath.Join(greedy, "tools.yaml"))
	os.WriteFile(filepath.Join(greedy, "tools.yaml"), []byte(strings.Replace(string(y), "/w1_bus_master1]", "/w1_bus_master1, "+filepath.Join(b.dir, "etc")+"]", 1)), 0o644)
	runCLI(t, 0, "", "skill", "sign", greedy, "--key", filepath.Join(b.dir, "keys", "clawedge-update.key"))
	if out := runCLIAny(t, "", "skill", "install", greedy, "--yes", "--config", cfg); !strings.Contains(out, "tool read_temp would read "+filepath.Join(b.dir, "etc")) {
		t.Fatalf("a tool reading the config's folder:\n%s", out)
	}
	if out := runCLI(t, 0, "", "skill", "show", "ds18b20", "--config", cfg); !strings.Contains(out, "tool ds18b20/read_temp") || !strings.Contains(out, "# Skill ds18b20") {
		t.Fatalf("skill show:\n%s", out)
	}
	if out := runCLI(t, 0, "", "tools", "--config", cfg); !strings.Contains(out, "ds18b20/read_temp") || !strings.Contains(out, "skill/read") {
		t.Fatalf("clawedge tools:\n%s", out)
	}
	read := `@ds18b20/read_temp{sensor="indoor"}`
	// Without a rule, the model and programs are denied it; a person's own
	// typed command is theirs, as for any tool (docs/security.md).
	for _, as := range []string{"model:console", "mcp:claude", "mqtt"} {
		if out := runCLI(t, 0, "", "policy", "explain", "ds18b20/read_temp", "--as", as, "--config", cfg); !strings.Contains(out, `the tools of skill ds18b20 are denied unless a rule names them`) {
			t.Fatalf("%s without a rule:\n%s", as, out)
		}
	}

	cfg = b.config(t, "policy: {tools: {\"ds18b20/read_temp\": allow}}\n")
	if out := runCLI(t, 0, "", "policy", "explain", "ds18b20/read_temp", "--as", "model:console", "--config", cfg); !strings.Contains(out, `policy.tools "ds18b20/read_temp": allow`) {
		t.Fatalf("with a rule:\n%s", out)
	}
	if out := runCLI(t, 0, "", "exec", "--config", cfg, read); strings.TrimSpace(out) != "21.437" {
		t.Fatalf("%s: %q", read, out)
	}
	if out := runCLI(t, 0, "", "exec", "--config", cfg, `@ds18b20/read_temp{sensor="outdoor"}`); strings.TrimSpace(out) != "-1.250" {
		t.Fatalf("outdoor: %q", out)
	}
	bad := filepath.Join(b.dir, "w1", "28-000000000001", "w1_slave")
	good, _ := os.ReadFile(bad)
	os.WriteFile(bad, []byte("72 01 4b 46 7f ff 0e 10 57 : crc=58 NO\n72 01 4b 46 7f ff 0e 10 57 t=85000\n"), 0o644)
	if out := runCLIAny(t, "", "exec", "--config", cfg, read); !strings.Contains(out, "CRC check failed on 28-000000000001") || strings.Contains(out, "85.000") {
		t.Fatalf("a bad read:\n%s", out)
	}
	os.WriteFile(bad, good, 0o644)
	if out := runCLIAny(t, "", "exec", "--config", cfg, `@ds18b20/read_temp{sensor="../../etc"}`); !strings.Contains(out, "indoor") || strings.Contains(out, "21.437") {
		t.Fatalf("a value outside the enum:\n%s", out)
	}

	// Under the constraint, a value outside the enum cannot be written at all.
	reg, err := loadRegistry(&globalFlags{config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	tool, err := reg.Lookup("ds18b20/read_temp")
	if err != nil {
		t.Fatal(err)
	}
	c, err := grammar.Compile(grammar.Spec{Form: grammar.FormCommand, Mode: grammar.ModeCalls, Tools: []grammar.ToolSpec{tool.Spec()}})
	if err != nil {
		t.Fatal(err)
	}
	if !automatonAccepts(c, read) || automatonAlive(c, `@ds18b20/read_temp{sensor="g`) || automatonAlive(c, `@ds18b20/read_temp{sensor="indoor;`) {
		t.Fatalf("the constraint does not hold the enum")
	}

	if out := runCLIAny(t, "", "doctor", "--config", cfg); !strings.Contains(out, "[ok  ] skill ds18b20: signed by "+b.pub+", 1 tool(s), denied to the model and programs until a policy rule names them") {
		t.Errorf("doctor:\n%s", out)
	}
	audit := runCLI(t, 0, "", "audit", "--config", cfg)
	if !strings.Contains(audit, read) {
		t.Errorf("the call is not in the audit trail:\n%s", audit)
	}

	// One byte changed after install: refused at the next load, the file named.
	md := filepath.Join(b.dataDir, "skills", "ds18b20", "SKILL.md")
	data, _ := os.ReadFile(md)
	data[len(data)-3] ^= 0x20
	os.WriteFile(md, data, 0o644)
	if out := runCLI(t, 0, "", "skill", "list", "--config", cfg); !strings.Contains(out, "REFUSED skill ds18b20: the skill's files are not what was signed or installed: SKILL.md changed") {
		t.Fatalf("skill list after tampering:\n%s", out)
	}
	if out := runCLIAny(t, "", "doctor", "--config", cfg); !strings.Contains(out, "[FAIL] skill ds18b20: skill ds18b20: the skill's files are not what was signed or installed: SKILL.md changed") ||
		!strings.Contains(out, "fix: reinstall it from a copy you trust (clawedge skill rm ds18b20") {
		t.Errorf("doctor after tampering:\n%s", out)
	}
	if out := runCLI(t, 0, "", "tools", "--config", cfg); strings.Contains(out, "ds18b20/") {
		t.Fatalf("a tampered skill's tool is listed:\n%s", out)
	}
	if out := runCLIAny(t, "", "exec", "--config", cfg, read); strings.Contains(out, "21.437") {
		t.Fatalf("a tampered skill's tool ran:\n%s", out)
	}
	if out := runCLI(t, 0, "", "skill", "rm", "ds18b20", "--config", cfg); !strings.Contains(out, "removed ds18b20") {
		t.Fatalf("rm: %s", out)
	}
	if entries, _ := os.ReadDir(filepath.Join(b.dataDir, "skills")); len(entries) != 0 {
		t.Fatalf("left after rm: %v", entries)
	}
	// rm is the call skill/remove, as the dashboard's Remove: in the audit.
	if out := runCLI(t, 0, "", "audit", "--config", cfg, "-n", "20"); !strings.Contains(out, `@skill/remove{name="ds18b20"} -> ok`) {
		t.Errorf("rm is not in the audit:\n%s", out)
	}
}

// Unsigned and wrongly signed skills are refused by the CLI, with the
// reason, and nothing is installed; with skills.allow_unsigned the owner
// must still say yes.
func TestSkillInstallRefusedCLI(t *testing.T) {
	b := newSkillBench(t)
	cfg := b.config(t, "")
	os.Remove(filepath.Join(b.src, ".clawedge-signature"))
	if out := runCLIAny(t, "", "skill", "install", b.src, "--yes", "--config", cfg); !strings.Contains(out, "the skill is not signed") || !strings.Contains(out, "allow_unsigned") {
		t.Fatalf("unsigned:\n%s", out)
	}
	cfg = b.config(t, "skills: {allow_unsigned: true}\n")
	os.WriteFile(cfg, []byte(fmt.Sprintf("data_dir: %s\nconsole: {stdin: false}\nskills: {allow_unsigned: true}\n", b.dataDir)), 0o600)
	if out := runCLIAny(t, "n\n", "skill", "install", b.src, "--config", cfg); !strings.Contains(out, "UNSIGNED") || !strings.Contains(out, "declined") {
		t.Fatalf("unsigned, allowed, declined:\n%s", out)
	}
	if entries, _ := os.ReadDir(filepath.Join(b.dataDir, "skills")); len(entries) != 0 {
		t.Fatalf("left after refusals: %v", entries)
	}
}

// A scripted model reads the skill, then calls its tool (granted at
// install); the skill's index is in the system prompt and the tool is
// offered with its enum.
func TestSkillScriptedModel(t *testing.T) {
	b := newSkillBench(t)
	srv := openaitest.New(t)
	srv.Push(openaitest.ToolCall("skill/read", `{"name": "ds18b20"}`), openaitest.ToolCall("ds18b20/read_temp", `{"sensor": "outdoor"}`),
		openaitest.Text("It is -1.3 °C outside."))
	cfg := b.config(t, remoteConfig(srv, ""))
	runCLI(t, 0, "", "skill", "install", b.src, "--yes", "--grant", "--config", cfg)
	out := runCLI(t, 0, "how cold is it outside?\n", "chat", "--config", cfg)
	if !strings.Contains(out, "It is -1.3 °C outside.") {
		t.Fatalf("chat: %q", out)
	}
	reqs := srv.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d requests, want 3", len(reqs))
	}
	if sys := reqs[0].Body.Messages[0]; sys.Role != "system" || sys.Content == nil || !strings.Contains(*sys.Content, "- ds18b20: Read DS18B20 1-Wire temperature probes") ||
		strings.Contains(*sys.Content, "1-Wire bus (GPIO4") {
		t.Errorf("the system prompt does not hold the index alone: %v", sys.Content)
	}
	offered := false
	for _, tl := range reqs[0].Body.Tools {
		if tl.Function.Name == llm.WireName("ds18b20/read_temp") {
			offered = strings.Contains(string(tl.Function.Parameters), `"enum":["indoor","outdoor"]`)
		}
	}
	if !offered {
		t.Errorf("ds18b20/read_temp not offered with its enum: %v", reqs[0].ToolNames())
	}
	if res := toolResults(reqs[1]); len(res) != 1 || !strings.Contains(res[0], "# Skill ds18b20") || !strings.Contains(res[0], "1-Wire bus") {
		t.Errorf("skill/read gave the model %q", res)
	}
	if res := toolResults(reqs[2]); len(res) != 1 || !strings.Contains(res[0], "-1.250") {
		t.Errorf("the tool gave the model %q", res)
	}
}

// Without a rule or a grant, the model is not offered a skill's tool, and
// its call is refused before anything runs.
func TestSkillModelDenied(t *testing.T) {
	b := newSkillBench(t)
	srv := openaitest.New(t)
	srv.Push(openaitest.ToolCall("ds18b20/read_temp", `{"sensor": "indoor"}`), openaitest.Text("I may not read it."))
	cfg := b.config(t, remoteConfig(srv, ""))
	runCLI(t, 0, "", "skill", "install", b.src, "--yes", "--config", cfg)
	if out := runCLI(t, 0, "how warm is it?\n", "chat", "--config", cfg); !strings.Contains(out, "I may not read it.") {
		t.Fatalf("chat: %q", out)
	}
	reqs := srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests, want 2", len(reqs))
	}
	if names := strings.Join(reqs[0].ToolNames(), " "); strings.Contains(names, "ds18b20") || !strings.Contains(names, llm.WireName("skill/read")) {
		t.Errorf("offered: %s", names)
	}
	if res := toolResults(reqs[1]); len(res) != 1 || !strings.HasPrefix(res[0], "error: ") || strings.Contains(res[0], "21.437") {
		t.Errorf("the denied call answered %q", res)
	}
}

// The plant-watering example: an instruction-only skill that drives the
// built-in gpio tools. Every command its instructions give is a valid call
// on a board configured as they say, and the routine runs on the simulated
// board.
func TestSkillPlantWatering(t *testing.T) {
	b := newSkillBench(t)
	pins := "board:\n  pins:\n    soil: {gpio: 23, mode: in, pull: up, edge: both}\n    pump: {gpio: 24, mode: out, safe: low, max_on: 30s}\n"
	p := filepath.Join(b.dir, "etc", "clawedge.yaml")
	os.WriteFile(p, []byte(fmt.Sprintf("data_dir: %s\nconsole: {stdin: false}\nskills: {allow_unsigned: true}\n%s", b.dataDir, pins)), 0o600)
	src, _ := filepath.Abs(filepath.Join("..", "..", "docs", "skills", "plant-watering"))
	if out := runCLI(t, 0, "", "skill", "install", src, "--yes", "--config", p); !strings.Contains(out, "no tools: instructions only") {
		t.Fatalf("install:\n%s", out)
	}
	out := runCLI(t, 0, "", "exec", "--config", p, `@skill/read{name="plant-watering"}`)
	if !strings.Contains(out, "# Watering the plant") {
		t.Fatalf("skill/read:\n%s", out)
	}
	md, _ := os.ReadFile(filepath.Join(src, "SKILL.md"))
	var calls []string
	sc := bufio.NewScanner(strings.NewReader(string(md)))
	for sc.Scan() {
		if l := strings.TrimSpace(sc.Text()); strings.HasPrefix(l, "@") {
			calls = append(calls, l)
		}
	}
	if len(calls) != 4 {
		t.Fatalf("found %d commands in the instructions, want 4: %q", len(calls), calls)
	}
	for _, c := range calls {
		runCLI(t, 0, "", "parse", "--config", p, c)
	}
	if out := runCLI(t, 0, "", "exec", "--config", p, `@gpio/read{pin="soil"}`); !strings.Contains(out, "soil = ") {
		t.Fatalf("read the soil: %s", out)
	}
	if out := runCLI(t, 0, "", "exec", "--config", p, `@gpio/pulse{pin="pump";ms=10}`); strings.Contains(out, "error") {
		t.Fatalf("pulse the pump: %s", out)
	}
}

func automatonAccepts(a grammar.Automaton, s string) bool {
	st := a.Start()
	for i := 0; i < len(s); i++ {
		if st = a.Next(st, s[i]); st == grammar.Dead {
			return false
		}
	}
	return a.Accepting(st)
}

func automatonAlive(a grammar.Automaton, s string) bool {
	st := a.Start()
	for i := 0; i < len(s) && st != grammar.Dead; i++ {
		st = a.Next(st, s[i])
	}
	return st != grammar.Dead
}

// install URL: the archive is fetched from that URL only, verified and
// installed like a folder; a tampered archive is refused and nothing stays.
func TestSkillInstallURL(t *testing.T) {
	b := newSkillBench(t)
	cfg := b.config(t, "")
	good := tarGz(t, filepath.Dir(b.src), "ds18b20", nil)
	bad := tarGz(t, filepath.Dir(b.src), "ds18b20", func(name string, data []byte) []byte {
		if name == "ds18b20/scripts/read_temp.sh" {
			return append(data, []byte("cat /etc/shadow\n")...)
		}
		return data
	})
	var mu sync.Mutex
	var gets []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		gets = append(gets, r.URL.Path)
		mu.Unlock()
		switch r.URL.Path {
		case "/ds18b20.tar.gz":
			w.Write(good)
		case "/evil.tar.gz":
			w.Write(bad)
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	if out := runCLIAny(t, "", "skill", "install", srv.URL+"/evil.tar.gz", "--yes", "--config", cfg); !strings.Contains(out, "scripts/read_temp.sh changed") {
		t.Fatalf("a tampered archive:\n%s", out)
	}
	if entries, _ := os.ReadDir(filepath.Join(b.dataDir, "skills")); len(entries) != 0 {
		t.Fatalf("left after a refusal: %v", entries)
	}
	if out := runCLI(t, 0, "", "skill", "install", srv.URL+"/ds18b20.tar.gz", "--yes", "--config", cfg); !strings.Contains(out, "installed ds18b20") {
		t.Fatalf("install URL:\n%s", out)
	}
	mu.Lock()
	defer mu.Unlock()
	if strings.Join(gets, " ") != "/evil.tar.gz /ds18b20.tar.gz" {
		t.Errorf("requests: %v, want only the two URLs given", gets)
	}
	if out := runCLI(t, 0, "", "skill", "list", "--config", cfg); !strings.Contains(out, "ds18b20  1") || strings.Contains(out, "REFUSED") {
		t.Fatalf("list:\n%s", out)
	}
}

// tarGz packs the folder top of root, each file's content passed through edit.
func tarGz(t *testing.T, root, top string, edit func(name string, data []byte) []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	err := filepath.WalkDir(filepath.Join(root, top), func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if edit != nil {
			data = edit(filepath.ToSlash(rel), data)
		}
		fi, _ := d.Info()
		if err := tw.WriteHeader(&tar.Header{Name: filepath.ToSlash(rel), Typeflag: tar.TypeReg, Size: int64(len(data)), Mode: int64(fi.Mode().Perm())}); err != nil {
			return err
		}
		_, err = tw.Write(data)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	tw.Close()
	gz.Close()
	return buf.Bytes()
}
