package sandbox

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"
)

// Runner starts confined children through the helper binary.
type Runner struct {
	// Helper is the binary whose main calls Main first; "" is this one.
	Helper string
	// AllowWithoutLandlock accepts a kernel without Landlock: children then
	// keep no-new-privs, seccomp, rlimits, the uid drop and the empty
	// environment, but their file access is not confined. Off, such a
	// kernel refuses every run.
	AllowWithoutLandlock bool
	// ABI reports the kernel's Landlock ABI (0: none); nil asks the kernel.
	// Tests set it to simulate a kernel without Landlock.
	ABI func() int
	// Warn is told once when Landlock is missing, and once when the kernel
	// refuses the PID namespace; nil drops the messages.
	Warn func(msg string)
	// Protected are paths no run may be granted, nor a folder holding one:
	// data_dir and the config's folder (CheckProtected).
	Protected []string

	once       sync.Once
	nsOnce     sync.Once // Containment
	nsErr      error
	nsWarnOnce sync.Once
}

// WithoutLandlock is the message a kernel without Landlock gets, once.
const WithoutLandlock = "Landlock is not available on this kernel: sandboxed children keep no-new-privs, the seccomp filter, rlimits, the uid drop and the empty environment, but their file access is NOT confined"

// Run runs s in a PID namespace of its own (see Containment), killing the
// namespace and its process group after timeout or when ctx ends, and when
// the program exits: nothing it started outlives the call. An error wrapping
// ErrRefused means the program did not run; otherwise the Result says how it
// ended (a non-zero exit is not an error here).
func (r *Runner) Run(ctx context.Context, s Spec, timeout time.Duration) (Result, error) {
	helper, spec, uid, release, err := r.prepare(s)
	if err != nil {
		return Result{}, err
	}
	// run returns once every process of the run is gone (the namespace's
	// init reaped, or the group killed and awaited): the uid is free again.
	defer release()
	contained := r.Containment() == nil
	if !contained {
		r.fellBack()
	}
	res, err := run(ctx, helper, spec, outputCap(s.Limits), timeout, contained)
	if contained && nsRefused(err) {
		// Granted to the probe, refused now (a namespace count reached):
		// this run goes without, and says so if it then starts.
		if res, err = run(ctx, helper, spec, outputCap(s.Limits), timeout, false); err == nil {
			r.fellBack()
		}
	}
	if err == nil {
		res.explainKill(s.Limits)
		res.UID = uid
	}
	return res, err
}

// Command returns a Cmd that runs s confined through the helper, for a
// long-lived child the caller talks to over its stdin and stdout (the
// local-model runner). The caller sets Stdin, Stdout and Stderr (or takes
// pipes) and starts it. A confinement that cannot be set up ends the child
// with exit status 127 and the reason on its stderr. The child is in a PID
// namespace of its own when the kernel grants one (Containment): whatever it
// starts dies with it. A uid of its own that the child is given (a root
// caller, a spec naming none) stays taken for the life of this process: the
// caller owns the child's end.
func (r *Runner) Command(s Spec) (*exec.Cmd, error) {
	helper, spec, _, _, err := r.prepare(s)
	if err != nil {
		return nil, err
	}
	// The spec fits the pipe's buffer, so it is written before the child starts.
	pr, pw, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	defer pw.Close()
	if _, err := pw.Write(spec); err != nil {
		pr.Close()
		return nil, err
	}
	contained := r.Containment() == nil
	if !contained {
		r.fellBack()
	}
	return &exec.Cmd{Path: helper, Args: []string{helper, HelperArg}, Env: []string{}, Dir: "/",
		ExtraFiles: []*os.File{pr}, SysProcAttr: nsAttr(contained)}, nil
}

// prepare checks s, settles its Landlock ABI and uid, and encodes it for the
// helper. uid is who the program runs as (-1: the caller); release gives a
// uid of its own back, and is set whenever err is nil.
func (r *Runner) prepare(s Spec) (helper string, spec []byte, uid int, release func(), err error) {
	release = func() {}
	fail := func(e error) (string, []byte, int, func(), error) {
		release()
		return "", nil, 0, func() {}, e
	}
	if err := s.Check(); err != nil {
		return fail(fmt.Errorf("%w: %v", ErrRefused, err))
	}
	for _, g := range []struct {
		what  string
		paths []string
	}{{"read", s.Read}, {"write", s.Write}, {"the program", []string{s.Program}}} {
		if err := CheckProtected(g.what, g.paths, r.Protected); err != nil {
			return fail(fmt.Errorf("%w: %v", ErrRefused, err))
		}
	}
	abi := 0
	if r.ABI != nil {
		abi = r.ABI()
	} else {
		abi = LandlockABI()
	}
	if abi == 0 {
		r.once.Do(func() {
			if r.Warn != nil {
				r.Warn(WithoutLandlock)
			}
		})
		if !r.AllowWithoutLandlock {
			return fail(fmt.Errorf("%w: Landlock is not available on this kernel, so file access cannot be confined; set exec.allow_without_landlock: true to accept the weaker confinement", ErrRefused))
		}
	}
	s.LandlockABI = abi
	if release, err = settleUID(&s, os.Geteuid()); err != nil {
		return fail(fmt.Errorf("%w: %v", ErrRefused, err))
	}
	if helper, err = r.helperPath(); err != nil {
		return fail(fmt.Errorf("%w: %v", ErrRefused, err))
	}
	if spec, err = json.Marshal(s); err != nil {
		return fail(fmt.Errorf("%w: %v", ErrRefused, err))
	}
	if len(spec) > 32<<10 {
		return fail(fmt.Errorf("%w: the spec is %d bytes, more than 32 KiB", ErrRefused, len(spec)))
	}
	return helper, spec, s.UID, release, nil
}

// helperPath is Helper, or this binary.
func (r *Runner) helperPath() (string, error) {
	if r.Helper != "" {
		return r.Helper, nil
	}
	helper, err := os.Executable()
	if err != nil {
		return "", fmt.Errorf("finding the helper: %v", err)
	}
	return helper, nil
}

func outputCap(l Limits) int {
	if l.OutputKB <= 0 {
		return 64 << 10
	}
	return l.OutputKB << 10
}

// run starts the helper with the spec on fd 3 and the status pipe on fd 4.
// The children's output goes through pipes this process reads, so that once
// the child exits its stragglers can be killed before the reads finish.
func run(ctx context.Context, helper string, spec []byte, limit int, timeout time.Duration, contained bool) (res Result, err error) {
	var files []*os.File
	defer func() {
		for _, f := range files {
			f.Close()
		}
	}()
	pipe := func() (r, w *os.File) {
		if err == nil {
			r, w, err = os.Pipe()
			files = append(files, r, w)
		}
		return r, w
	}
	specR, specW := pipe()
	statusR, statusW := pipe()
	outR, outW := pipe()
	errR, errW := pipe()
	if err != nil {
		return res, fmt.Errorf("%w: %v", ErrRefused, err)
	}
	cmd := &exec.Cmd{
		Path:        helper,
		Args:        []string{helper, HelperArg},
		Env:         []string{},
		Dir:         "/",
		Stdin:       nil, // /dev/null
		Stdout:      outW,
		Stderr:      errW,
		ExtraFiles:  []*os.File{specR, statusW},
		SysProcAttr: nsAttr(contained),
	}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return res, fmt.Errorf("%w: starting the helper: %w", ErrRefused, err)
	}
	pgid := cmd.Process.Pid
	for _, f := range []*os.File{specR, statusW, outW, errW} {
		f.Close()
	}
	var stdout, stderr bounded
	stdout.limit, stderr.limit = limit, limit
	var reads sync.WaitGroup
	reads.Add(2)
	go func() { defer reads.Done(); io.Copy(&stdout, outR) }()
	go func() { defer reads.Done(); io.Copy(&stderr, errR) }()
	if _, err := specW.Write(spec); err != nil {
		syscall.Kill(-pgid, syscall.SIGKILL)
	}
	specW.Close()

	var timedOut bool
	done := make(chan struct{})
	killed := make(chan struct{})
	go func() {
		defer close(killed)
		t := time.NewTimer(timeout)
		defer t.Stop()
		select {
		case <-done:
			return
		case <-t.C:
		case <-ctx.Done():
		}
		timedOut = true
		syscall.Kill(-pgid, syscall.SIGKILL)
	}()
	waitErr := cmd.Wait()
	close(done)
	<-killed
	// In a namespace, the program's end killed the rest, and its wait
	// returned once they were gone. Without one, stragglers (children that
	// outlived the program) die with the group, those that left it excepted;
	// the group id stays reserved while any member lives, so this hits no
	// one else.
	syscall.Kill(-pgid, syscall.SIGKILL)
	awaitGone(pgid)
	reads.Wait()
	res.Elapsed = time.Since(start)

	status, _ := io.ReadAll(io.LimitReader(statusR, 4096))
	if len(status) > 0 {
		return res, fmt.Errorf("%w: %s", ErrRefused, status)
	}
	res.Stdout, res.Stderr = stdout.buf, stderr.buf
	res.Truncated = stdout.dropped || stderr.dropped
	res.TimedOut = timedOut
	var ee *exec.ExitError
	if waitErr != nil && !errors.As(waitErr, &ee) {
		return res, waitErr
	}
	ws := cmd.ProcessState.Sys().(syscall.WaitStatus)
	res.ExitCode = ws.ExitStatus()
	if ws.Signaled() {
		res.Signal = signalName(ws.Signal())
		res.killed = ws.Signal() == syscall.SIGKILL
	}
	res.cpu = cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	return res, nil
}

// explainKill names the CPU limit as the cause of a SIGKILL it sent. The
// program is its namespace's init, which the kernel spares every signal it
// has no handler for but SIGKILL and SIGSTOP from outside: SIGXCPU at cpu_s
// does not end it, the SIGKILL at the hard limit a second later does.
// (Likewise fsize_mb: its write fails with EFBIG instead of SIGXFSZ.)
func (res *Result) explainKill(l Limits) {
	if res.killed && !res.TimedOut && l.CPUSeconds > 0 && res.cpu >= time.Duration(l.CPUSeconds)*time.Second {
		res.Signal = "CPU time limit exceeded (SIGKILL at the hard limit)"
	}
}

func signalName(s syscall.Signal) string {
	switch s {
	case syscall.SIGXCPU:
		return "CPU time limit exceeded (SIGXCPU)"
	case syscall.SIGXFSZ:
		return "file size limit exceeded (SIGXFSZ)"
	case syscall.SIGSYS:
		return "forbidden system call (SIGSYS)"
	case syscall.SIGKILL:
		return "killed (SIGKILL)"
	}
	return s.String()
}

// bounded keeps the first limit bytes written and drops the rest, still
// reading so that the child never blocks on a full pipe.
type bounded struct {
	buf     []byte
	limit   int
	dropped bool
}

func (b *bounded) Write(p []byte) (int, error) {
	room := b.limit - len(b.buf)
	if room < len(p) {
		b.dropped = true
		if room > 0 {
			b.buf = append(b.buf, p[:room]...)
		}
		return len(p), nil
	}
	b.buf = append(b.buf, p...)
	return len(p), nil
}

// awaitGone waits, up to two seconds, until no process of the group is left,
// reaped by init included. Until then the killed processes still count
// against the uid's nproc limit, and the next run would fail to start.
func awaitGone(pgid int) {
	for i := 0; i < 200 && syscall.Kill(-pgid, 0) == nil; i++ {
		time.Sleep(10 * time.Millisecond)
	}
}
