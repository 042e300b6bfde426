package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/clawedge/clawedge/daemon"
	"github.com/clawedge/clawedge/internal/termsafe"
	"github.com/clawedge/clawedge/memory"
)

// shellUser is the principal of the person at the board's shell: uid:N.
func shellUser() string { return "uid:" + strconv.Itoa(os.Getuid()) }

func newMemoryCmd(g *globalFlags) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "memory",
		Short: "List, search, add, remove and share the assistant's long-term memory (data_dir/workspace/MEMORY.md)",
		Long: "The assistant's long-term memory, data_dir/workspace/MEMORY.md, from the board's shell: every entry,\n" +
			"whoever's it is. An entry is its author's (whoever saved it) or the board's (written by hand, or by a\n" +
			"person at the board); memory/search and the agent's recall give each principal its own entries and the\n" +
			"shared ones (docs/memory.md).",
	}
	with := func(fn func(cmd *cobra.Command, w *memory.Workspace, args []string) error) func(*cobra.Command, []string) error {
		return func(cmd *cobra.Command, args []string) error {
			cfg, err := loadConfig(g)
			if err != nil {
				return err
			}
			w, err := daemon.OpenWorkspace(cfg)
			if err != nil {
				return err
			}
			return fn(cmd, w, args)
		}
	}
	print := func(cmd *cobra.Command, es []memory.Entry) {
		for _, e := range es {
			fmt.Fprintln(cmd.OutOrStdout(), termsafe.Line(e.String()))
		}
	}
	list := &cobra.Command{
		Use: "list", Short: "Print every entry: id, date, who saved it (and \"shared\"), text", Args: cobra.NoArgs,
		RunE: with(func(cmd *cobra.Command, w *memory.Workspace, _ []string) error {
			es, err := w.List()
			print(cmd, es)
			return err
		}),
	}
	var n int
	search := &cobra.Command{
		Use: "search QUERY...", Short: "Print the entries most relevant to the words, best first (what memory/search finds)", Args: cobra.MinimumNArgs(1),
		RunE: with(func(cmd *cobra.Command, w *memory.Workspace, args []string) error {
			es, err := w.Search(strings.Join(args, " "), n)
			if err == nil && len(es) == 0 {
				fmt.Fprintln(cmd.OutOrStdout(), "nothing remembered matches")
			}
			print(cmd, es)
			return err
		}),
	}
	search.Flags().IntVarP(&n, "n", "n", 5, "how many entries")
	add := &cobra.Command{
		Use: "add TEXT...", Short: "Remember a fact, as your own words", Args: cobra.MinimumNArgs(1),
		RunE: with(func(cmd *cobra.Command, w *memory.Workspace, args []string) error {
			e, err := w.Save(memory.Entry{Text: strings.Join(args, " "), Source: memory.Person, User: shellUser(), Channel: "cli"})
			if err == nil {
				fmt.Fprintln(cmd.OutOrStdout(), "remembered "+termsafe.Line(e.String()))
			}
			return err
		}),
	}
	entryIDs := func(args []string) ([]int, error) {
		var ids []int
		for _, a := range args {
			id, err := strconv.Atoi(strings.TrimPrefix(a, "#"))
			if err != nil || id <= 0 {
				return nil, &exitError{code: 2, err: fmt.Errorf("%q is not an entry id (memory list shows them)", a)}
			}
			ids = append(ids, id)
		}
		return ids, nil
	}
	rm := &cobra.Command{
		Use: "rm ID...", Short: "Forget entries by id", Args: cobra.MinimumNArgs(1),
		RunE: with(func(cmd *cobra.Command, w *memory.Workspace, args []string) error {
			ids, err := entryIDs(args)
			if err != nil {
				return err
			}
			for _, id := range ids {
				e, err := w.Forget(id)
				if err != nil {
					return err
				}
				fmt.Fprintln(cmd.OutOrStdout(), "forgot "+termsafe.Line(e.String()))
			}
			return nil
		}),
	}
	// share and unshare: what a person at the board decides for the owners
	// (the entry's comment gets "shared:uid:N", or loses it).
	sharing := func(on bool) func(*cobra.Command, *memory.Workspace, []string) error {
		return func(cmd *cobra.Command, w *memory.Workspace, args []string) error {
			ids, err := entryIDs(args)
			if err != nil {
				return err
			}
			by, done := shellUser(), "shared"
			if !on {
				by, done = "", "no longer shared"
			}
			for _, id := range ids {
				e, err := w.Share(id, by)
				if err != nil {
					return err
				}
				fmt.Fprintln(cmd.OutOrStdout(), done+": "+termsafe.Line(e.String()))
			}
			return nil
		}
	}
	share := &cobra.Command{
		Use: "share ID...", Short: "Share entries: everyone who may search memory finds them, and their turns recall them (a program's entry is found, never recalled)", Args: cobra.MinimumNArgs(1),
		RunE: with(sharing(true)),
	}
	unshare := &cobra.Command{
		Use: "unshare ID...", Short: "Stop sharing entries: only their owner finds them again", Args: cobra.MinimumNArgs(1),
		RunE: with(sharing(false)),
	}
	rebuild := &cobra.Command{
		Use: "rebuild", Short: "Read MEMORY.md again, give hand-written lines their ids, rebuild the index and report what could not be read", Args: cobra.NoArgs,
		RunE: with(func(cmd *cobra.Command, w *memory.Workspace, _ []string) error {
			st, err := w.Rebuild()
			if err != nil {
				return err
			}
			for _, p := range st.Problems {
				fmt.Fprintln(cmd.ErrOrStderr(), "warning: "+termsafe.Line(p))
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%d entries, %d distinct words, %d bytes in %s\n", st.Entries, st.Terms, st.Bytes, filepath.Join(w.Dir, memory.MemoryFile))
			return nil
		}),
	}
	cmd.AddCommand(list, search, add, rm, share, unshare, rebuild)
	return cmd
}
