package config

import (
	"bytes"
	"errors"
	"reflect"
	"strings"
	"testing"
)

// fuzzEnv is the environment FuzzParse runs with: secrets to leak, a
// number, an empty value.
var fuzzEnv = map[string]string{
	"TELEGRAM_TOKEN":    tgToken,
	"ANTHROPIC_API_KEY": anthropicKey,
	"PIN":               "17",
	"EMPTY":             "",
	"HOME":              "/home/pi",
}

// FuzzParse checks, for any input: Parse does not panic; an error is an
// *Error whose every problem has a position and which never shows a
// secret that the input does not contain literally; a success can be
// written with Redacted and parsed back to the same configuration.
//
// The seed corpus is in testdata/fuzz/FuzzParse (it includes the
// README's example); run with: go test ./config -run X -fuzz FuzzParse -fuzztime 60s
func FuzzParse(f *testing.F) {
	getenv := envFrom(fuzzEnv)
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := Parse(data, "fuzz.yaml", getenv)
		if err != nil {
			var e *Error
			if !errors.As(err, &e) || len(e.List) == 0 {
				t.Fatalf("error %T without problems: %v", err, err)
			}
			for _, p := range e.List {
				if p.Line < 1 || p.Column < 1 || p.File != "fuzz.yaml" {
					t.Fatalf("problem without a position: %#v", p)
				}
			}
			msg := err.Error()
			if strings.Contains(msg, "YAML parser failed") {
				t.Fatalf("the YAML parser panicked: %v", err)
			}
			for _, s := range []string{tgToken, anthropicKey} {
				if strings.Contains(msg, s) && !strings.Contains(string(data), s) {
					t.Fatalf("error shows a secret:\n%s", msg)
				}
			}
			return
		}

		out, err := c.Redacted()
		if err != nil {
			t.Fatalf("Redacted: %v", err)
		}
		c2, err := Parse(out, "fuzz.yaml", getenv)
		if err != nil {
			t.Fatalf("Redacted output does not parse: %v\n%s", err, out)
		}
		// The round trip is exact except for the secrets, which come
		// back as the literal "[redacted]", and for values a secret was
		// scrubbed from.
		want := *c
		if want.Telegram.Token != "" {
			want.Telegram.Token = redacted
		}
		want.Models.Remote = append([]RemoteModel(nil), c.Models.Remote...)
		for i := range want.Models.Remote {
			if want.Models.Remote[i].APIKey != "" {
				want.Models.Remote[i].APIKey = redacted
			}
		}
		if secretScrubbed(c) {
			return
		}
		if !reflect.DeepEqual(&want, c2) {
			t.Fatalf("round trip changed the config\nbefore %+v\nafter  %+v\nyaml:\n%s", want, *c2, out)
		}
	})
}

// secretScrubbed reports whether Redacted removed a secret's value from a
// field other than its own (so that the round trip cannot be exact).
func secretScrubbed(c *Config) bool {
	return !bytes.Equal(c.redacted(true), c.redacted(false))
}
