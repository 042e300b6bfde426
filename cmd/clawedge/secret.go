package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/sys/unix"

	"github.com/clawedge/clawedge/config"
	"github.com/clawedge/clawedge/store"
)

// PassphraseEnv holds the secret store's passphrase for a daemon that has no
// terminal to ask on (secrets.key: passphrase).
const PassphraseEnv = "CLAWEDGE_PASSPHRASE"

func newSecretCmd(g *globalFlags) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "secret",
		Short: "Set, list and remove the secrets that ${secret:NAME} in the config reads (encrypted at rest)",
	}
	set := &cobra.Command{
		Use:   "set NAME",
		Short: "Set a secret; the value is read from stdin (asked without echo on a terminal), never from the command line",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := store.CheckSecretName(args[0]); err != nil {
				return &exitError{code: 2, err: err}
			}
			value, err := readSecretValue(cmd.InOrStdin(), cmd.ErrOrStderr(), args[0])
			if err != nil {
				return err
			}
			return withVault(g, true, func(v *store.Vault) error {
				if err := v.Set(args[0], value, time.Now()); err != nil {
					return err
				}
				fmt.Fprintf(cmd.OutOrStdout(), "secret %s set\n", args[0])
				return nil
			})
		},
	}
	list := &cobra.Command{
		Use:   "list",
		Short: "List the secrets' names and dates (never their values)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return withVault(g, false, func(v *store.Vault) error {
				infos, err := v.List()
				for _, i := range infos {
					fmt.Fprintf(cmd.OutOrStdout(), "%-24s created %s  updated %s\n", i.Name,
						i.Created.Format(time.RFC3339), i.Updated.Format(time.RFC3339))
				}
				return err
			})
		},
	}
	rm := &cobra.Command{
		Use:   "rm NAME",
		Short: "Remove a secret",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return withVault(g, false, func(v *store.Vault) error {
				found, err := v.Remove(args[0])
				if err == nil && !found {
					err = fmt.Errorf("secret %s: %w", args[0], store.ErrNoSecret)
				}
				if err == nil {
					fmt.Fprintf(cmd.OutOrStdout(), "secret %s removed\n", args[0])
				}
				return err
			})
		},
	}
	cmd.AddCommand(set, list, rm)
	return cmd
}

// withVault opens the store of the config read-write and its vault (creating
// the device key when create is set).
func withVault(g *globalFlags, create bool, fn func(*store.Vault) error) error {
	cfg, err := loadConfigFile(g, withPlaceholders)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(cfg.DataDir, 0o700); err != nil {
		return err
	}
	st, err := store.Open(cfg.DataDir, store.Options{Timeout: time.Second})
	if err != nil {
		if errors.Is(err, store.ErrInUse) {
			return fmt.Errorf("%w: stop the daemon to change secrets (systemctl stop clawedge)", err)
		}
		return err
	}
	defer st.Close()
	v, err := openVault(cfg, st, create)
	if err != nil {
		return err
	}
	return fn(v)
}

// openVault derives the key the config names and opens the store's vault.
func openVault(cfg *config.Config, st *store.Store, create bool) (*store.Vault, error) {
	var key []byte
	var err error
	if cfg.Secrets.Key == "passphrase" {
		var pass []byte
		if pass, err = readPassphrase(); err == nil {
			key, err = store.PassphraseKey(st, pass)
		}
	} else {
		key, err = store.DeviceKey(cfg.DataDir, create)
	}
	if err != nil {
		return nil, err
	}
	return store.OpenVault(st, key)
}

// secretsFrom is the lookup config loading gets: it opens the store read-only,
// once, on the first ${secret:NAME}, and closes it when loading is done.
type secretsFrom struct {
	cfg   *config.Config
	st    *store.Store
	vault *store.Vault
	err   error
}

func (s *secretsFrom) lookup(name string) (string, error) {
	if s.vault == nil && s.err == nil {
		s.st, s.err = store.Open(s.cfg.DataDir, store.Options{ReadOnly: true, Timeout: time.Second})
		if errors.Is(s.err, store.ErrNotExist) {
			s.err = fmt.Errorf("no secret is set yet (clawedge secret set %s)", name)
		}
		if s.err == nil {
			s.vault, s.err = openVault(s.cfg, s.st, false)
		}
	}
	if s.err != nil {
		return "", s.err
	}
	return s.vault.Get(name)
}

func (s *secretsFrom) close() {
	if s.st != nil {
		s.st.Close()
	}
}

// loadWithSecrets loads path twice when it reads secrets: first to learn
// data_dir (each ${secret:NAME} a placeholder), then with the store's values.
func loadWithSecrets(path string) (*config.Config, error) {
	refs := false
	cfg, err := config.LoadWithSecrets(path, func(string) (string, error) { refs = true; return secretPlaceholder, nil })
	if err != nil || !refs {
		return cfg, err
	}
	s := &secretsFrom{cfg: cfg}
	defer s.close()
	full, err := config.LoadWithSecrets(path, s.lookup)
	if err != nil && errors.Is(s.err, store.ErrInUse) {
		// The running daemon holds the store, and the secrets with it. The
		// commands that run beside it (status, exec, chat, audit, policy) ask
		// it or need no secret, so they get the placeholders.
		return cfg, nil
	}
	return full, err
}

// secretPlaceholder stands for every secret while the real values cannot be
// read. It passes the checks a real value must (length, characters), so that
// learning data_dir does not fail on them.
const secretPlaceholder = "clawedge-secret-placeholder-0000"

// withPlaceholders loads path with every ${secret:NAME} a placeholder: secret
// set must work before the secret it sets exists.
func withPlaceholders(path string) (*config.Config, error) {
	return config.LoadWithSecrets(path, func(string) (string, error) { return secretPlaceholder, nil })
}

// readSecretValue reads the value: asked without echo on a terminal, else
// all of stdin without its final newline.
func readSecretValue(in io.Reader, prompt io.Writer, name string) (string, error) {
	if f, ok := in.(*os.File); ok {
		if t, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS); err == nil {
			fmt.Fprintf(prompt, "value of %s (not shown): ", name)
			noEcho := *t
			noEcho.Lflag &^= unix.ECHO
			unix.IoctlSetTermios(int(f.Fd()), unix.TCSETS, &noEcho)
			line, err := bufio.NewReader(f).ReadString('\n')
			unix.IoctlSetTermios(int(f.Fd()), unix.TCSETS, t)
			fmt.Fprintln(prompt)
			if err != nil && line == "" {
				return "", fmt.Errorf("reading the value: %w", err)
			}
			return strings.TrimRight(line, "\r\n"), nil
		}
	}
	data, err := io.ReadAll(io.LimitReader(in, 64<<10))
	if err != nil {
		return "", err
	}
	v := strings.TrimSuffix(strings.TrimSuffix(string(data), "\n"), "\r")
	if v == "" {
		return "", errors.New("empty value: give it on stdin (printf %s \"$VALUE\" | clawedge secret set NAME)")
	}
	return v, nil
}

// readPassphrase reads $CLAWEDGE_PASSPHRASE, else asks on the terminal.
func readPassphrase() ([]byte, error) {
	if p, ok := os.LookupEnv(PassphraseEnv); ok {
		return []byte(p), nil
	}
	tty, err := os.OpenFile("/dev/tty", os.O_RDWR, 0)
	if err != nil {
		return nil, fmt.Errorf("secrets.key is passphrase: set %s or run on a terminal", PassphraseEnv)
	}
	defer tty.Close()
	p, err := readSecretValue(tty, tty, "the secrets passphrase")
	return []byte(p), err
}
