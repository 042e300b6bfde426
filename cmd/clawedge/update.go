package main

import (
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/clawedge/clawedge/internal/termsafe"
	"github.com/clawedge/clawedge/localmodel/modelfiles"
	"github.com/clawedge/clawedge/update"
)

// sourceEpoch is the build's commit time (Unix seconds), stamped with
// -ldflags "-X main.sourceEpoch=..." as update bundles carry it: it orders
// two versions that are bare commit ids.
var sourceEpoch = "0"

// ImagePubKey is where the SD image keeps the update key it was built to
// trust (make image UPDATE_PUBKEY=FILE).
const ImagePubKey = "/etc/clawedge/update.pub"

// boardFile names the board an image was built for; bundles for another
// are refused.
const boardFile = "/etc/clawedge/board"

// updateFlags say where this board's slots and boot partition are: the SD
// image's layout by default, anything (files, a folder) in tests.
type updateFlags struct {
	boot, slotA, slotB, rootA, rootB, cmdline, bootID, board, mode string
	keys                                                           []string
	force, noReboot                                                bool
}

// defaultUpdateFlags is the SD image's layout: what clawedge run settles
// and commits at boot, and what the update commands default to.
func defaultUpdateFlags() updateFlags {
	a, b := update.ImageSlots["a"], update.ImageSlots["b"]
	return updateFlags{boot: update.ImageBoot, slotA: a.Device, slotB: b.Device, rootA: a.Root, rootB: b.Root,
		cmdline: "/proc/cmdline", bootID: update.ImageBootID, mode: string(update.ModeTryboot)}
}

func (f *updateFlags) add(cmd *cobra.Command) {
	d := defaultUpdateFlags()
	fl := cmd.Flags()
	fl.StringVar(&f.boot, "boot", d.boot, "the mounted boot (FAT) partition")
	fl.StringVar(&f.slotA, "slot-a", d.slotA, "slot A's partition (or a file standing in for it)")
	fl.StringVar(&f.slotB, "slot-b", d.slotB, "slot B's partition (or a file standing in for it)")
	fl.StringVar(&f.rootA, "root-a", d.rootA, "the kernel's root= for slot A")
	fl.StringVar(&f.rootB, "root-b", d.rootB, "the kernel's root= for slot B")
	fl.StringVar(&f.cmdline, "cmdline", d.cmdline, "the running kernel's command line (its clawedge.slot= names the running slot)")
	fl.StringVar(&f.bootID, "boot-id", d.bootID, "a file naming this boot (settling waits for the next boot)")
	fl.StringVar(&f.board, "board", "", "this board's name (default: "+boardFile+", else rpi-"+runtime.GOARCH+")")
	fl.StringVar(&f.mode, "mode", d.mode, "how the new slot is tried: tryboot, or fallback (firmware without tryboot)")
	fl.StringArrayVar(&f.keys, "key", nil, "a trusted public key file (repeatable); "+ImagePubKey+" and the config's update.key are trusted too")
}

// updater builds the updater for this board from the flags and the config.
// Settling and committing need no keys; applying does.
func (f *updateFlags) updater(g *globalFlags, needKeys bool) (*update.Updater, error) {
	var keys []ed25519.PublicKey
	if needKeys {
		var err error
		if keys, err = trustedKeys(g, f.keys); err != nil {
			return nil, err
		}
	}
	cmdline, err := os.ReadFile(f.cmdline)
	if err != nil {
		return nil, err
	}
	cur, _ := update.RunningSlot(string(cmdline)) // Target says what is missing
	board := f.board
	if board == "" {
		board = "rpi-" + runtime.GOARCH
		if b, err := os.ReadFile(boardFile); err == nil {
			board = strings.TrimSpace(string(b))
		}
	}
	mode := update.Mode(f.mode)
	if mode != update.ModeTryboot && mode != update.ModeFallback {
		return nil, &exitError{code: 2, err: fmt.Errorf("--mode %q: want tryboot or fallback", f.mode)}
	}
	u := &update.Updater{Keys: keys, Board: board, Current: cur, Mode: mode, Boot: update.DirFS(f.boot),
		Slots: map[string]update.Slot{"a": {Device: f.slotA, Root: f.rootA}, "b": {Device: f.slotB, Root: f.rootB}}}
	u.Running = update.Version{Name: version}
	u.Running.Epoch, _ = strconv.ParseInt(sourceEpoch, 10, 64)
	if id, err := os.ReadFile(f.bootID); err == nil {
		u.BootID = strings.TrimSpace(string(id))
	}
	return u, nil
}

// trustedKeys are the --key files, the image's key and the config's
// update.key; at least one is needed.
func trustedKeys(g *globalFlags, files []string) ([]ed25519.PublicKey, error) {
	var keys []ed25519.PublicKey
	for _, p := range files {
		k, err := update.ReadPublicKey(p)
		if err != nil {
			return nil, err
		}
		keys = append(keys, k)
	}
	if k, err := update.ReadPublicKey(ImagePubKey); err == nil {
		keys = append(keys, k)
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	if s := configUpdateKey(g); s != "" {
		k, err := update.ParseKey(s)
		if err != nil {
			return nil, fmt.Errorf("config update.key: %w", err)
		}
		keys = append(keys, k)
	}
	if len(keys) == 0 {
		return nil, fmt.Errorf("%w: pass --key FILE, or set update.key in the config", update.ErrNoKeys)
	}
	return keys, nil
}

func newUpdateCmd(g *globalFlags) *cobra.Command {
	var f updateFlags
	var check bool
	cmd := &cobra.Command{
		Use:   "update URL|FILE",
		Short: "Install a signed update bundle into the inactive slot and try it once (A/B, rolls back by itself)",
		Long: `Installs clawedge-<version>.update (a file, or an http(s) URL) into the slot that
is not running, reads it back, and reboots into it once (the Pi firmware's
tryboot). The new slot is kept only if clawedge comes up healthy on it; else
the next boot is the old slot, which reports the failed attempt.

Nothing is written unless the whole bundle verifies first: its ed25519
signature against a trusted key, every file's size and sha256, this board,
a newer version (--force installs an older or the same one). With --check,
only that is done and what would change is shown. See docs/update.md.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			u, err := f.updater(g, true)
			if err != nil {
				return err
			}
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			out, stderr := cmd.OutOrStdout(), cmd.ErrOrStderr()
			progress := newPhaseProgress(stderr)
			u.Progress = progress.update
			open := bundleOpener(args[0])
			if check {
				p, err := u.Check(ctx, open, f.force)
				progress.finish()
				printPlan(out, u, p, err)
				return err
			}
			var p update.Plan
			err = update.WithWritable(f.boot, func() (err error) { p, err = u.Apply(ctx, open, f.force); return err })
			progress.finish()
			if err != nil {
				return err
			}
			fmt.Fprintf(out, "slot %s now holds %s (verified and read back); the next boot tries it once\n", p.Slot, p.Manifest.Version)
			if f.noReboot {
				fmt.Fprintf(out, "not rebooting (--no-reboot): reboot with the argument %q to try it\n", u.Mode.RebootArg())
				return nil
			}
			fmt.Fprintln(out, "rebooting")
			return update.Reboot(u.Mode.RebootArg())
		},
	}
	f.add(cmd)
	cmd.Flags().BoolVar(&f.force, "force", false, "install an older or the same version")
	cmd.Flags().BoolVar(&check, "check", false, "verify the bundle and say what would change; write nothing")
	cmd.Flags().BoolVar(&f.noReboot, "no-reboot", false, "arm the try boot but do not reboot")
	cmd.AddCommand(newUpdateKeygenCmd(), newUpdateStatusCmd(g), newUpdateBundleCmd(), newUpdateSettleCmd(g), newUpdateCommitCmd(g))
	return cmd
}

func printPlan(w io.Writer, u *update.Updater, p update.Plan, err error) {
	m := p.Manifest
	if m.Version == "" {
		return // refused before the manifest could be trusted
	}
	fmt.Fprintf(w, "bundle %s for %s: signature and %d files verified (%s)\n", m.Version, m.Board, len(m.Files), modelfiles.FormatBytes(m.Total()))
	for _, fe := range m.Files {
		fmt.Fprintf(w, "  %-6s %-28s %10s  sha256 %s\n", fe.Target, fe.Name, modelfiles.FormatBytes(fe.Size), fe.SHA256[:16])
	}
	st, _ := update.LoadState(u.Boot)
	old := "unknown"
	if s, ok := st.Slots[p.Slot]; ok {
		old = s.Version
	}
	order := "newer than"
	switch {
	case !p.Ordered:
		order = "not comparable with"
	case p.Newer < 0:
		order = "older than"
	case p.Newer == 0:
		order = "the same as"
	}
	fmt.Fprintf(w, "running %s on slot %s; %s is %s it\n", u.Running, u.Current, m.Version, order)
	if err == nil {
		fmt.Fprintf(w, "would write slot %s (%s, now %s) and try it once\n", p.Slot, u.Slots[p.Slot].Device, old)
	}
}

// phaseProgress shows one progress line per phase (verifying, writing,
// reading back).
type phaseProgress struct {
	w     io.Writer
	phase string
	bar   *modelfiles.Progress
}

func newPhaseProgress(w io.Writer) *phaseProgress { return &phaseProgress{w: w} }

func (p *phaseProgress) update(phase string, done, total int64) {
	if phase != p.phase {
		p.finish()
		p.phase, p.bar = phase, modelfiles.NewProgress(p.w, phase, termsafe.IsTerminal(p.w))
	}
	p.bar.Update(done, total)
}

func (p *phaseProgress) finish() {
	if p.bar != nil {
		p.bar.Finish()
	}
}

func newUpdateKeygenCmd() *cobra.Command {
	var out string
	cmd := &cobra.Command{
		Use:   "keygen --out DIR",
		Short: "Write an ed25519 key pair for signing update bundles",
		Long: `Writes DIR/` + update.PrivateKeyFile + ` (the private key, mode 0600: keep it off the
board and out of git; it signs bundles: make update-bundle UPDATE_KEY=FILE) and
DIR/` + update.PublicKeyFile + ` (make image UPDATE_PUBKEY=FILE, or its line as the
config's update.key). An existing private key is never replaced.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			priv, pub, err := update.KeyGen(out)
			if err != nil {
				return err
			}
			k, err := update.ReadPublicKey(pub)
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "private key: %s (keep it secret, never commit it)\npublic key:  %s\nupdate.key:  %q\n", priv, pub, update.FormatKey(k))
			return nil
		},
	}
	cmd.Flags().StringVar(&out, "out", "", "folder for the key pair")
	cmd.MarkFlagRequired("out")
	return cmd
}

func newUpdateStatusCmd(g *globalFlags) *cobra.Command {
	var f updateFlags
	cmd := &cobra.Command{
		Use:   "status",
		Short: "Show both slots, their versions, the default and the last update attempt",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			u, err := f.updater(g, false)
			if err != nil {
				return err
			}
			return writeUpdateStatus(cmd.OutOrStdout(), u)
		},
	}
	f.add(cmd)
	return cmd
}

// writeUpdateStatus shows both slots (version, device, running, default,
// armed) and the last attempt.
func writeUpdateStatus(w io.Writer, u *update.Updater) error {
	cur := u.Current
	s, err := update.ReadStatus(u.Boot, cur)
	if err != nil {
		return err
	}
	for _, name := range []string{"a", "b"} {
		ver := s.State.Slots[name].Version
		if name == cur && ver == "" {
			ver = version
		}
		if ver == "" {
			ver = "unknown"
		}
		var marks []string
		if name == cur {
			marks = append(marks, "running")
		}
		if name == s.Default {
			marks = append(marks, "default")
		}
		if name == s.Armed {
			marks = append(marks, "armed for the next boot")
		}
		fmt.Fprintf(w, "slot %s  %-24s %-16s %s\n", strings.ToUpper(name), ver, u.Slots[name].Device, strings.Join(marks, ", "))
	}
	if a := s.State.Attempt; a != nil {
		fmt.Fprintf(w, "last attempt: %s (started %s", a, a.Started.Format("2006-01-02 15:04:05 MST"))
		if !a.Ended.IsZero() {
			fmt.Fprintf(w, ", ended %s", a.Ended.Format("2006-01-02 15:04:05 MST"))
		}
		fmt.Fprintln(w, ")")
	} else {
		fmt.Fprintln(w, "last attempt: none")
	}
	return nil
}

// bundleOpener opens a bundle from a file or an http(s) URL; each pass
// opens it again (a URL is downloaded twice, never stored: /perm is not
// written by an update, and the RAM may not hold it).
func bundleOpener(arg string) update.Opener {
	if strings.HasPrefix(arg, "http://") || strings.HasPrefix(arg, "https://") {
		return func(ctx context.Context) (io.ReadCloser, error) { return openURL(ctx, arg) }
	}
	return func(context.Context) (io.ReadCloser, error) { return os.Open(filepath.Clean(arg)) }
}

// updateStatus is the slots of the board clawedge runs on, as `update
// status` shows them, read from the SD image's boot partition (readable by
// the unprivileged daemon): "update status" at a console.
func updateStatus() (string, error) {
	f := defaultUpdateFlags()
	up, err := f.updater(nil, false)
	if err != nil {
		return "", err
	}
	if up.Current == "" {
		return "This board has no A/B slots (they come with the SD image); updates: docs/update.md.", nil
	}
	var b strings.Builder
	err = writeUpdateStatus(&b, up)
	return strings.TrimRight(b.String(), "\n"), err
}
