package config

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/goccy/go-yaml"
)

func TestSecretPrinting(t *testing.T) {
	s := Secret(tgToken)
	if s.Reveal() != tgToken {
		t.Fatalf("Reveal = %q", s.Reveal())
	}
	outputs := map[string]string{
		"String": s.String(),
		"%v":     fmt.Sprintf("%v", s),
		"%s":     fmt.Sprintf("%s", s),
		"%q":     fmt.Sprintf("%q", s),
		"%x":     fmt.Sprintf("%x", s),
		"%#v":    fmt.Sprintf("%#v", s),
		"%d":     fmt.Sprintf("%d", s),
		"%10s":   fmt.Sprintf("%10s", s),
		"Sprint": fmt.Sprint(s),
		"struct": fmt.Sprintf("%+v %#v", Telegram{Token: s}, RemoteModel{APIKey: s}),
		"ptr":    fmt.Sprintf("%v", &Telegram{Token: s}),
	}
	for name, out := range outputs {
		if strings.Contains(out, tgToken) || strings.Contains(out, fmt.Sprintf("%x", tgToken)) {
			t.Errorf("%s leaks the secret: %s", name, out)
		}
	}
	if got := fmt.Sprint(s); got != "[redacted]" {
		t.Errorf("Sprint = %q", got)
	}
	if got := fmt.Sprintf("%q", s); got != `"[redacted]"` {
		t.Errorf("%%q = %q", got)
	}
	if got := fmt.Sprint(Secret("")); got != "" {
		t.Errorf("empty secret prints %q", got)
	}

	j, err := json.Marshal(Config{Telegram: Telegram{Token: s}, Models: Models{Remote: []RemoteModel{{APIKey: s}}}})
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(j, []byte(tgToken)) || !bytes.Contains(j, []byte(`"Token":"[redacted]"`)) {
		t.Errorf("json: %s", j)
	}

	y, err := yaml.Marshal(Telegram{Token: s})
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(y, []byte(tgToken)) || !bytes.Contains(y, []byte("[redacted]")) {
		t.Errorf("yaml: %s", y)
	}

	var logs bytes.Buffer
	for _, h := range []slog.Handler{slog.NewTextHandler(&logs, nil), slog.NewJSONHandler(&logs, nil)} {
		slog.New(h).Info("start", "token", s, "cfg", Telegram{Token: s})
	}
	if strings.Contains(logs.String(), tgToken) {
		t.Errorf("slog leaks the secret: %s", logs.String())
	}
}

func TestRedacted(t *testing.T) {
	c := mustParse(t, string(readTestdata(t, "full.yaml")))
	out, err := c.Redacted()
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{tgToken, anthropicKey} {
		if bytes.Contains(out, []byte(s)) {
			t.Errorf("Redacted shows a secret:\n%s", out)
		}
	}
	for _, want := range []string{"token: \"[redacted]\"\n", "api_key: \"[redacted]\"\n", "max_on: 10m\n", "base_url: http://192.168.1.10:11434/v1\n"} {
		if !bytes.Contains(out, []byte(want)) {
			t.Errorf("Redacted lacks %q:\n%s", want, out)
		}
	}
	// A secret expanded into another field is not shown there either.
	c = mustParse(t, "telegram:\n  token: ${TELEGRAM_TOKEN}\n  api_url: https://tg.example/x${TELEGRAM_TOKEN}\n")
	out, _ = c.Redacted()
	if bytes.Contains(out, []byte(tgToken)) || !bytes.Contains(out, []byte("api_url: \"https://tg.example/x[redacted]\"\n")) {
		t.Errorf("Redacted shows a secret in another field:\n%s", out)
	}

	// No token, no token line: "is Telegram on?" stays answerable.
	out, _ = Default().Redacted()
	if bytes.Contains(out, []byte(" token:")) {
		t.Errorf("empty token shown:\n%s", out)
	}
}

// No error message ever shows a secret's value, whatever field it ends up
// in and whatever is wrong with it.
func TestSecretsNotInErrors(t *testing.T) {
	for _, src := range []string{
		// A wrong api_url that contains the token, through expansion.
		"telegram:\n  token: ${TELEGRAM_TOKEN}\n  api_url: ftp://api.telegram.org/bot${TELEGRAM_TOKEN}\n",
		// Through expansion, without the token field being set.
		"telegram:\n  api_url: not-a-url/${TELEGRAM_TOKEN}\n",
		// A token pasted literally where it does not belong, next to
		// its proper field.
		"telegram:\n  token: ${TELEGRAM_TOKEN}\n  api_url: \"" + tgToken + "\"\n",
		// Wrong types in secret fields.
		"telegram:\n  token: [\"" + tgToken + "\"]\n",
		"telegram:\n  token: {value: \"" + tgToken + "\"}\n",
		"models:\n  remote:\n    - {name: x, kind: anthropic, model: m, api_key: [" + anthropicKey + "]}\n",
		"models:\n  remote:\n    - {name: x, kind: anthropics, model: m, api_key: ${ANTHROPIC_API_KEY}}\n",
		"models:\n  remote:\n    - {name: x, kind: openai, model: m, api_key: ${ANTHROPIC_API_KEY}, base_url: \"${ANTHROPIC_API_KEY}\"}\n",
		// An integer field fed from a secret.
		"telegram:\n  token: ${TELEGRAM_TOKEN}\n  allow_users: [${TELEGRAM_TOKEN}]\n",
		"board:\n  pins: {led: {gpio: 17, mode: ${ANTHROPIC_API_KEY}}}\nmodels: {remote: [{name: a, kind: openai, model: m, api_key: ${ANTHROPIC_API_KEY}}]}\n",
	} {
		e := parseError(t, src, testEnv)
		msg := e.Error()
		for _, s := range []string{tgToken, anthropicKey} {
			if strings.Contains(msg, s) {
				t.Errorf("error shows a secret:\n%s\nsource:\n%s", msg, src)
			}
		}
	}

	// The message about a secret field names the field.
	e := parseError(t, "telegram:\n  token: [\""+tgToken+"\"]\n", testEnv)
	if want := "test.yaml:2:10: telegram.token: expected a string, found a list"; e.Error() != want {
		t.Errorf("got %q, want %q", e.Error(), want)
	}
}
