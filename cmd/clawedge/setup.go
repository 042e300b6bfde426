package main

import (
	"fmt"
	"io"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/clawedge/clawedge/setup"
)

func newSetupCmd(g *globalFlags) *cobra.Command {
	o := &setup.Options{Pull: func(name, dir string, out io.Writer) error {
		pull := newModelPullCmd(&globalFlags{config: g.config})
		pull.SetArgs([]string{name, "--dir", dir})
		pull.SetOut(out)
		pull.SetErr(out)
		return pull.Execute()
	}}
	cmd := &cobra.Command{
		Use:   "setup",
		Short: "Ask about the board, Telegram and models, write a commented config, then run doctor",
		Long: `An interactive wizard that writes clawedge.yaml (or --config FILE): the board
(simulated or real: it lists the /dev/gpiochip*, serial ports and I2C buses it
finds), the pins by name, Telegram (the token from @BotFather is checked with
getMe, then it waits for /start from you to learn your user id), a local model
(the catalog sizes that fit this board's memory, downloaded with progress, or a
file) and remote models (OpenAI-compatible servers such as Ollama, llama-server
and vLLM, or Anthropic; each tried with a one-token request).

Secrets are never printed and never written into the config: they go into
clawedge.env beside it (mode 0600) and the config names them as ${VARIABLES}.
Run it again to change answers: the current config gives the defaults and is
kept as clawedge.yaml.bak. With --yes the flags are the answers, for scripts.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			path := g.config
			if path == "" {
				path = "clawedge.yaml"
			}
			out := cmd.OutOrStdout()
			if err := setup.New(o, cmd.InOrStdin(), stdinFile(cmd), out, path).Run(); err != nil {
				return err
			}
			g.config = path
			fmt.Fprintf(out, "\nRunning clawedge doctor --config %s\n", path)
			if failed := printChecks(out, diagnose(g)); failed > 0 {
				return &exitError{code: 1, err: fmt.Errorf("config written, but doctor found %d problem(s): see the fixes above", failed)}
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.BoolVar(&o.Yes, "yes", false, "answer every question with its flag or default: no prompts")
	f.StringVar(&o.Board, "board", "", "sim or periph (default: periph when /dev/gpiochip* exists)")
	f.StringVar(&o.Pins, "pins", "", `pins as "name=GPIO:in|out ..." (default: led=17:out button=27:in)`)
	f.StringVar(&o.Ports, "ports", "", `serial ports as "name=/dev/ttyUSB0:115200 ..."`)
	f.StringVar(&o.Buses, "buses", "", `I2C buses as "name=1 ..."`)
	f.StringVar(&o.TokenEnv, "telegram-token-env", "", "environment variable holding the bot token (never pass a token on the command line)")
	f.Int64Var(&o.Owner, "telegram-owner", 0, "your Telegram user id (default: learnt from your /start)")
	f.StringVar(&o.APIURL, "telegram-api-url", "", "Bot API server (default https://api.telegram.org)")
	f.StringVar(&o.Local, "local-model", "", "a catalog name to download or a .gguf file (none: no local model)")
	f.StringArrayVar(&o.Remotes, "remote", nil, `a remote model as "name=N,kind=openai|anthropic,url=URL,model=M,key-env=VAR" (repeatable)`)
	f.DurationVar(&o.OwnerTimeout, "telegram-wait", 2*time.Minute, "how long to wait for your /start")
	return cmd
}

func stdinFile(cmd *cobra.Command) *os.File {
	if f, ok := cmd.InOrStdin().(*os.File); ok {
		return f
	}
	return nil
}
