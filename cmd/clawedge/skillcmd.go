package main

import (
	"bufio"
	"cmp"
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/clawedge/clawedge/config"
	"github.com/clawedge/clawedge/daemon"
	"github.com/clawedge/clawedge/grammar"
	"github.com/clawedge/clawedge/internal/termsafe"
	"github.com/clawedge/clawedge/skills"
	"github.com/clawedge/clawedge/tools"
	"github.com/clawedge/clawedge/update"
)

func newSkillCmd(g *globalFlags) *cobra.Command {
	c := &cobra.Command{Use: "skill", Short: "Sign, install, list, show and remove skills (the Agent Skills format; docs/skills.md)"}
	c.AddCommand(newSkillSignCmd(), newSkillInstallCmd(g), newSkillListCmd(g), newSkillShowCmd(g), newSkillRmCmd(g))
	return c
}

func newSkillSignCmd() *cobra.Command {
	var key string
	cmd := &cobra.Command{
		Use:   "sign DIR --key KEY",
		Short: "Sign every file of the skill folder DIR with an ed25519 key (clawedge update keygen writes one)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if key == "" {
				return &exitError{2, errors.New("--key KEY is required: the private key file clawedge update keygen writes")}
			}
			priv, err := update.ReadPrivateKey(key)
			if err != nil {
				return err
			}
			if err := skills.Sign(args[0], priv); err != nil {
				return outsideText(err)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "signed %s with %s\nadd the key to skills.trust on the boards that should install it\n",
				termsafe.Line(args[0]), update.FormatKey(priv.Public().(ed25519.PublicKey)))
			return nil
		},
	}
	cmd.Flags().StringVar(&key, "key", "", "the private key file (clawedge update keygen --out DIR writes DIR/clawedge-update.key)")
	return cmd
}

func newSkillInstallCmd(g *globalFlags) *cobra.Command {
	var yes, grant bool
	cmd := &cobra.Command{
		Use:   "install DIR|FILE.tar.gz|URL [--yes] [--grant]",
		Short: "Verify a skill, show what it declares (tools, paths, network), and install it into data_dir/skills",
		Long: `install verifies the skill (its signature by a key of skills.trust, or, with
skills.allow_unsigned: true, none), shows what it declares (its tools, the paths they
read and write, network), asks for confirmation, and installs it whole or not at all.

Its tools are then denied until a policy rule names them (policy.tools "NAME/*": allow),
unless the owner grants them here (--grant, or "y" at the question). Only the URL given
is fetched: no registry is ever contacted. The running daemon loads it at its next start.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg, err := loadConfigFile(g, config.Load)
			if err != nil {
				return err
			}
			t, err := daemon.SkillTrust(cfg)
			if err != nil {
				return err
			}
			in := bufio.NewReader(cmd.InOrStdin())
			out := cmd.OutOrStdout()
			opt := skills.InstallOptions{Trust: t, Source: args[0], Protected: daemon.ProtectedPaths(cfg), Confirm: func(p skills.Plan) (skills.Decision, error) {
				fmt.Fprintln(out, termsafe.String(p.Describe()))
				d := skills.Decision{Install: yes, Grant: grant}
				if !yes {
					d.Install = ask(in, out, "install it? [y/N] ")
					if d.Install && len(p.Skill.Tools) > 0 && !grant {
						d.Grant = ask(in, out, "allow its tools now, without a policy rule naming them? [y/N] ")
					}
				}
				return d, nil
			}}
			s, err := installSkill(daemon.SkillsDir(cfg), args[0], opt)
			if err != nil {
				return outsideText(err)
			}
			fmt.Fprintf(out, "installed %s in %s\n", s.Name(), s.Dir)
			switch {
			case len(s.Tools) == 0:
			case s.Granted:
				fmt.Fprintf(out, "its tools are allowed (granted at install)\n")
			default:
				fmt.Fprintf(out, "its tools are denied until a rule names them, such as policy.tools %q: allow\n", s.Name()+"/*")
			}
			fmt.Fprintln(out, "a running daemon loads it at its next start")
			return nil
		},
	}
	cmd.Flags().BoolVar(&yes, "yes", false, "install without asking (the owner has read what it declares)")
	cmd.Flags().BoolVar(&grant, "grant", false, "allow the skill's tools without a policy rule")
	return cmd
}

// installSkill installs from a folder, a .tar.gz file or an http(s) URL of one.
func installSkill(dir, src string, opt skills.InstallOptions) (*skills.Skill, error) {
	if strings.HasPrefix(src, "https://") || strings.HasPrefix(src, "http://") {
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		defer stop()
		body, err := openURL(ctx, src) // update_source.go: the client model downloads use
		if err != nil {
			return nil, err
		}
		defer body.Close()
		return skills.InstallArchive(dir, body, opt)
	}
	fi, err := os.Stat(src)
	if err != nil {
		return nil, err
	}
	if fi.IsDir() {
		return skills.Install(dir, src, opt)
	}
	f, err := os.Open(src)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return skills.InstallArchive(dir, f, opt)
}

// outsideText escapes an error that may quote a skill's own text (a YAML
// error shows the line it stopped at) before it reaches the terminal.
func outsideText(err error) error {
	if s := termsafe.Line(err.Error()); s != err.Error() {
		return errors.New(s)
	}
	return err
}

func ask(in *bufio.Reader, out io.Writer, q string) bool {
	fmt.Fprint(out, q)
	line, _ := in.ReadString('\n')
	a := strings.ToLower(strings.TrimSpace(line))
	return a == "y" || a == "yes"
}

func newSkillListCmd(g *globalFlags) *cobra.Command {
	return &cobra.Command{
		Use:   "list",
		Short: "List the installed skills, and those refused at load with the reason",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := loadConfigFile(g, config.Load)
			if err != nil {
				return err
			}
			list, refused := daemon.InstalledSkills(cfg)
			w := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
			fmt.Fprintln(w, "SKILL\tTOOLS\tSIGNED BY\tPOLICY\tDESCRIPTION")
			for _, s := range list {
				signed, pol := cmp.Or(s.SignedBy, "unsigned"), "-"
				if len(s.Tools) > 0 {
					pol = "denied until a rule names them"
					if s.Granted {
						pol = "granted at install"
					}
				}
				fmt.Fprintf(w, "%s\t%d\t%s\t%s\t%s\n", s.Name(), len(s.Tools), signed, pol, termsafe.Line(abbrevText(s.Meta.Description, 60)))
			}
			w.Flush()
			for _, e := range refused {
				fmt.Fprintln(cmd.OutOrStdout(), "REFUSED "+termsafe.Line(e.Error()))
			}
			if len(list) == 0 && len(refused) == 0 {
				fmt.Fprintf(cmd.OutOrStdout(), "no skills in %s (clawedge skill install DIR)\n", daemon.SkillsDir(cfg))
			}
			return nil
		},
	}
}

func abbrevText(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n-3]) + "..."
	}
	return s
}

func newSkillShowCmd(g *globalFlags) *cobra.Command {
	return &cobra.Command{
		Use:   "show NAME",
		Short: "Show what an installed skill declares, and its instructions",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg, err := loadConfigFile(g, config.Load)
			if err != nil {
				return err
			}
			list, refused := daemon.InstalledSkills(cfg)
			for _, s := range list {
				if s.Name() == args[0] {
					fmt.Fprintln(cmd.OutOrStdout(), termsafe.String(skills.Plan{Skill: s, SignedBy: s.SignedBy, Source: s.Dir}.Describe()))
					fmt.Fprintln(cmd.OutOrStdout(), "\n"+termsafe.String(skills.Instructions(s)))
					return nil
				}
			}
			for _, e := range refused {
				if strings.HasPrefix(e.Error(), "skill "+args[0]+":") {
					return outsideText(e)
				}
			}
			return fmt.Errorf("no skill %q installed in %s", args[0], daemon.SkillsDir(cfg))
		},
	}
}

func newSkillRmCmd(g *globalFlags) *cobra.Command {
	return &cobra.Command{
		Use:   "rm NAME",
		Short: "Remove an installed skill (the call skill/remove, as the dashboard's Remove)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			// The call skill/remove, decided and audited like the dashboard's:
			// through the running daemon, or on this board's Core.
			return runLine(cmd, g, tools.CommandText("skill/remove", []grammar.Param{{Key: "name", Value: grammar.StringValue(args[0])}}), false, nil)
		},
	}
}
