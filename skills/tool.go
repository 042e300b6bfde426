package skills

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/clawedge/clawedge/grammar"
	"github.com/clawedge/clawedge/sandbox"
	"github.com/clawedge/clawedge/tools"
	"github.com/clawedge/clawedge/tools/sys"
)

// Runtime is how script tools run: the sandbox runner, and the limits every
// run gets (exec.limits). Rights never come from here: paths and network are
// only what the tool declares.
type Runtime struct {
	Runner *sandbox.Runner
	Limits sandbox.Limits
}

// Register adds the script tools of s to reg, each SKILL/NAME.
func Register(reg *tools.Registry, s *Skill, rt Runtime) error {
	for _, d := range s.Tools {
		if err := reg.Register(&scriptTool{s: s, d: d, rt: rt}); err != nil {
			return fmt.Errorf("skill %s: %w", s.Name(), err)
		}
	}
	return nil
}

// scriptTool is one declared tool of a skill.
type scriptTool struct {
	s  *Skill
	d  ToolDecl
	rt Runtime
}

func (t *scriptTool) Spec() grammar.ToolSpec { return t.d.Spec(t.s.Name()) }

// sandboxSpec is the confined run of a call with argv: the program from the
// skill folder, which it may read; what its launch needs to start (its
// interpreter, the loader and libraries: read and execute of exactly those
// files); the declared paths and network; nothing else. PATH only says
// where programs are; it grants nothing.
func (t *scriptTool) sandboxSpec(argv []string, launch Launch) sandbox.Spec {
	read := append([]string{t.s.Dir}, t.d.Read...)
	for _, g := range launch.Grants {
		if !slices.ContainsFunc(read, func(d string) bool { return sandbox.Within(g, d) }) {
			read = append(read, g)
		}
	}
	return sandbox.Spec{
		Program: filepath.Join(t.s.Dir, filepath.FromSlash(t.d.Run[0])),
		Args:    argv,
		Env:     []string{"PATH=" + ScriptPATH, "SKILL_DIR=" + t.s.Dir, "LANG=C.UTF-8"},
		Dir:     t.s.Dir,
		Read:    read,
		Write:   slices.Clone(t.d.Write),
		Network: t.d.Network,
		Limits:  t.rt.Limits,
	}
}

func (t *scriptTool) Run(ctx context.Context, args grammar.Args) (tools.Result, error) {
	argv, err := Argv(t.d, args)
	if err != nil {
		return tools.Result{}, err
	}
	// The folder is checked again before each run, not only at load: a file
	// changed while the daemon runs is refused here, named.
	now, err := readTree(t.s.Dir, nil)
	if err == nil {
		err = diff(t.s.Tree, now)
	}
	if err != nil {
		return tools.Result{}, fmt.Errorf("skill %s: %w: %v", t.s.Name(), ErrTampered, err)
	}
	if err := Reachable(t.s.Dir, os.Geteuid()); err != nil {
		return tools.Result{}, fmt.Errorf("skill %s: %w", t.s.Name(), err)
	}
	// How the program starts is read again too: the interpreter its #!
	// line names may have moved or changed on the board since the install.
	program := filepath.Join(t.s.Dir, filepath.FromSlash(t.d.Run[0]))
	launch, err := programLaunch(program, t.d.Read)
	if err != nil {
		return tools.Result{}, fmt.Errorf("skill %s: tool %s: %s cannot start: %w", t.s.Name(), t.d.Name, t.d.Run[0], err)
	}
	// Another skill's program is no interpreter of this one: the skills'
	// folder is clawedge's data, which no tool may read.
	for _, g := range launch.Grants {
		if sandbox.Within(g, filepath.Dir(t.s.Dir)) && !sandbox.Within(g, t.s.Dir) {
			return tools.Result{}, fmt.Errorf("skill %s: tool %s: %s starts with %s, in the skills' folder: refused", t.s.Name(), t.d.Name, t.d.Run[0], g)
		}
	}
	res, err := t.rt.Runner.Run(ctx, t.sandboxSpec(argv, launch), t.d.Timeout)
	if err != nil {
		if errors.Is(err, sandbox.ErrRefused) && strings.Contains(err.Error(), "exec "+program+": permission denied") {
			return tools.Result{}, fmt.Errorf("%w (skill %s: tool %s: %s)", err, t.s.Name(), t.d.Name, t.startDenied(launch))
		}
		return tools.Result{}, err
	}
	out, err := sys.RunResult(t.Spec().Name, res)
	if err != nil {
		if hint := t.explainDenied(res.Stderr, launch); hint != "" {
			err = fmt.Errorf("%w; %s", err, hint)
		}
	}
	return out, err
}

// startDenied says what the exec that the sandbox refused was given, for
// an EACCES from the kernel before the program ran: one of these files, or
// the folders leading to them, is not open to the program's uid.
func (t *scriptTool) startDenied(launch Launch) string {
	if launch.Shebang == "" {
		return fmt.Sprintf("starting %s was denied; it was granted its own folder and %s", t.d.Run[0], listOr(launch.Grants, "nothing else"))
	}
	return fmt.Sprintf("starting %s (%s) was denied; it was granted %s: check their modes, or declare in tools.yaml what else its start needs (read: [/path])", t.d.Run[0], launch.Shebang, strings.Join(launch.Grants, ", "))
}

// Reachable says why a root daemon's child, which runs as an unprivileged
// uid of its own, could not reach the skill folder (a data_dir of mode 0700
// is the usual cause), so the caller reads that rather than the program's
// "permission denied".
func Reachable(dir string, euid int) error {
	if euid != 0 {
		return nil // the child keeps the daemon's uid, which installed the folder
	}
	for d := dir; ; d = filepath.Dir(d) {
		fi, err := os.Stat(d)
		if err != nil {
			return err
		}
		if fi.Mode().Perm()&0o001 == 0 {
			return fmt.Errorf("its folder %s is not reachable by the unprivileged uid a root daemon's skill programs run as (a uid of the run's own: neither the folder's owner nor in its group): %s has mode %04o; allow others to pass through it (chmod o+x %s)", dir, d, fi.Mode().Perm(), d)
		}
		if d == "/" || d == filepath.Dir(d) {
			return nil
		}
	}
}

// Argv is the program's arguments for a validated call: each "{name}" item
// becomes exactly one argument (the value as written, never split, never
// seen by a shell), dropped when an optional parameter without a default is
// absent. A string that starts with "-" is refused unless the tool's enum
// lists it: the program would read it as an option, not as a value.
func Argv(d ToolDecl, args grammar.Args) ([]string, error) {
	var argv []string
	for _, a := range d.Run[1:] {
		name, ok := placeholder(a)
		if !ok {
			argv = append(argv, a)
			continue
		}
		v, has := args.Value(name)
		if !has {
			continue
		}
		var s string
		switch v.Kind {
		case grammar.String:
			s = v.Str
			i := slices.IndexFunc(d.Params, func(p grammar.ArgSpec) bool { return p.Name == name })
			if strings.HasPrefix(s, "-") && (i < 0 || !slices.Contains(d.Params[i].Enum, s)) {
				return nil, fmt.Errorf("%s=%q: a value starting with \"-\" would be read as an option by the program", name, s)
			}
		case grammar.Int:
			s = strconv.FormatInt(v.Int, 10)
		case grammar.Float:
			s = strconv.FormatFloat(v.Float, 'g', -1, 64)
		case grammar.Bool:
			s = strconv.FormatBool(v.Bool)
		default:
			return nil, fmt.Errorf("%s: not a single value", name)
		}
		argv = append(argv, s)
	}
	return argv, nil
}
