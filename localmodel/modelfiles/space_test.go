package modelfiles

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/clawedge/clawedge/internal/disktest"
)

// freeAfter is a disk whose free space is given per call of FreeSpace (the
// last value repeats): what a nearly full SD card, or one that something else
// is filling, looks like to a download.
func freeAfter(values ...int64) func(string) (int64, error) {
	i := 0
	return func(string) (int64, error) {
		v := values[min(i, len(values)-1)]
		i++
		return v, nil
	}
}

// A model that does not fit with the reserve is refused before anything is
// downloaded or created.
func TestDownloadRefusesWhatDoesNotFit(t *testing.T) {
	data := tinyGGUF(t)
	fs, url := serve(t, data)
	dir := t.TempDir()
	req := request(url, dir, data)
	req.Reserve = 1 << 20
	req.FreeSpace = freeAfter(int64(len(data)) + 1<<20 - 1)
	_, err := Download(context.Background(), req)
	var nse *NoSpaceError
	if !errors.As(err, &nse) || !errors.Is(err, ErrNoSpace) || !strings.Contains(err.Error(), "1.0 MiB stays free") {
		t.Fatalf("err %v", err)
	}
	if len(fs.seen()) != 0 {
		t.Error("the download started anyway")
	}
	assertNothing(t, dir)

	// Unknown size: the server's Content-Length is checked against the disk.
	req.Size, req.FreeSpace = 0, freeAfter(int64(len(data))+1<<20-1)
	if _, err := Download(context.Background(), req); !errors.Is(err, ErrNoSpace) {
		t.Fatalf("announced size that does not fit: %v", err)
	}
	assertNothing(t, dir)

	req.FreeSpace = freeAfter(int64(len(data)) + 1<<20)
	if _, err := Download(context.Background(), req); err != nil {
		t.Fatalf("what fits exactly: %v", err)
	}
	assertInstalled(t, dir, data)
}

// A server announcing an absurd size is refused at once.
func TestDownloadRefusesAbsurdSize(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "1099511627776") // 1 TiB
		w.WriteHeader(http.StatusOK)
		w.Write([]byte("GGUF"))
	}))
	defer srv.Close()
	dir := t.TempDir()
	_, err := Download(context.Background(), Request{URL: srv.URL + "/m.gguf", Dir: dir, File: "m.gguf", FreeSpace: freeAfter(1 << 50)})
	if !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), "1099511627776 bytes") {
		t.Fatalf("err %v", err)
	}
	assertNothing(t, dir)
	if _, err := Download(context.Background(), Request{URL: srv.URL + "/m.gguf", Dir: dir, File: "m.gguf", Size: MaxSize + 1}); !errors.Is(err, ErrTooLarge) {
		t.Errorf("absurd expected size: %v", err)
	}
}

// The disk fills while the model downloads: the download stops before the
// reserve is used, and removes its .part unless there is room to resume.
func TestDownloadStopsWhenDiskFills(t *testing.T) {
	defer func(v int64) { spaceCheckEvery = v }(spaceCheckEvery)
	spaceCheckEvery = 16 << 10
	data := tinyGGUF(t)
	_, url := serve(t, data)
	plenty := int64(1 << 30)

	dir := t.TempDir()
	req := request(url, dir, data)
	// Before, at the headers, then full from the first check on.
	req.FreeSpace = freeAfter(plenty, plenty, 1<<10)
	_, err := Download(context.Background(), req)
	var nse *NoSpaceError
	if !errors.As(err, &nse) || !nse.PartGone || !strings.Contains(err.Error(), "was removed so that the disk is not left full") {
		t.Fatalf("err %v", err)
	}
	assertNothing(t, dir)

	// Space came back by the time the download stopped: keep the .part.
	req.FreeSpace = freeAfter(plenty, plenty, 1<<10, plenty)
	_, err = Download(context.Background(), req)
	if !errors.As(err, &nse) || !nse.PartKept || !strings.Contains(err.Error(), "is kept: free some space and run the same command to resume") {
		t.Fatalf("err %v", err)
	}
	if fi, err := os.Stat(filepath.Join(dir, "tiny.gguf.part")); err != nil || fi.Size() == 0 {
		t.Fatalf(".part: %v", err)
	}
	req.FreeSpace = freeAfter(plenty)
	res, err := Download(context.Background(), req)
	if err != nil || res.Resumed == 0 {
		t.Fatalf("resume: %+v, %v", res, err)
	}
	assertInstalled(t, dir, data)
}

// A real ENOSPC (the free-space probe said there was room): the .part goes.
func TestDownloadRealDiskFull(t *testing.T) {
	data := tinyGGUF(t)
	_, url := serve(t, data)
	dir := disktest.Small(t, "32k")
	req := request(url, dir, data)
	lies := 2
	req.FreeSpace = func(d string) (int64, error) {
		if lies > 0 {
			lies--
			return 1 << 30, nil
		}
		return DiskFree(d)
	}
	_, err := Download(context.Background(), req)
	var nse *NoSpaceError
	if !errors.As(err, &nse) || !errors.Is(nse.Err, syscall.ENOSPC) || !nse.PartGone {
		t.Fatalf("err %v", err)
	}
	assertNothing(t, dir)
}
