package main

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/signal"
	"path"
	"strings"
	"syscall"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/clawedge/clawedge/internal/termsafe"
	"github.com/clawedge/clawedge/localmodel/modelfiles"
)

// catalogHelp lists the catalog's models for `model pull --help`.
func catalogHelp() string {
	var b strings.Builder
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	for _, e := range modelfiles.Catalog() {
		fmt.Fprintf(tw, "  %s\t%s %s\t%s\n", e.Name, e.Model, e.Quant, modelfiles.FormatBytes(e.Size))
	}
	tw.Flush()
	return b.String()
}

// newModelPullCmd is `model pull NAME|URL`: download a model file, resumed and verified.
func newModelPullCmd(g *globalFlags) *cobra.Command {
	var dir, sum string
	var force bool
	cmd := &cobra.Command{
		Use:   "pull NAME|URL",
		Short: "Download a model from the catalog or a URL, verified, into the models folder",
		Long: `Downloads a GGUF model into the models folder (data_dir/models, or --dir).

NAME is one of the catalog (official Qwen GGUF files on Hugging Face, each with
its size and sha256):
` + catalogHelp() + `
or an http(s) URL of a GGUF file, installed under the URL's file name. A URL
download is verified only if --sha256 is given (or the URL is a catalog one).

The file arrives as NAME.part and is installed only once its size, sha256 and
GGUF header check out. An interrupted download (network, timeout, Ctrl-C)
keeps the .part: the same command resumes it. A wrong sum or a file that is
not GGUF is discarded. HTTPS_PROXY / HTTP_PROXY / NO_PROXY are honoured.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			dir, err := modelsDir(g, dir)
			if err != nil {
				return err
			}
			req, err := pullRequest(args[0], sum)
			if err != nil {
				return &exitError{code: 2, err: err}
			}
			req.Dir, req.Replace = dir, force
			req.UserAgent = "clawedge/" + version
			stderr := cmd.ErrOrStderr()
			if req.SHA256 == "" {
				fmt.Fprintf(stderr, "warning: no --sha256 given: %s will be checked for size and GGUF format, not verified\n", req.File)
			}
			bar := modelfiles.NewProgress(stderr, req.File, termsafe.IsTerminal(stderr))
			req.Progress = bar.Update
			req.Notify = func(msg string) { fmt.Fprintf(stderr, "%s: %s\n", req.File, msg) }

			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			res, err := modelfiles.Download(ctx, req)
			bar.Finish()
			if errors.Is(err, modelfiles.ErrExists) {
				fmt.Fprintf(cmd.OutOrStdout(), "%s is already installed in %s (pass --force to download it again)\n", req.File, dir)
				return nil
			}
			if err != nil {
				return err
			}
			check := "sha256 verified"
			if !res.Verified {
				check = "NOT verified: no sha256 to check against"
			}
			fmt.Fprintf(cmd.OutOrStdout(), "installed %s: %s, sha256 %s (%s)\n", res.Path, modelfiles.FormatBytes(res.Size), res.SHA256, check)
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&dir, "dir", "", "models folder (default: data_dir/models of the config)")
	f.StringVar(&sum, "sha256", "", "expected sha256 of a URL download")
	f.BoolVar(&force, "force", false, "download again even if installed (the new file replaces it once verified)")
	return cmd
}

// pullRequest turns a catalog name or a URL into a download request.
func pullRequest(arg, sum string) (modelfiles.Request, error) {
	if !strings.Contains(arg, "://") {
		e, ok := modelfiles.Lookup(arg)
		if !ok {
			return modelfiles.Request{}, fmt.Errorf("unknown model %q: pull one of %s, or an https:// URL of a GGUF file",
				arg, strings.Join(modelfiles.Names(), ", "))
		}
		if sum != "" {
			return modelfiles.Request{}, fmt.Errorf("--sha256 is for URL downloads: %s has its own", e.Name)
		}
		return entryRequest(e)
	}
	u, err := url.Parse(arg)
	if err != nil {
		return modelfiles.Request{}, err
	}
	if u.Scheme != "https" && u.Scheme != "http" || u.Host == "" {
		return modelfiles.Request{}, fmt.Errorf("%s: only http and https URLs can be pulled", arg)
	}
	if e, ok := modelfiles.LookupURL(arg); ok {
		if sum != "" && !strings.EqualFold(sum, e.SHA256) {
			return modelfiles.Request{}, fmt.Errorf("--sha256 %s: the catalog has %s for %s", sum, e.SHA256, arg)
		}
		return entryRequest(e)
	}
	name := path.Base(u.Path)
	if err := modelfiles.CheckFileName(name); err != nil || u.Path == "" || strings.HasSuffix(u.Path, "/") {
		return modelfiles.Request{}, fmt.Errorf("%s: the URL must end in a file name (%v)", arg, err)
	}
	if sum != "" {
		if sum, err = modelfiles.ParseSHA256(sum); err != nil {
			return modelfiles.Request{}, fmt.Errorf("--sha256: %w", err)
		}
	}
	return modelfiles.Request{URL: arg, File: name, SHA256: sum}, nil
}

func entryRequest(e modelfiles.Entry) (modelfiles.Request, error) {
	if e.SHA256 == "" || e.Size <= 0 {
		// Never pull a catalog model unverified: its point is that it is known.
		return modelfiles.Request{}, fmt.Errorf("%s: the catalog has no sha256 and size for it; pull it by URL with --sha256", e.Name)
	}
	return modelfiles.Request{URL: e.URL, File: e.File, Size: e.Size, SHA256: e.SHA256}, nil
}
