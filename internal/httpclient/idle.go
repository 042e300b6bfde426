package httpclient

import (
	"io"
	"time"
)

// IdleReader returns r whose every Read must return within d: a Read that
// takes longer calls expire (once per stalled Read). expire usually cancels
// the request's context, which closes the connection and so ends the Read at
// once. The clock runs only while a Read waits, not while the caller works on
// what it read.
func IdleReader(r io.Reader, d time.Duration, expire func()) io.Reader {
	t := time.AfterFunc(time.Hour, expire)
	t.Stop()
	return &idleReader{r: r, d: d, t: t}
}

type idleReader struct {
	r io.Reader
	d time.Duration
	t *time.Timer
}

func (b *idleReader) Read(p []byte) (int, error) {
	b.t.Reset(b.d)
	n, err := b.r.Read(p)
	b.t.Stop()
	return n, err
}
