package config

import "github.com/goccy/go-yaml/ast"

// Where the key of the secret store comes from (docs/security.md):
//
//	secrets:
//	  key: device       # device (default): data_dir/secret.key, 0600, made on first use
//	                    # passphrase: Argon2id over $CLAWEDGE_PASSPHRASE, or asked on the terminal
//
// Decoding, validation and the Redacted writer of the section are all in
// this file; ${secret:NAME} itself is in secretref.go.

// Secrets configures the secret store's key.
type Secrets struct {
	Key string `yaml:"key"`
}

var (
	secretsKeys   = []string{"key"}
	secretKeyKind = []string{"device", "passphrase"}
)

func (d *decoder) secretsSection(n ast.Node, s *Secrets) {
	d.fields(n, "secrets", secretsKeys, func(k string, v ast.Node) {
		d.str(v, "secrets.key", &s.Key)
	})
}

func (d *decoder) validateSecrets(s *Secrets) { d.oneOf("secrets.key", s.Key, secretKeyKind) }

func (c *Config) writeSecrets(w *writer) {
	w.key(0, "secrets")
	w.kv(1, "key", w.str(c.Secrets.Key))
}
