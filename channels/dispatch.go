// Package channels is where people reach clawedge: the console (stdin and a
// serial line) now, Telegram later. Every channel hands each line to one
// Dispatcher, so a command behaves the same wherever it is typed.
package channels

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/clawedge/clawedge/grammar"
	"github.com/clawedge/clawedge/tools"
)

// Message is one line of text from a person.
type Message struct {
	Channel string // "console/stdin", "console/ttyS0"
	User    string
	Text    string
}

// Agent answers free text. Until a model is configured there is none.
type Agent interface {
	Reply(ctx context.Context, msg Message) (string, error)
}

// NoModelReply is what free text gets when no model is configured.
const NoModelReply = "No model is configured, so I can only run commands. " +
	"Commands start with @ (for example @gpio/write{pin=\"led\";value=1}); try help, status or pins."

// Dispatcher turns a line into a reply: command-language lines run with no model,
// a few words (help, status, pins) are shortcuts for sys tools, and anything else
// goes to the agent.
type Dispatcher struct {
	Runner *tools.Runner
	Agent  Agent // nil: free text gets NoModelReply
}

// shortcuts map console words to the commands they stand for; each one runs
// through the runner, so it is validated and audited like any other command.
var shortcuts = map[string]string{
	"help":   "@sys/help{}",
	"?":      "@sys/help{}",
	"status": "@sys/status{}",
	"pins":   "@gpio/list{}",
	"ports":  "@serial/list{}",
	"audit":  "@sys/audit{}",
}

// Handle returns the reply to one line; "" means nothing to say (an empty line).
// It never panics on any input: errors become replies that start with "error:".
func (d *Dispatcher) Handle(ctx context.Context, msg Message) string {
	line := strings.TrimSpace(msg.Text)
	switch {
	case line == "":
		return ""
	case strings.HasPrefix(line, "@") || strings.HasPrefix(line, "["):
		return d.command(ctx, msg, line)
	}
	word, rest, _ := strings.Cut(line, " ")
	word = strings.ToLower(word)
	if word == "help" && strings.TrimSpace(rest) != "" {
		return d.command(ctx, msg, fmt.Sprintf("@sys/help{tool=%q}", strings.TrimPrefix(strings.TrimSpace(rest), "@")))
	}
	if cmd, ok := shortcuts[word]; ok && strings.TrimSpace(rest) == "" {
		return d.command(ctx, msg, cmd)
	}
	if d.Agent == nil {
		return NoModelReply
	}
	reply, err := d.Agent.Reply(ctx, msg)
	if err != nil {
		return "error: " + err.Error()
	}
	return reply
}

func (d *Dispatcher) command(ctx context.Context, msg Message, line string) string {
	rep, err := Run(ctx, d.Runner, tools.Caller{Channel: msg.Channel, User: msg.User}, line)
	if err != nil {
		if rep != nil && len(rep.Stages) > 0 {
			return rep.Text() // per-call errors are already in the report
		}
		return "error: " + err.Error()
	}
	return rep.Text()
}

// Run parses and runs one command line. A syntax error comes back with the
// offending line and a caret under the column.
func Run(ctx context.Context, r *tools.Runner, caller tools.Caller, line string) (*tools.Report, error) {
	cmd, err := grammar.Parse(line, grammar.ParseOptions{Namespaces: r.Registry.Namespaces()})
	if err != nil {
		var se *grammar.SyntaxError
		if errors.As(err, &se) {
			return nil, fmt.Errorf("%v\n%s", se, se.Caret())
		}
		return nil, err
	}
	return r.Run(ctx, caller, cmd)
}
