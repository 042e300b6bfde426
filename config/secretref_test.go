package config

import (
	"errors"
	"strings"
	"testing"
)

const secretCanary = "canary-5e1d-secret-token-value"

func secretsFrom(m map[string]string) SecretLookup {
	return func(name string) (string, error) {
		if v, ok := m[name]; ok {
			return v, nil
		}
		return "", errors.New("not set (clawedge secret set " + name + ")")
	}
}

func TestSecretReferences(t *testing.T) {
	src := "telegram:\n  token: ${secret:tg}\nmqtt:\n  broker: mqtt://h\n  username: u\n  password: \"${secret:mqtt}\"\n"
	c, err := ParseWithSecrets([]byte(src), "s.yaml", nil, secretsFrom(map[string]string{"tg": secretCanary, "mqtt": secretCanary + "2"}))
	if err != nil {
		t.Fatal(err)
	}
	if c.Telegram.Token.Reveal() != secretCanary || c.MQTT.Password.Reveal() != secretCanary+"2" {
		t.Fatalf("token %q password %q", c.Telegram.Token.Reveal(), c.MQTT.Password.Reveal())
	}
	out, _ := c.Redacted()
	if strings.Contains(string(out), "canary-5e1d") {
		t.Errorf("Redacted shows the secret:\n%s", out)
	}
	for _, tc := range []struct{ src, want string }{
		{"data_dir: ${secret:tg}\n", "data_dir: ${secret:tg} may only be used in a secret field"},
		{"telegram:\n  token: ${secret:nope}\n", "telegram.token: ${secret:nope}: not set (clawedge secret set nope)"},
		{"telegram:\n  token: ${secret:a b}\n", "a secret's name is 1 to 64 letters"},
		{"telegram:\n  api_url: https://x/${secret:tg}\n", "may only be used in a secret field"},
	} {
		_, err := ParseWithSecrets([]byte(tc.src), "s.yaml", nil, secretsFrom(map[string]string{"tg": secretCanary}))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: %v, want %q", tc.src, err, tc.want)
		}
		if err != nil && strings.Contains(err.Error(), "canary-5e1d") {
			t.Errorf("the error shows the secret: %v", err)
		}
	}
	if _, err := Parse([]byte("telegram:\n  token: ${secret:tg}\n"), "s.yaml", nil); err == nil || !strings.Contains(err.Error(), "no secret store") {
		t.Errorf("without a store: %v", err)
	}
}
