//go:build ignore

// zoneinfo_gen writes zoneinfo.gz, the IANA zone database that LoadTimezone
// falls back to, from Go's own copy ($GOROOT/lib/time/zoneinfo.zip, the data
// of time/tzdata). Run it with `go generate ./config` after a Go upgrade;
// TestZoneinfoMatchesGo says when it is due.
//
// The format (zoneinfo.go reads it): gzip of an index, one "name offset
// length\n" line per zone, sorted, ended by an empty line, then the zone
// files, each distinct file once (many names are links to the same zone).
// 57 kB instead of time/tzdata's 408 kB.
package main

import (
	"archive/zip"
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
)

func main() {
	out, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		log.Fatal(err)
	}
	z, err := zip.OpenReader(filepath.Join(strings.TrimSpace(string(out)), "lib", "time", "zoneinfo.zip"))
	if err != nil {
		log.Fatal(err)
	}
	defer z.Close()
	files := map[string][]byte{}
	var names []string
	for _, f := range z.File {
		r, err := f.Open()
		if err != nil {
			log.Fatal(err)
		}
		b, err := io.ReadAll(r)
		if err != nil {
			log.Fatal(err)
		}
		files[f.Name] = b
		names = append(names, f.Name)
	}
	sort.Strings(names)
	var index, blobs bytes.Buffer
	at := map[string]int{} // file content -> offset in blobs
	for _, n := range names {
		b := files[n]
		off, ok := at[string(b)]
		if !ok {
			off = blobs.Len()
			at[string(b)] = off
			blobs.Write(b)
		}
		fmt.Fprintf(&index, "%s %d %d\n", n, off, len(b))
	}
	index.WriteByte('\n')
	var gz bytes.Buffer
	w, _ := gzip.NewWriterLevel(&gz, gzip.BestCompression)
	w.Write(index.Bytes())
	w.Write(blobs.Bytes())
	if err := w.Close(); err != nil {
		log.Fatal(err)
	}
	if err := os.WriteFile("zoneinfo.gz", gz.Bytes(), 0o644); err != nil {
		log.Fatal(err)
	}
	log.Printf("zoneinfo.gz: %d zones, %d distinct, %d bytes", len(names), len(at), gz.Len())
}
