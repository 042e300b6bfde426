package modelfiles

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/clawedge/clawedge/internal/atomicfile"
	"github.com/clawedge/clawedge/internal/httpclient"
	"github.com/clawedge/clawedge/internal/redact"
	"github.com/clawedge/clawedge/localmodel/gguf"
)

// PartSuffix is appended to the target's name while it downloads.
const PartSuffix = ".part"

// DefaultIdleTimeout is how long a download may go without receiving a byte
// (headers included) before it fails, leaving a resumable .part.
const DefaultIdleTimeout = 60 * time.Second

// DefaultReserve is the free space a download leaves on the disk: the store
// (audit trail, whose intents every call needs), logs and the system go on
// working beside a model that almost fills the SD card.
const DefaultReserve = 64 << 20

// MaxSize bounds the size a server may announce: no model a board runs comes
// near it, and a bogus Content-Length must not pass for a plan.
const MaxSize = 64 << 30

// spaceCheckEvery is how many bytes are written between two free-space checks:
// something else may be filling the disk while the model downloads.
var spaceCheckEvery int64 = 8 << 20

// MaxRedirects is how many redirects a download follows: Hugging Face's resolve
// URLs answer 302 to a CDN.
const MaxRedirects = 10

// Errors Download returns (wrapped); test with errors.Is.
var (
	ErrExists   = errors.New("already installed")
	ErrBusy     = errors.New("another download of this file is running")
	ErrChecksum = errors.New("sha256 mismatch")
	ErrSize     = errors.New("size mismatch")
	ErrNotGGUF  = errors.New("not a GGUF model file")
	ErrStalled  = errors.New("no data received")
	ErrNoSpace  = errors.New("not enough free disk space")
	ErrTooLarge = errors.New("implausibly large")
)

// Request says what to download, where to, and how to check it.
type Request struct {
	URL  string
	Dir  string // the models folder; created if missing
	File string // the file name in Dir (no folders)
	// Size is the expected size in bytes; 0 when unknown (then the server's
	// Content-Length, if it sends one, is checked instead).
	Size int64
	// SHA256 is the expected sum in hex; "" downloads without verifying the
	// content (Result.Verified is false).
	SHA256 string
	// Client makes the requests; nil means NewClient().
	Client *http.Client
	// IdleTimeout fails a download that receives nothing for this long;
	// 0 means DefaultIdleTimeout.
	IdleTimeout time.Duration
	UserAgent   string
	// Progress, if set, is called as bytes arrive with the bytes on disk and
	// the total (-1 when unknown).
	Progress func(done, total int64)
	// Notify, if set, receives one-line notes: resuming, starting over.
	Notify func(msg string)
	// Replace downloads even if the file is installed; the new file replaces
	// it only once verified.
	Replace bool
	// Reserve is the free space to leave on the disk; 0 means DefaultReserve,
	// negative none.
	Reserve int64
	// FreeSpace says how many bytes may still be written in dir; nil means
	// DiskFree. A negative answer means unknown (nothing is checked).
	FreeSpace func(dir string) (int64, error)
}

// Result describes an installed file.
type Result struct {
	Path     string
	Size     int64
	SHA256   string
	Verified bool  // the sum matched Request.SHA256
	Resumed  int64 // bytes reused from an earlier .part
}

// HTTPError is a response other than 200 or 206.
type HTTPError struct {
	URL        string
	StatusCode int
	Status     string
}

func (e *HTTPError) Error() string {
	return redact.String(fmt.Sprintf("GET %s: %s", e.URL, e.Status), urlSecrets(e.URL)...)
}

// urlSecrets are the values in u's query: a signed or private download URL
// carries its token there, and a server may echo it. They never appear in a
// message (internal/redact), the URL's own included.
func urlSecrets(u string) []string {
	p, err := url.Parse(u)
	if err != nil {
		return nil
	}
	var out []string
	for _, kv := range strings.Split(p.RawQuery, "&") {
		if _, v, ok := strings.Cut(kv, "="); ok {
			out = append(out, v)
			if d, err := url.QueryUnescape(v); err == nil && d != v {
				out = append(out, d)
			}
		}
	}
	return out
}

// shownURL is the URL as messages quote it: without its query's values.
func (d *download) shownURL() string { return redact.String(d.req.URL, urlSecrets(d.req.URL)...) }

// ChecksumError is a download whose sha256 is not the expected one. The
// downloaded bytes are discarded.
type ChecksumError struct{ Got, Want string }

func (e *ChecksumError) Error() string {
	return fmt.Sprintf("sha256 mismatch: got %s, want %s", e.Got, e.Want)
}
func (e *ChecksumError) Unwrap() error { return ErrChecksum }

// InterruptedError is a download that stopped part way (connection lost,
// timeout, Ctrl-C, disk full): the .part file is kept and the same request
// resumes it.
type InterruptedError struct {
	Part        string // "" when nothing arrived (and no .part is kept)
	Have, Total int64  // Total is -1 when unknown
	Err         error
	secrets     []string // the URL's (urlSecrets): Err may quote what the server sent
}

func (e *InterruptedError) Error() string {
	if e.Part == "" {
		return redact.String(fmt.Sprintf("download failed before any data arrived: %v", e.Err), e.secrets...)
	}
	of := ""
	if e.Total >= 0 {
		of = " of " + FormatBytes(e.Total)
	}
	return redact.String(fmt.Sprintf("download stopped at %s%s: %v; %s is kept: run the same command again to resume",
		FormatBytes(e.Have), of, e.Err, e.Part), e.secrets...)
}
func (e *InterruptedError) Unwrap() error { return e.Err }

// NoSpaceError is a download that does not fit, or no longer fits, on the disk
// with the reserve left free.
type NoSpaceError struct {
	Dir                 string
	Need, Free, Reserve int64 // Need: the bytes still to write, -1 when unknown
	Part                string
	PartKept, PartGone  bool // the partial download was kept (room to resume) or removed
	Have                int64
	Err                 error // the write's error (ENOSPC), if that is how it was found
}

func (e *NoSpaceError) Error() string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "not enough free space in %s: ", e.Dir)
	if e.Need >= 0 {
		fmt.Fprintf(&sb, "the model needs %s more", FormatBytes(e.Need))
	} else {
		sb.WriteString("the disk filled up")
	}
	fmt.Fprintf(&sb, " and %s stays free for clawedge's store and the system, but %s is free", FormatBytes(e.Reserve), FormatBytes(max(e.Free, 0)))
	if e.Err != nil {
		fmt.Fprintf(&sb, " (%v)", e.Err)
	}
	switch {
	case e.PartGone:
		fmt.Fprintf(&sb, "; the partial download (%s) was removed so that the disk is not left full", FormatBytes(e.Have))
	case e.PartKept:
		fmt.Fprintf(&sb, "; %s is kept: free some space and run the same command to resume", e.Part)
	}
	return sb.String()
}
func (e *NoSpaceError) Unwrap() error { return ErrNoSpace }

// NewClient is an HTTP client for downloads (internal/httpclient's: proxies
// from the environment, bounded connection set-up), following MaxRedirects
// redirects, with no overall timeout: a model takes as long as it takes, and
// Request.IdleTimeout catches a stalled one.
func NewClient() *http.Client {
	return httpclient.New(httpclient.Options{Redirects: MaxRedirects})
}

// Get sends a GET for a download: the bytes as the server has them (no
// compression, so that a Range's offsets are the file's), header fields kv
// (name, value, ...), the whole exchange failing with ErrStalled once nothing
// arrives for idle. The response's Body stops the clock when closed.
func Get(ctx context.Context, c *http.Client, url, userAgent string, idle time.Duration, kv ...string) (*http.Response, error) {
	ctx, cancel := context.WithCancelCause(ctx)
	req, err := http.NewRequestWithContext(ctx, "GET", url, nil)
	if err != nil {
		cancel(nil)
		return nil, fmt.Errorf("bad URL: %w", err)
	}
	req.Header.Set("User-Agent", userAgent)
	req.Header.Set("Accept-Encoding", "identity")
	for i := 0; i+1 < len(kv); i += 2 {
		req.Header.Set(kv[i], kv[i+1])
	}
	stall := func() { cancel(fmt.Errorf("%w for %s", ErrStalled, idle)) }
	t := time.AfterFunc(idle, stall)
	resp, err := httpclient.Do(c, req)
	t.Stop()
	if err != nil {
		err = stalled(ctx, err)
		cancel(nil)
		return nil, err
	}
	resp.Body = &stallBody{ctx: ctx, r: httpclient.IdleReader(resp.Body, idle, stall), c: resp.Body, cancel: cancel}
	return resp, nil
}

// stalled is err, or the stall that caused it.
func stalled(ctx context.Context, err error) error {
	if cause := context.Cause(ctx); errors.Is(cause, ErrStalled) {
		return cause
	}
	return err
}

// stallBody is a download's body: its read errors say when a stall caused them.
type stallBody struct {
	ctx    context.Context
	r      io.Reader
	c      io.Closer
	cancel context.CancelCauseFunc
}

func (b *stallBody) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	if err != nil && err != io.EOF {
		err = stalled(b.ctx, err)
	}
	return n, err
}

func (b *stallBody) Close() error {
	err := b.c.Close()
	b.cancel(nil)
	return err
}

// CheckFileName refuses names that are not a plain file name.
func CheckFileName(name string) error {
	switch {
	case name == "", name == ".", name == "..":
		return fmt.Errorf("file name %q: empty or a folder", name)
	case strings.ContainsAny(name, `/\`), strings.ContainsRune(name, 0):
		return fmt.Errorf("file name %q: must not contain a path separator", name)
	case strings.HasPrefix(name, "."):
		return fmt.Errorf("file name %q: must not start with a dot", name)
	case strings.HasSuffix(name, PartSuffix):
		return fmt.Errorf("file name %q: must not end in %s", name, PartSuffix)
	}
	return nil
}

// ParseSHA256 checks and lowercases a hex sha256 sum.
func ParseSHA256(s string) (string, error) {
	s = strings.ToLower(strings.TrimSpace(s))
	if b, err := hex.DecodeString(s); err != nil || len(b) != sha256.Size {
		return "", fmt.Errorf("sha256 %q: want 64 hex digits", s)
	}
	return s, nil
}

// Download fetches req.URL into req.Dir/req.File through a .part file,
// resuming one left by an earlier attempt, and installs it only once size,
// sha256 (if given) and GGUF header check out. An interrupted download
// returns an *InterruptedError and keeps the .part; a wrong size, sum or
// format removes it.
func Download(ctx context.Context, req Request) (*Result, error) {
	if err := CheckFileName(req.File); err != nil {
		return nil, err
	}
	if req.SHA256 != "" {
		sum, err := ParseSHA256(req.SHA256)
		if err != nil {
			return nil, err
		}
		req.SHA256 = sum
	}
	if req.Client == nil {
		req.Client = NewClient()
	}
	if req.IdleTimeout <= 0 {
		req.IdleTimeout = DefaultIdleTimeout
	}
	if req.UserAgent == "" {
		req.UserAgent = "clawedge"
	}
	if req.Reserve == 0 {
		req.Reserve = DefaultReserve
	}
	if req.FreeSpace == nil {
		req.FreeSpace = DiskFree
	}
	if req.Size > MaxSize {
		return nil, fmt.Errorf("%s: size %d bytes: %w (at most %s)", req.File, req.Size, ErrTooLarge, FormatBytes(MaxSize))
	}
	target := filepath.Join(req.Dir, req.File)
	if _, err := os.Lstat(target); err == nil {
		if !req.Replace {
			return nil, fmt.Errorf("%s: %w", target, ErrExists)
		}
	} else if !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	if err := os.MkdirAll(req.Dir, 0o755); err != nil {
		return nil, err
	}
	d := &download{req: req, target: target, part: target + PartSuffix, h: sha256.New(), total: -1}
	if req.Size > 0 {
		// Before anything is created: a model that cannot fit leaves nothing
		// behind (a .part of an earlier attempt counts as already written).
		if fi, err := os.Stat(d.part); err == nil && fi.Size() <= req.Size {
			d.have = fi.Size()
		}
		err := d.checkSpace(req.Size, nil)
		if e, ok := err.(*NoSpaceError); ok && d.have > 0 {
			e.Part, e.PartKept = d.part, true
		}
		if err != nil {
			return nil, err
		}
		d.have = 0
	}
	if req.Size > 0 {
		d.total = req.Size
	}
	f, err := os.OpenFile(d.part, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, err
	}
	d.f = f
	defer func() {
		if d.f != nil {
			d.f.Close()
		}
	}()
	if err := lockFile(f); err != nil {
		if errors.Is(err, ErrBusy) {
			return nil, fmt.Errorf("%s: %w", d.part, ErrBusy)
		}
		return nil, fmt.Errorf("locking %s: %w", d.part, err)
	}
	return d.run(ctx)
}

type download struct {
	req          Request
	target, part string
	f            *os.File
	h            hash.Hash
	have, total  int64 // bytes in the .part (all hashed); expected size or -1
	resumed      int64
}

func (d *download) notify(format string, args ...any) {
	if d.req.Notify != nil {
		d.req.Notify(fmt.Sprintf(format, args...))
	}
}

// discard removes the .part after a failed check: its bytes are wrong.
func (d *download) discard(err error) (*Result, error) {
	d.f.Close()
	d.f = nil
	os.Remove(d.part)
	return nil, err
}

// restart empties the .part.
func (d *download) restart() error {
	if err := d.f.Truncate(0); err != nil {
		return err
	}
	if _, err := d.f.Seek(0, io.SeekStart); err != nil {
		return err
	}
	d.h.Reset()
	d.have, d.resumed = 0, 0
	return nil
}

func (d *download) run(ctx context.Context) (*Result, error) {
	// Hash what an earlier attempt left: the sum covers the whole file.
	n, err := io.Copy(d.h, d.f)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", d.part, err)
	}
	d.have, d.resumed = n, n
	if d.total >= 0 && d.have > d.total {
		d.notify("%s is larger than the expected %s: starting over", d.part, FormatBytes(d.total))
		if err := d.restart(); err != nil {
			return nil, err
		}
	}
	if d.have > 0 {
		d.notify("resuming at %s", FormatBytes(d.have))
	}
	if d.total < 0 || d.have < d.total {
		if err := d.fetch(ctx); err != nil {
			var nse *NoSpaceError
			if errors.As(err, &nse) {
				return d.noSpace(nse)
			}
			var ie *InterruptedError
			if errors.As(err, &ie) || errors.As(err, new(*HTTPError)) {
				if d.have == 0 {
					if ie != nil {
						ie.Part = ""
					}
					return d.discard(err) // nothing worth keeping
				}
				d.f.Sync() // keep what arrived for the next attempt
				return nil, err
			}
			return d.discard(err)
		}
	}
	return d.install()
}

// fetch requests the bytes from d.have on and appends them to the .part.
func (d *download) fetch(ctx context.Context) error {
	interrupted := func(err error) error {
		if !errors.Is(err, ErrStalled) {
			if cause := context.Cause(ctx); cause != nil {
				err = cause
			}
		}
		return &InterruptedError{Part: d.part, Have: d.have, Total: d.total, Err: err, secrets: urlSecrets(d.req.URL)}
	}

	var resp *http.Response
	for attempt := 0; ; attempt++ {
		var rng []string
		if d.have > 0 {
			// Kept across redirects: the CDN serves the range.
			rng = []string{"Range", fmt.Sprintf("bytes=%d-", d.have)}
		}
		var err error
		resp, err = Get(ctx, d.req.Client, d.req.URL, d.req.UserAgent, d.req.IdleTimeout, rng...)
		if err != nil {
			return interrupted(err)
		}
		retry := false
		switch {
		case resp.StatusCode == 206 && d.have > 0:
			start, total, ok := parseContentRange(resp.Header.Get("Content-Range"))
			if !ok || start != d.have {
				d.notify("server answered the range request from byte %d, not %d: starting over", start, d.have)
				retry = true
				break
			}
			if err := d.checkTotal(total); err != nil {
				resp.Body.Close()
				return err
			}
		case resp.StatusCode == 200:
			if d.have > 0 {
				d.notify("server does not resume downloads (it ignored the range request): starting over")
				if err := d.restart(); err != nil {
					resp.Body.Close()
					return err
				}
			}
			if resp.ContentLength >= 0 {
				if err := d.checkTotal(resp.ContentLength); err != nil {
					resp.Body.Close()
					return err
				}
			}
		case resp.StatusCode == 416 && d.have > 0:
			d.notify("server refused to resume at %s: starting over", FormatBytes(d.have))
			retry = true
		default:
			resp.Body.Close()
			return &HTTPError{URL: d.req.URL, StatusCode: resp.StatusCode, Status: redact.Clip(resp.Status, 100)}
		}
		if !retry {
			break
		}
		resp.Body.Close()
		if attempt > 0 {
			return fmt.Errorf("GET %s: the server does not serve consistent ranges", d.shownURL())
		}
		if err := d.restart(); err != nil {
			return err
		}
	}
	defer resp.Body.Close()

	buf := make([]byte, 256<<10)
	for {
		n, rerr := resp.Body.Read(buf)
		if n > 0 {
			if d.total >= 0 && d.have+int64(n) > d.total {
				return fmt.Errorf("%w: the server sent more than the expected %s", ErrSize, FormatBytes(d.total))
			}
			if _, err := d.f.Write(buf[:n]); err != nil {
				if isNoSpace(err) {
					return &NoSpaceError{Err: err}
				}
				return &InterruptedError{Part: d.part, Have: d.have, Total: d.total, Err: err}
			}
			d.h.Write(buf[:n])
			d.have += int64(n)
			if d.have/spaceCheckEvery != (d.have-int64(n))/spaceCheckEvery {
				if err := d.checkSpace(d.total, &NoSpaceError{}); err != nil {
					return err
				}
			}
			if d.req.Progress != nil {
				d.req.Progress(d.have, d.total)
			}
		}
		if rerr == io.EOF {
			break
		}
		if rerr != nil {
			return interrupted(rerr)
		}
	}
	if d.total >= 0 && d.have < d.total {
		return interrupted(io.ErrUnexpectedEOF)
	}
	return nil
}

// checkTotal compares the size the server states with the expected one, with
// the sanity bound, and with the free space.
func (d *download) checkTotal(total int64) error {
	if total < 0 {
		return nil
	}
	if d.total >= 0 && total != d.total {
		return fmt.Errorf("%w: the server offers %d bytes, expected %d", ErrSize, total, d.total)
	}
	if total > MaxSize {
		return fmt.Errorf("GET %s: the server announces %d bytes: %w for a model (at most %s)", d.shownURL(), total, ErrTooLarge, FormatBytes(MaxSize))
	}
	if err := d.checkSpace(total, &NoSpaceError{}); err != nil {
		return err
	}
	d.total = total
	if d.req.Progress != nil {
		d.req.Progress(d.have, d.total)
	}
	return nil
}

// checkSpace fails when the rest of a total-byte file (total < 0: unknown, then
// nothing more) would leave less than the reserve free. tmpl, when not nil, is
// filled in and returned; nil gives an error before anything is on disk.
func (d *download) checkSpace(total int64, tmpl *NoSpaceError) error {
	if d.req.Reserve < 0 {
		return nil
	}
	free, err := d.req.FreeSpace(d.req.Dir)
	if err != nil || free < 0 {
		return nil // unknown: the write itself will tell (ENOSPC)
	}
	need := int64(0)
	if total >= 0 {
		need = max(total-d.have, 0)
	}
	if free-need >= d.req.Reserve {
		return nil
	}
	e := tmpl
	if e == nil {
		e = &NoSpaceError{}
	}
	e.Dir, e.Need, e.Free, e.Reserve = d.req.Dir, need, free, d.req.Reserve
	if total < 0 {
		e.Need = -1
	}
	return e
}

// noSpace ends a download that ran out of disk: its .part is kept only when
// there is room to resume it now, else it is removed, so a failed pull does not
// leave the disk full for the store (every call needs an audit intent written).
func (d *download) noSpace(e *NoSpaceError) (*Result, error) {
	e.Dir, e.Part, e.Have, e.Reserve, e.Need = d.req.Dir, d.part, d.have, d.req.Reserve, -1
	if d.total >= 0 {
		e.Need = d.total - d.have
	}
	free, err := d.req.FreeSpace(d.req.Dir)
	if err == nil {
		e.Free = free
	}
	if d.have > 0 && err == nil && d.total >= 0 && free-(d.total-d.have) >= d.req.Reserve {
		d.f.Sync()
		e.PartKept = true
		return nil, e
	}
	e.PartGone = d.have > 0
	return d.discard(e)
}

// install checks the complete .part and renames it into place.
func (d *download) install() (*Result, error) {
	if d.total >= 0 && d.have != d.total {
		return d.discard(fmt.Errorf("%w: %d bytes, expected %d", ErrSize, d.have, d.total))
	}
	sum := hex.EncodeToString(d.h.Sum(nil))
	if d.req.SHA256 != "" && sum != d.req.SHA256 {
		return d.discard(fmt.Errorf("%s: %w", d.shownURL(), &ChecksumError{Got: sum, Want: d.req.SHA256}))
	}
	if err := d.f.Sync(); err != nil {
		return nil, err
	}
	if _, err := gguf.Open(d.part); err != nil {
		return d.discard(fmt.Errorf("%s: %w: %v", d.shownURL(), ErrNotGGUF, err))
	}
	if err := d.f.Close(); err != nil {
		d.f = nil
		return nil, err
	}
	d.f = nil
	if err := atomicfile.Replace(d.part, d.target); err != nil {
		return nil, err
	}
	return &Result{Path: d.target, Size: d.have, SHA256: sum, Verified: d.req.SHA256 != "", Resumed: d.resumed}, nil
}

// parseContentRange reads "bytes START-END/TOTAL" (TOTAL may be "*", then -1).
func parseContentRange(s string) (start, total int64, ok bool) {
	rest, found := strings.CutPrefix(s, "bytes ")
	if !found {
		return 0, 0, false
	}
	rng, tot, found := strings.Cut(rest, "/")
	if !found {
		return 0, 0, false
	}
	first, _, found := strings.Cut(rng, "-")
	if !found {
		return 0, 0, false
	}
	start, err := strconv.ParseInt(strings.TrimSpace(first), 10, 64)
	if err != nil {
		return 0, 0, false
	}
	total = -1
	if tot = strings.TrimSpace(tot); tot != "*" {
		if total, err = strconv.ParseInt(tot, 10, 64); err != nil {
			return 0, 0, false
		}
	}
	return start, total, true
}

// FormatBytes renders a byte count in binary units: "469.6 MiB".
func FormatBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}
