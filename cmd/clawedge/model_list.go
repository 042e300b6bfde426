package main

import (
	"fmt"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/clawedge/clawedge/localmodel/modelfiles"
)

// newModelListCmd is `model list`: the model files in the models folder.
func newModelListCmd(g *globalFlags) *cobra.Command {
	var dir string
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the models installed in the models folder, and the catalog",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			dir, err := modelsDir(g, dir)
			if err != nil {
				return err
			}
			list, err := modelfiles.List(dir)
			if err != nil {
				return err
			}
			w := cmd.OutOrStdout()
			fmt.Fprintf(w, "installed in %s:\n", dir)
			tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
			files := map[string]modelfiles.Installed{}
			n := 0
			for _, m := range list {
				files[m.File] = m
				if m.Partial {
					continue
				}
				n++
				switch {
				case m.Err != nil:
					fmt.Fprintf(tw, "  %s\t%s\tunreadable: %v\n", m.File, modelfiles.FormatBytes(m.Size), m.Err)
				default:
					from := ""
					if m.Catalog != nil {
						from = "= " + m.Catalog.Name
					}
					fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\n", m.File, modelfiles.FormatBytes(m.Size), orNone(m.Architecture), m.Quantization, from)
				}
			}
			if n == 0 {
				fmt.Fprintln(tw, "  (none)")
			}
			for _, m := range list {
				if m.Partial {
					fmt.Fprintf(tw, "  %s\t%s\tunfinished download: pull again to resume, or model rm it\n", m.File, modelfiles.FormatBytes(m.Size))
				}
			}
			tw.Flush()
			fmt.Fprintln(w, "catalog (clawedge model pull NAME):")
			for _, e := range modelfiles.Catalog() {
				state := "not installed"
				if m, ok := files[e.File]; ok && m.Catalog != nil {
					state = "installed"
				} else if ok {
					state = "a different file of that name is installed"
				} else if p, ok := files[e.File+modelfiles.PartSuffix]; ok {
					state = fmt.Sprintf("partly downloaded (%d%%)", p.Size*100/e.Size)
				}
				fmt.Fprintf(tw, "  %s\t%s %s\t%s\t%s\n", e.Name, e.Model, e.Quant, modelfiles.FormatBytes(e.Size), state)
			}
			return tw.Flush()
		},
	}
	cmd.Flags().StringVar(&dir, "dir", "", "models folder (default: data_dir/models of the config)")
	return cmd
}
